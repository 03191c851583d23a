-- Whether this server, a read replica, is streaming WAL from its primary now: its WAL receiver's status
-- is "streaming" (https://www.postgresql.org/docs/15/monitoring-stats.html#MONITORING-PG-STAT-WAL-RECEIVER-VIEW).
-- The receiver's pid alone is not enough: it also shows while the receiver connects ("starting"),
-- which is what one cut off from its primary does again every few seconds. Only a member of
-- pg_read_all_stats sees the status (every other role reads it null), and health runs as stats_owner
-- (landing_health is a definer function) or as the writer: so this one function runs as its owner,
-- stats_monitor, which may read the statistics and nothing else. A connection that dies without a word
-- still reads "streaming" until the receiver gives up on it, after wal_receiver_timeout (60 s by default).
create function stats.wal_receiver_streaming() returns boolean
language sql volatile security definer set search_path = '' as $$
  select exists (select from pg_catalog.pg_stat_wal_receiver w where w.status = 'streaming')
$$;
alter function stats.wal_receiver_streaming() owner to stats_monitor;
grant execute on function stats.wal_receiver_streaming() to stats_owner, stats_writer;

-- How far a read replica's data trails its primary, in whole seconds (rounded down), from whether it
-- streams from the primary and what Postgres' recovery functions report
-- (https://www.postgresql.org/docs/15/functions-admin.html#FUNCTIONS-RECOVERY-INFO-TABLE):
--   * streaming, and everything received has been replayed: 0. The age of the last replayed commit
--     is not the figure then, because on an idle primary it grows with no lag at all.
--   * otherwise (WAL received but not yet replayed, or no WAL coming in at all): the age of the last
--     replayed transaction's commit (or abort), stamped with the primary's clock, at p_now on the
--     replica's. The data is at most that old: an upper bound, since whatever the replica lacks is
--     newer. So a check that falls in the moment between a commit's arrival and its replay, after a
--     quiet spell, reads the whole quiet spell; and a replica cut off from an idle primary reads the
--     time since the primary's last commit, for it cannot know that nothing was written since.
--   * no transaction replayed since the server started, and not both streaming and caught up: null
--     (unknown).
-- A skew between the two machines' clocks is read as lag (never below 0).
create function stats.replica_lag_seconds(p_now timestamptz, p_streaming boolean, p_received pg_lsn, p_replayed pg_lsn, p_replayed_commit_at timestamptz)
returns integer
language sql immutable set search_path = '' as $$
  select case
    when p_streaming and p_received is not null and p_replayed >= p_received then 0
    when p_replayed_commit_at is null then null
    else floor(greatest(extract(epoch from p_now - p_replayed_commit_at), 0))::integer
  end
$$;
alter function stats.replica_lag_seconds(timestamptz, boolean, pg_lsn, pg_lsn, timestamptz) owner to stats_owner;
grant execute on function stats.replica_lag_seconds(timestamptz, boolean, pg_lsn, pg_lsn, timestamptz) to stats_writer;
