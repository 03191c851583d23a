-- The stats record assembled from one function per figure group (sql/20_… to 26_…).
set check_function_bodies = off;

CREATE OR REPLACE FUNCTION stats.accrual_figures(p_now timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
declare
  today_start timestamptz := (p_now at time zone 'UTC')::date::timestamp at time zone 'UTC';
  acc stats.accrual;
begin
  select * into acc from stats.accrual a
    where a.observed_at >= today_start and a.observed_at <= p_now
    order by a.observed_at desc limit 1;
  return json_build_object(
    'accrued_today_usd', coalesce(round(acc.usd, 2), 0),
    'accrued_today_markets', coalesce(acc.markets, 0));
end $function$
;

CREATE OR REPLACE FUNCTION stats.breadth_figure(p_now timestamp with time zone)
 RETURNS integer
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
declare
  brd stats.breadth;
begin
  select * into brd from stats.breadth b where b.observed_at <= p_now order by b.observed_at desc limit 1;
  return case when brd.observed_at > p_now - interval '24 hours' then brd.markets_quoted_24h else 0 end;
end $function$
;

CREATE OR REPLACE FUNCTION stats.capital_figure(p_now timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
declare
  cap stats.capital;
begin
  select * into cap from stats.capital c where c.observed_at <= p_now order by c.observed_at desc limit 1;
  return case when cap.observed_at is not null then json_build_object(
    'cash_usd', round(cap.cash_usd, 2),
    'inventory_usd', round(cap.inventory_usd, 2),
    'positions', cap.positions,
    'at_stake_usd', round(cap.cash_usd + cap.inventory_usd, 2),
    'as_of', stats.iso(cap.observed_at)) end;
end $function$
;

CREATE OR REPLACE FUNCTION stats.data_source()
 RETURNS text
 LANGUAGE sql
 STABLE
 SET search_path TO ''
AS $function$
  select coalesce((select s.data_source from stats.settings s),
    case when exists (select from stats.payout where is_demo)
           or exists (select from stats.accrual where is_demo)
           or exists (select from stats.capital where is_demo)
         then 'demo' end)
$function$
;

CREATE OR REPLACE FUNCTION stats.figures_updated_at(p_now timestamp with time zone)
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
declare
  today date := (p_now at time zone 'UTC')::date;
begin
  return greatest(
    (select max(a.observed_at) from stats.accrual a where a.observed_at <= p_now),
    (select max(b.observed_at) from stats.breadth b where b.observed_at <= p_now),
    (select max(c.observed_at) from stats.capital c where c.observed_at <= p_now),
    (select max(p.updated_at) from stats.payout p where p.date <= today),
    (select max(t.updated_at) from stats.trading_cost t where t.date <= today));
end $function$
;

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
begin
  select * into last_night from stats.payout where date <= today order by date desc limit 1;
  select json_agg(json_build_object('date', d.date, 'usd', round(d.usd, 2)) order by d.date)
    into v_daily
    from (select p.date, p.usd from stats.payout p where p.date <= today order by p.date desc limit 16) d;

  v_since := coalesce((select s.since_date from stats.settings s), (select min(p.date) from stats.payout p where p.date <= today));
  select sum(p.usd), max(p.usd), min(p.usd) into v_total, v_best, v_worst
    from stats.payout p where p.date >= v_since and p.date <= today;

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

CREATE OR REPLACE FUNCTION stats.returns_figures(p_now timestamp with time zone, p_last_night date)
 RETURNS json
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
declare
  window_days integer := (select s.window_days from stats.settings s);
  r_from date;
  r_rewards numeric;
  r_costs numeric;
  r_net numeric;
  r_base numeric;
begin
  if p_last_night is not null then
    r_from := p_last_night - window_days + 1;
    select sum(p.usd) into r_rewards from stats.payout p where p.date between r_from and p_last_night;
    select sum(t.usd) into r_costs from stats.trading_cost t where t.date between r_from and p_last_night;
    r_net := r_rewards - r_costs;
    select avg(s.at_stake) into r_base
      from generate_series(r_from::timestamp at time zone 'UTC', p_last_night::timestamp at time zone 'UTC', interval '24 hours') as g(day_start)
      cross join lateral (
        select c.cash_usd + c.inventory_usd as at_stake from stats.capital c
        where c.observed_at >= g.day_start and c.observed_at < g.day_start + interval '24 hours'
          and c.observed_at <= p_now
        order by c.observed_at desc limit 1) s;
    r_base := coalesce(r_base, (select c.cash_usd + c.inventory_usd from stats.capital c
      where c.observed_at <= p_now order by c.observed_at desc limit 1));
    if r_base <= 0 then r_base := null; end if;
  end if;
  return json_build_object(
    'window_days', window_days,
    'from_date', r_from,
    'to_date', p_last_night,
    'rewards_usd', round(r_rewards, 2),
    'trading_costs_usd', round(r_costs, 2),
    'net_usd', round(r_net, 2),
    'rewards_vs_costs', case when r_costs > 0 then round(r_rewards / r_costs, 2) end,
    'gross_yield_pct', round(r_rewards / r_base * 100, 2),
    'net_yield_pct', round(r_net / r_base * 100, 2));
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
  payouts json := stats.payout_figures(p_now);
  accrual json := stats.accrual_figures(p_now);
begin
  return json_build_object(
    'updated_at', stats.iso(stats.figures_updated_at(p_now)),
    'daily', payouts -> 'daily',
    'last_night_usd', payouts -> 'last_night_usd',
    'last_night_date', payouts -> 'last_night_date',
    'accrued_today_usd', accrual -> 'accrued_today_usd',
    'accrued_today_markets', accrual -> 'accrued_today_markets',
    'markets_quoted_24h', stats.breadth_figure(p_now),
    'total_usd', payouts -> 'total_usd',
    'since_date', payouts -> 'since_date',
    'best_day_usd', payouts -> 'best_day_usd',
    'worst_day_usd', payouts -> 'worst_day_usd',
    'capital', stats.capital_figure(p_now),
    'returns', stats.returns_figures(p_now, (payouts ->> 'last_night_date')::date),
    'data_source', stats.data_source());
end $function$
;

alter function stats.accrual_figures(timestamp with time zone) owner to stats_owner;
grant execute on function stats.accrual_figures(timestamp with time zone) to stats_writer;
alter function stats.breadth_figure(timestamp with time zone) owner to stats_owner;
grant execute on function stats.breadth_figure(timestamp with time zone) to stats_writer;
alter function stats.capital_figure(timestamp with time zone) owner to stats_owner;
grant execute on function stats.capital_figure(timestamp with time zone) to stats_writer;
alter function stats.data_source() owner to stats_owner;
grant execute on function stats.data_source() to stats_writer;
alter function stats.figures_updated_at(timestamp with time zone) owner to stats_owner;
grant execute on function stats.figures_updated_at(timestamp with time zone) to stats_writer;
alter function stats.payout_figures(timestamp with time zone) owner to stats_owner;
grant execute on function stats.payout_figures(timestamp with time zone) to stats_writer;
alter function stats.returns_figures(timestamp with time zone,date) owner to stats_owner;
grant execute on function stats.returns_figures(timestamp with time zone,date) to stats_writer;
