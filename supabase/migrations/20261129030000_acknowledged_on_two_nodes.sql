-- A database that fails over by itself (pg_auto_failover) acknowledges a commit on its primary alone
-- while its standby is away (wait_primary), and may promote a standby that trails it. The writer now
-- signs, sends to witnesses and acknowledges only what a standby that can take over has flushed:
-- stats.failover_node() says whether this server is such a node, stats.standby_flush_lsn() how far
-- such a standby has flushed; health says "written on one node, waiting for a standby" (log.waiting,
-- "degraded") while none streams. And a witness policy that names no witness (quorum none) records
-- its rounds, with 0 witnesses.

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

alter table stats.log_witness_round drop constraint log_witness_round_witnesses_check;
alter table stats.log_witness_round add constraint log_witness_round_witnesses_check check (witnesses >= 0);

create or replace function stats.health_at(p_now timestamptz) returns json
language plpgsql stable set search_path = '' set plan_cache_mode = force_generic_plan as $$
declare
  cfg stats.settings;
  today date := (p_now at time zone 'UTC')::date;
  v_payout date;
  v_payout_age integer;
  v_accrual timestamptz;
  v_accrual_age integer;
  v_heartbeat timestamptz;
  v_writer text;
  v_fresh boolean;
  v_accrual_fresh boolean;
  v_alive boolean;
  v_replica boolean := pg_is_in_recovery();
  v_replica_lag integer;
  v_streaming boolean;
  v_log_size bigint := stats.log_size();
  v_round stats.log_witness_round;
  v_policy stats.log_policy;
  v_halt stats.log_halt;
  v_quorum_at timestamptz;
  v_log_ok boolean;
  v_waiting text;
begin
  select * into cfg from stats.settings;
  select max(p.date) into v_payout from stats.payout p where p.date <= today;
  select max(a.observed_at) into v_accrual from stats.accrual a where a.observed_at <= p_now;
  select h.at, h.writer into v_heartbeat, v_writer from stats.heartbeat h where h.at <= p_now order by h.at desc limit 1;

  v_payout_age := today - v_payout;
  v_accrual_age := floor(extract(epoch from p_now - v_accrual) / 60)::integer;
  select * into v_round from stats.log_witness_round r order by r.at desc limit 1;
  select * into v_policy from stats.log_policy p order by p.recorded_at desc limit 1;
  select * into v_halt from stats.log_halt h order by h.at desc limit 1;
  select max(r.at) into v_quorum_at from stats.log_witness_round r where r.quorum_met;
  if not v_replica and stats.failover_node() and stats.standby_flush_lsn() is null then
    v_waiting := 'written on one node, waiting for a standby';
  end if;
  v_log_ok := v_halt.at is null and v_waiting is null and (v_policy.policy is null
    or p_now - coalesce(v_quorum_at, v_policy.recorded_at) <= interval '26 hours');
  v_fresh := coalesce(v_payout_age <= cfg.payout_fresh_days, false);
  v_accrual_fresh := coalesce(v_accrual_age <= cfg.accrual_fresh_minutes, false);
  v_alive := coalesce(p_now - v_heartbeat < make_interval(mins => cfg.writer_alive_minutes), false);
  if v_replica then
    v_streaming := stats.wal_receiver_streaming();
    v_replica_lag := stats.replica_lag_seconds(p_now, v_streaming, pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn(), pg_last_xact_replay_timestamp());
  end if;

  return json_build_object(
    'status', case when v_fresh and v_accrual_fresh and v_alive and v_log_ok
      and (not v_replica or (v_streaming and coalesce(v_replica_lag <= cfg.replica_lag_max_seconds, false))) then 'ok' else 'degraded' end,
    'checked_at', stats.iso(p_now),
    'data', json_build_object(
      'last_payout_date', v_payout,
      'payout_age_days', v_payout_age,
      'fresh', v_fresh,
      'last_accrual_at', stats.iso(v_accrual),
      'accrual_age_minutes', v_accrual_age,
      'accrual_fresh', v_accrual_fresh,
      'replica_lag_seconds', v_replica_lag,
      'replica_streaming', v_streaming),
    'writer', json_build_object(
      'last_heartbeat_at', stats.iso(v_heartbeat),
      'alive', v_alive,
      'name', v_writer),
    'log', json_build_object(
      'size', v_log_size,
      'witnessed', v_policy.policy is not null,
      'witnesses', case when v_policy.policy is not null then v_round.witnesses end,
      'cosigned', case when v_policy.policy is not null then coalesce(cardinality(v_round.cosigned), 0) end,
      'checked_at', case when v_policy.policy is not null then stats.iso(v_round.at) end,
      'quorum_cosigned_at', case when v_policy.policy is not null then stats.iso(v_quorum_at) end,
      'halted', v_halt.reason,
      'waiting', v_waiting));
end $$;
alter function stats.health_at(timestamptz) owner to stats_owner;
grant execute on function stats.health_at(timestamptz) to stats_writer;
