-- How far a read replica's data trails its primary, in whole seconds (rounded down), from what
-- Postgres' recovery functions report
-- (https://www.postgresql.org/docs/15/functions-admin.html#FUNCTIONS-RECOVERY-INFO-TABLE):
--   * everything received from the primary has been replayed: 0. The age of the last replayed commit
--     is not the figure then, because on an idle primary it grows with no lag at all.
--   * WAL received but not yet replayed (replay paused, or slower than the primary): the age of the
--     last replayed transaction's commit (or abort), stamped with the primary's clock, at p_now on
--     the replica's. The data is at most that old: an upper bound, since what is still to replay is
--     newer. So a check that falls in the moment between a commit's arrival and its replay, after a
--     quiet spell, reads the whole quiet spell.
--   * behind with no transaction replayed since the server started: null (unknown).
-- What a replica has not received cannot show here: one cut off from its primary replays what it
-- holds and says 0; the writer's heartbeat and the data's own age, which health also reports, then
-- grow old. A skew between the two machines' clocks is read as lag (never below 0).
create function stats.replica_lag_seconds(p_now timestamptz, p_received pg_lsn, p_replayed pg_lsn, p_replayed_commit_at timestamptz)
returns integer
language sql immutable set search_path = '' as $$
  select case
    when p_received is not null and p_replayed >= p_received then 0
    when p_replayed_commit_at is null then null
    else floor(greatest(extract(epoch from p_now - p_replayed_commit_at), 0))::integer
  end
$$;
alter function stats.replica_lag_seconds(timestamptz, pg_lsn, pg_lsn, timestamptz) owner to stats_owner;
grant execute on function stats.replica_lag_seconds(timestamptz, pg_lsn, pg_lsn, timestamptz) to stats_writer;
