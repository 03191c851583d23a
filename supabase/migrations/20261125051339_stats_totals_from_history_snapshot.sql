-- The stats record's totals (sum, best and worst night since since_date) are kept in the history
-- snapshot beside the nights they sum, instead of read from every night on every call.
alter table "stats"."history_snapshot" add column "best_day_usd" numeric;

alter table "stats"."history_snapshot" add column "total_usd" numeric;

alter table "stats"."history_snapshot" add column "worst_day_usd" numeric;

set check_function_bodies = off;

CREATE OR REPLACE FUNCTION stats.payout_figures(p_now timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
declare
  today date := (p_now at time zone 'UTC')::date;
  last_night stats.payout;
  v_daily json;
  v_since date;
  v_total numeric;
  v_best numeric;
  v_worst numeric;
  v_snapshot_at timestamptz;
begin
  select * into last_night from stats.payout where date <= today order by date desc limit 1;
  select json_agg(json_build_object('date', d.date, 'usd', round(d.usd, 2)) order by d.date)
    into v_daily
    from (select p.date, p.usd from stats.payout p where p.date <= today order by p.date desc limit 16) d;

  select h.computed_at, h.since_date, h.total_usd, h.best_day_usd, h.worst_day_usd
    into v_snapshot_at, v_since, v_total, v_best, v_worst from stats.history_snapshot h;
  if v_snapshot_at is null or v_snapshot_at > p_now or exists (select from stats.payout p
      where p.date > (v_snapshot_at at time zone 'UTC')::date and p.date <= today) then
    v_since := stats.since_date(today);
    select sum(p.usd), max(p.usd), min(p.usd) into v_total, v_best, v_worst
      from stats.payout p where p.date >= v_since and p.date <= today;
  end if;

  return json_build_object(
    'daily', coalesce(v_daily, '[]'::json),
    'last_night_usd', round(last_night.usd, 2),
    'last_night_date', last_night.date,
    'total_usd', round(v_total, 2),
    'since_date', v_since,
    'best_day_usd', round(v_best, 2),
    'worst_day_usd', round(v_worst, 2));
end $function$
;

CREATE OR REPLACE FUNCTION stats.refresh_history_snapshot()
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO ''
AS $function$
declare
  -- The wall clock, not the transaction's start: a reader whose now() is later sees every row this
  -- transaction wrote.
  at timestamptz := clock_timestamp();
  today date := (at at time zone 'UTC')::date;
  since date := stats.since_date(today);
begin
  insert into stats.history_snapshot (id, since_date, nights, computed_at, total_usd, best_day_usd, worst_day_usd)
    select true, since, stats.history_nights(at, since), at, sum(p.usd), max(p.usd), min(p.usd)
      from stats.payout p where p.date >= since and p.date <= today
    on conflict (id) do update set since_date = excluded.since_date, nights = excluded.nights, computed_at = excluded.computed_at,
      total_usd = excluded.total_usd, best_day_usd = excluded.best_day_usd, worst_day_usd = excluded.worst_day_usd;
end $function$
;

grant select on table "stats"."history_snapshot" to "stats_writer";

-- A snapshot made before this migration has no totals: make it again, so the stats record reads them.
select stats.refresh_history_snapshot() where exists (select from stats.history_snapshot);
