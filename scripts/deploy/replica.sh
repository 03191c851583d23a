#!/bin/sh
# The entrypoint of docker-compose's db-replica (the postgres image, run as its postgres user). On the
# first start it copies the primary with pg_basebackup -R, which writes standby.signal and
# primary_conninfo, so the copy runs as a streaming hot standby
# (https://www.postgresql.org/docs/15/app-pgbasebackup.html); then it runs the server with the
# arguments given. The copy is made beside PGDATA and moved into place once complete: an interrupted
# copy is made again on the next start, never started half-made.
#
# The copy streams through a physical replication slot of its own on the primary, made with it
# (--create-slot; -R names it in primary_slot_name), so the primary keeps the WAL the replica has not
# received yet: one that was disconnected, or stopped, catches up by itself once it can reach the
# primary again (https://www.postgresql.org/docs/15/warm-standby.html#STREAMING-REPLICATION-SLOTS).
# The primary keeps at most max_slot_wal_keep_size of it (set by the stack, stack/database.ts).
# Past that cap, at its next checkpoint, the primary gives up the slot ("lost") and removes the WAL:
# the replica can no longer stream (health says it is not streaming) until it is started again. On
# every start this script asks the primary about the slot (pg_replication_slots,
# https://www.postgresql.org/docs/15/view-pg-replication-slots.html), and when the primary says the
# slot is lost, or has none of that name (a copy from before slots, or a primary made anew), it moves the
# copy aside to PGDATA.lost, copies the primary again with a new slot, and removes the old copy once
# the new one is in place. A primary it cannot reach leaves the copy as it is: it starts and streams
# once the primary is back.
#   PRIMARY_HOST, PRIMARY_PORT (5432)  the primary
#   PGPASSWORD                         the password of stats_replicator, the role it streams as
#   PGDATA                             where the replica's cluster lives
#   REPLICA_SLOT (db_replica)          its slot's name on the primary (lower case, digits, _): one
#                                      per replica, since a slot keeps the position of one
set -eu
: "${PRIMARY_HOST:?set PRIMARY_HOST to the primary's host name}"
: "${PGDATA:?set PGDATA to the replica's cluster directory}"
REPLICA_SLOT="${REPLICA_SLOT:-db_replica}"
case "$REPLICA_SLOT" in *[!a-z0-9_]*) echo "db-replica: REPLICA_SLOT may hold lower-case letters, digits and _ only." >&2; exit 2 ;; esac
PRIMARY_PORT="${PRIMARY_PORT:-5432}"
primary="host=$PRIMARY_HOST port=$PRIMARY_PORT user=stats_replicator"

# What the primary says of the slot: "kept" (it holds the slot's WAL, or held it until just now),
# "lost" (given up at the cap: its WAL is gone), "missing", or nothing when it cannot be asked. Read
# from pg_replication_slots' wal_status over an ordinary connection: the slot's position alone cannot
# tell, for a replica that reconnects to a lost slot hands it a position again.
slot_state() {
  if ! status=$(psql "$primary dbname=postgres" --no-psqlrc --no-align --tuples-only \
    --command="select coalesce(wal_status, 'none') from pg_catalog.pg_replication_slots where slot_name = '$REPLICA_SLOT'" 2>&1); then
    echo "db-replica: could not ask the primary about the slot $REPLICA_SLOT: $status" | head -n 1 >&2
    return 0
  fi
  case "$status" in
    lost|none) echo lost ;;
    '') echo missing ;;
    *) echo kept ;;
  esac
}

if [ -s "$PGDATA/PG_VERSION" ]; then
  state=$(slot_state)
  if [ "$state" = lost ] || [ "$state" = missing ]; then
    echo "db-replica: the primary has $state the slot $REPLICA_SLOT, so this copy cannot catch up; moving it aside to copy the primary again."
    rm -rf "$PGDATA.lost"
    mv "$PGDATA" "$PGDATA.lost"
  fi
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  echo "db-replica: copying the primary ${PRIMARY_HOST}:${PRIMARY_PORT} with pg_basebackup into the slot $REPLICA_SLOT …"
  rm -rf "$PGDATA.partial"
  # A slot of that name left by an earlier copy (lost, or made by a copy cut short) makes way; one a
  # running replica streams through cannot be dropped, and stops the start here.
  case "$(slot_state)" in
    kept|lost) pg_receivewal --host="$PRIMARY_HOST" --port="$PRIMARY_PORT" --username=stats_replicator --no-password \
      --drop-slot --slot="$REPLICA_SLOT" ;;
  esac
  pg_basebackup --host="$PRIMARY_HOST" --port="$PRIMARY_PORT" --username=stats_replicator --no-password \
    --pgdata="$PGDATA.partial" --write-recovery-conf --wal-method=stream --checkpoint=fast \
    --create-slot --slot="$REPLICA_SLOT"
  # An empty PGDATA makes way; one holding anything else stops the start here.
  if [ -d "$PGDATA" ]; then rmdir "$PGDATA"; fi
  mv "$PGDATA.partial" "$PGDATA"
  rm -rf "$PGDATA.lost"
  echo "db-replica: copied; starting as a standby."
fi
exec postgres "$@"
