# The image of docker-compose's "ha" profile (pg-monitor, pg-node1, pg-node2): the Postgres image db
# runs, with pg_auto_failover 2 from the PostgreSQL apt repository (apt.postgresql.org) the image
# already reads from. The server package is held, so the extension never brings a second minor of
# Postgres along; an extension that needs one fails the build instead.
FROM postgres:15.18-bookworm
RUN apt-mark hold postgresql-15 \
 && apt-get update \
 && apt-get install -y --no-install-recommends 'pg-auto-failover-cli=2.*' 'postgresql-15-auto-failover=2.*' \
 && rm -rf /var/lib/apt/lists/*
