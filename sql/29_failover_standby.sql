-- What a database that fails over by itself holds on more than one node. In such a group a commit the
-- primary acknowledges may be on the primary alone: pg_auto_failover makes a primary whose standby is
-- unhealthy asynchronous (wait_primary), and promotes a standby that trails its primary by up to a WAL
-- segment. The writer therefore signs, sends to witnesses and acknowledges only what a standby that can
-- take over has flushed (writer/replication.ts); these two functions are what it asks.

-- Whether this server is a node of a pg_auto_failover group: pg_autoctl creates its replication role,
-- pgautofailover_replicator (a fixed name, PG_AUTOCTL_REPLICA_USERNAME in
-- https://github.com/hapostgres/pg_auto_failover/blob/v2.0/src/bin/pg_autoctl/defaults.h), on the
-- group's first node, and every standby copies it.
-- A single server, or one with read replicas only, is not one, and keeps acknowledging its own commits.
create function stats.failover_node() returns boolean
language sql stable set search_path = '' as $$
  select exists (select from pg_catalog.pg_roles r where r.rolname = 'pgautofailover_replicator')
$$;
alter function stats.failover_node() owner to stats_owner;
grant execute on function stats.failover_node() to stats_writer;

-- The furthest WAL position a standby that can take over has flushed to disk: the highest flush_lsn
-- among the standbys streaming from this server that synchronous_standby_names lists (sync_state
-- sync, potential or quorum; https://www.postgresql.org/docs/15/monitoring-stats.html#MONITORING-PG-STAT-REPLICATION-VIEW).
-- Null when none does: a primary in wait_primary lists none (pg_autoctl empties the setting), and a
-- read replica or a backup's stream is never listed. Only a member of pg_read_all_stats sees the
-- positions, so the function runs as stats_monitor, like stats.wal_receiver_streaming().
create function stats.standby_flush_lsn() returns pg_lsn
language sql volatile security definer set search_path = '' as $$
  select max(r.flush_lsn) from pg_catalog.pg_stat_replication r
  where r.state = 'streaming' and r.sync_state in ('sync', 'potential', 'quorum')
$$;
alter function stats.standby_flush_lsn() owner to stats_monitor;
grant execute on function stats.standby_flush_lsn() to stats_owner, stats_writer;
