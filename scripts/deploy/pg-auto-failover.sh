#!/bin/sh
# The entrypoint of docker-compose's "ha" profile (scripts/deploy/pg-auto-failover.Dockerfile, run as
# its postgres user): `pg-auto-failover.sh monitor` runs the pg_auto_failover monitor,
# `pg-auto-failover.sh postgres` a Postgres node. Every start runs `pg_autoctl create … --run`, which
# creates the node on the first start, resumes a creation that was cut short, and otherwise just runs
# it (https://pg-auto-failover.readthedocs.io/en/v2.0/ref/pg_autoctl_create_postgres.html).
#   PGDATA              the cluster; pg_autoctl's configuration and state live beside it
#   PGAF_HOSTNAME       the name the other containers reach this one by (its service name)
#   PGAF_NAME           the node's name in the formation (nodes only)
#   PGAF_MONITOR_HOST   the monitor's host name (nodes only)
#   PGAF_INITDB         "true" on the node that starts the formation: it makes the cluster itself
#   POSTGRES_PASSWORD   the superuser's password, which pg_auto_failover's own roles share
#
# Client authentication is the mounted pg_hba.conf (hba_file), not pg_autoctl's (--skip-pg-hba, which
# pg_autoctl 2.0 refuses beside --auth; Postgres 15 stores passwords as scram-sha-256 by default):
# pg_autoctl writes host names into pg_hba.conf, and Postgres matches a host name by reverse DNS,
# which on a Docker network answers the container's name, not the service's. Every role logs in with
# scram-sha-256: autoctl_node (the nodes' calls to the monitor) and pgautofailover_replicator
# (replication and pg_rewind, a superuser) with POSTGRES_PASSWORD, found in a password file
# (https://pg-auto-failover.readthedocs.io/en/v2.0/security.html#authentication-with-passwords);
# pgautofailover_monitor's health checks count any answer, so they need no secret.
set -eu
kind=${1:?usage: pg-auto-failover.sh monitor|postgres}
: "${PGDATA:?set PGDATA to the cluster directory}"
: "${PGAF_HOSTNAME:?set PGAF_HOSTNAME to the name other containers reach this one by}"
: "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}"
home=$(dirname "$PGDATA")
# Beside the cluster, on the same volume: a container made again keeps the node's identity.
export XDG_CONFIG_HOME="$home/config" XDG_DATA_HOME="$home/share" PGPASSFILE="$home/pgpass"
hba=/etc/postgresql/pg_hba.conf
umask 077

# The password file libpq reads for pg_autoctl, pg_basebackup, pg_rewind and the standby's WAL
# receiver; written on every start, so a changed password holds for the client side at once.
# In a password file, ':' and '\' are escaped with '\' (https://www.postgresql.org/docs/15/libpq-pgpass.html).
escaped=$(printf '%s' "$POSTGRES_PASSWORD" | sed 's/[\\:]/\\&/g')
printf '*:*:*:autoctl_node:%s\n*:*:*:pgautofailover_replicator:%s\n' "$escaped" "$escaped" >"$PGPASSFILE"

# Makes the cluster of the monitor, or of the node that starts the formation, before pg_autoctl
# adopts it: our client authentication, and the roles' passwords set before any other container can
# connect. pg_autoctl creates these roles only when they are missing. Made beside PGDATA and moved into
# place once complete, so a start cut short makes it again.
bootstrap() {
  rm -rf "$PGDATA.init"
  initdb --pgdata="$PGDATA.init" --username=postgres --encoding=UTF8 --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  {
    echo "hba_file = '$hba'"
    # listen_addresses and port come from pg_autoctl's command line; a temporary server listens on no port.
    if [ "$kind" = monitor ]; then
      # The failover timing of the local high-availability mode (stack/ha-settings.ts): a primary
      # unhealthy for 10 s is failed over and the standby takes writes 20 s after the old primary was
      # told to demote; and no failover in the monitor's first 30 s, while the nodes of a restarted
      # stack come back (https://pg-auto-failover.readthedocs.io/en/v2.0/ref/configuration.html).
      echo "pgautofailover.node_considered_unhealthy_timeout = 10000"
      echo "pgautofailover.primary_demote_timeout = 20000"
      echo "pgautofailover.startup_grace_period = 30000"
    else
      # As stack/ha-settings.ts: a primary cut off silently notices its standby gone after 10 s, not
      # pg_autoctl's 30 s, and its keeper's partition clock starts then. The standby copies this file.
      echo "wal_sender_timeout = '10s'"
    fi
  } >>"$PGDATA.init/postgresql.conf"
  socket=$(mktemp -d)
  pg_ctl --pgdata="$PGDATA.init" --wait --silent --options="-c listen_addresses='' -c unix_socket_directories='$socket'" start
  if [ "$kind" = monitor ]; then role='autoctl_node with login'; else role='pgautofailover_replicator with login superuser replication'; fi
  psql --host="$socket" --username=postgres --dbname=postgres --no-psqlrc --quiet -v ON_ERROR_STOP=1 -v password="$POSTGRES_PASSWORD" <<SQL
alter role postgres with password :'password';
create role $role password :'password';
SQL
  pg_ctl --pgdata="$PGDATA.init" --wait --silent stop
  rmdir "$socket"
  # An empty PGDATA makes way; one holding anything else stops the start here.
  if [ -d "$PGDATA" ]; then rmdir "$PGDATA"; fi
  mv "$PGDATA.init" "$PGDATA"
}

created=false
if [ -f "$XDG_CONFIG_HOME/pg_autoctl$PGDATA/pg_autoctl.cfg" ]; then created=true; fi

case "$kind" in
  monitor)
    if [ "$created" = false ] && [ ! -s "$PGDATA/PG_VERSION" ]; then bootstrap; fi
    exec pg_autoctl create monitor --pgdata "$PGDATA" --pgport 5432 --hostname "$PGAF_HOSTNAME" \
      --skip-pg-hba --no-ssl --run
    ;;
  postgres)
    : "${PGAF_NAME:?set PGAF_NAME to the node's name}"
    : "${PGAF_MONITOR_HOST:?set PGAF_MONITOR_HOST to the monitor's host name}"
    # The other nodes start empty: pg_autoctl copies the primary with pg_basebackup, configuration
    # (hba_file among it) and roles included.
    if [ "$created" = false ] && [ "${PGAF_INITDB:-false}" = true ] && [ ! -s "$PGDATA/PG_VERSION" ]; then bootstrap; fi
    # --replication-quorum true: synchronous replication, pg_autoctl's synchronous_commit = on, so a
    # commit is acknowledged once the standby has flushed it, and a promoted standby holds it.
    # https://pg-auto-failover.readthedocs.io/en/v2.0/ref/pg_autoctl_create_postgres.html
    exec pg_autoctl create postgres --pgdata "$PGDATA" --pgport 5432 --listen '*' --hostname "$PGAF_HOSTNAME" \
      --name "$PGAF_NAME" --monitor "postgres://autoctl_node@$PGAF_MONITOR_HOST:5432/pg_auto_failover?sslmode=disable" \
      --username postgres --dbname postgres --skip-pg-hba --no-ssl \
      --replication-quorum true --run
    ;;
  *)
    echo "pg-auto-failover.sh: unknown kind '$kind' (monitor or postgres)" >&2
    exit 64
    ;;
esac
