set check_function_bodies = off;

CREATE OR REPLACE FUNCTION stats.snapshot_holds(p_computed_at timestamp with time zone, p_valid_until timestamp with time zone, p_now timestamp with time zone)
 RETURNS boolean
 LANGUAGE sql
 STABLE
 SET search_path TO ''
AS $function$
  select p_computed_at is not null and p_now >= p_computed_at
    and (p_valid_until is null or p_now < p_valid_until) and not stats.figures_pending_here()
$function$
;

CREATE OR REPLACE FUNCTION stats.history_at(p_now timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
declare
  snapshot stats.history_snapshot;
begin
  select * into snapshot from stats.history_snapshot;
  if stats.snapshot_holds(snapshot.computed_at, snapshot.valid_until, p_now) then
    return snapshot.record;
  end if;
  return stats.history_record(p_now);
end $function$
;

CREATE OR REPLACE FUNCTION stats.payout_figures(p_now timestamp with time zone, OUT daily json, OUT last_night_usd numeric, OUT last_night_date date, OUT total_usd numeric, OUT since_date date, OUT best_day_usd numeric, OUT worst_day_usd numeric)
 RETURNS record
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
declare
  today date := (p_now at time zone 'UTC')::date;
  last_night stats.payout;
  v_snapshot_at timestamptz;
  v_valid_until timestamptz;
begin
  select * into last_night from stats.payout p where p.date <= today order by p.date desc limit 1;
  select coalesce(json_agg(json_build_object('date', d.date, 'usd', round(d.usd, 2)) order by d.date), '[]'::json)
    into daily
    from (select p.date, p.usd from stats.payout p where p.date <= today order by p.date desc limit 16) d;

  select h.computed_at, h.valid_until, h.since_date, h.total_usd, h.best_day_usd, h.worst_day_usd
    into v_snapshot_at, v_valid_until, since_date, total_usd, best_day_usd, worst_day_usd from stats.history_snapshot h;
  if not stats.snapshot_holds(v_snapshot_at, v_valid_until, p_now) then
    since_date := stats.since_date(today);
    select sum(p.usd), max(p.usd), min(p.usd) into total_usd, best_day_usd, worst_day_usd
      from stats.payout p where p.date >= payout_figures.since_date and p.date <= today;
  end if;

  last_night_usd := round(last_night.usd, 2);
  last_night_date := last_night.date;
  total_usd := round(total_usd, 2);
  best_day_usd := round(best_day_usd, 2);
  worst_day_usd := round(worst_day_usd, 2);
end $function$
;

CREATE OR REPLACE FUNCTION stats.stats_at(p_now timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
declare
  s stats.stats_snapshot;
  accrual record;
begin
  select * into s from stats.stats_snapshot;
  if not stats.snapshot_holds(s.computed_at, s.valid_until, p_now) then
    s := stats.stats_figures(p_now);
  end if;
  accrual := stats.accrual_figures(p_now, s.accrual);
  return json_build_object(
    'updated_at', stats.iso(s.updated_at),
    'daily', s.daily,
    'last_night_usd', s.last_night_usd,
    'last_night_date', s.last_night_date,
    'accrued_today_usd', accrual.accrued_today_usd,
    'accrued_today_markets', accrual.accrued_today_markets,
    'markets_quoted_24h', stats.breadth_figure(p_now, s.breadth),
    'total_usd', s.total_usd,
    'since_date', s.since_date,
    'best_day_usd', s.best_day_usd,
    'worst_day_usd', s.worst_day_usd,
    'capital', s.capital,
    'returns', s.returns,
    'data_source', s.data_source);
end $function$
;

alter function stats.snapshot_holds(timestamptz, timestamptz, timestamptz) owner to stats_owner;
grant execute on function stats.snapshot_holds(timestamptz, timestamptz, timestamptz) to stats_writer;
