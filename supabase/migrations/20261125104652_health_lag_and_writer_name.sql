-- landing_health with both the replica lag and the active writer's name: the two migrations before this
-- each replaced health_at without the other's field.
set check_function_bodies = off;

CREATE OR REPLACE FUNCTION stats.health_at(p_now timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
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
begin
  select * into cfg from stats.settings;
  select max(p.date) into v_payout from stats.payout p where p.date <= today;
  select max(a.observed_at) into v_accrual from stats.accrual a where a.observed_at <= p_now;
  select h.at, h.writer into v_heartbeat, v_writer from stats.heartbeat h where h.at <= p_now order by h.at desc limit 1;

  v_payout_age := today - v_payout;
  v_accrual_age := floor(extract(epoch from p_now - v_accrual) / 60)::integer;
  v_fresh := coalesce(v_payout_age <= cfg.payout_fresh_days, false);
  v_accrual_fresh := coalesce(v_accrual_age <= cfg.accrual_fresh_minutes, false);
  v_alive := coalesce(p_now - v_heartbeat < make_interval(mins => cfg.writer_alive_minutes), false);
  if v_replica then
    v_replica_lag := stats.replica_lag_seconds(p_now, pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn(), pg_last_xact_replay_timestamp());
  end if;

  return json_build_object(
    'status', case when v_fresh and v_accrual_fresh and v_alive
      and (not v_replica or coalesce(v_replica_lag <= cfg.replica_lag_max_seconds, false)) then 'ok' else 'degraded' end,
    'checked_at', stats.iso(p_now),
    'data', json_build_object(
      'last_payout_date', v_payout,
      'payout_age_days', v_payout_age,
      'fresh', v_fresh,
      'last_accrual_at', stats.iso(v_accrual),
      'accrual_age_minutes', v_accrual_age,
      'accrual_fresh', v_accrual_fresh,
      'replica_lag_seconds', v_replica_lag),
    'writer', json_build_object(
      'last_heartbeat_at', stats.iso(v_heartbeat),
      'alive', v_alive,
      'name', v_writer));
end $function$
;

