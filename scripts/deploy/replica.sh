#!/bin/sh
# The entrypoint of docker-compose's db-replica (the postgres image, run as its postgres user). On the
# first start it copies the primary with pg_basebackup -R, which writes standby.signal and
# primary_conninfo, so the copy runs as a streaming hot standby
# (https://www.postgresql.org/docs/15/app-pgbasebackup.html); then it runs the server with the
# arguments given. The copy is made beside PGDATA and moved into place once complete: an interrupted
# copy is made again on the next start, never started half-made.
#   PRIMARY_HOST, PRIMARY_PORT (5432)  the primary
#   PGPASSWORD                         the password of stats_replicator, the role it streams as
#   PGDATA                             where the replica's cluster lives
set -eu
: "${PRIMARY_HOST:?set PRIMARY_HOST to the primary's host name}"
: "${PGDATA:?set PGDATA to the replica's cluster directory}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  echo "db-replica: copying the primary ${PRIMARY_HOST}:${PRIMARY_PORT:-5432} with pg_basebackup …"
  rm -rf "$PGDATA.partial"
  pg_basebackup --host="$PRIMARY_HOST" --port="${PRIMARY_PORT:-5432}" --username=stats_replicator --no-password \
    --pgdata="$PGDATA.partial" --write-recovery-conf --wal-method=stream --checkpoint=fast
  # An empty PGDATA makes way; one holding anything else stops the start here.
  if [ -d "$PGDATA" ]; then rmdir "$PGDATA"; fi
  mv "$PGDATA.partial" "$PGDATA"
  echo "db-replica: copied; starting as a standby."
fi
exec postgres "$@"
