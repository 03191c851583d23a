set check_function_bodies = off;

CREATE OR REPLACE FUNCTION stats.stats_at(p_now timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
declare
  cfg stats.settings;
  today date := (p_now at time zone 'UTC')::date;
  today_start timestamptz := (p_now at time zone 'UTC')::date::timestamp at time zone 'UTC';
  last_night stats.payout;
  acc stats.accrual;
  brd stats.breadth;
  cap stats.capital;
  v_daily json;
  v_since date;
  v_total numeric;
  v_best numeric;
  v_worst numeric;
  v_updated timestamptz;
  v_source text;
  v_returns json;
  r_from date;
  r_rewards numeric;
  r_costs numeric;
  r_net numeric;
  r_base numeric;
begin
  select * into cfg from stats.settings;

  -- Nightly payouts: the latest 16 dated today or earlier, oldest first.
  select * into last_night from stats.payout where date <= today order by date desc limit 1;
  select json_agg(json_build_object('date', d.date, 'usd', round(d.usd, 2)) order by d.date)
    into v_daily
    from (select p.date, p.usd from stats.payout p where p.date <= today order by p.date desc limit 16) d;

  -- All-time totals from since_date (setting, else the first payout).
  v_since := coalesce(cfg.since_date, (select min(p.date) from stats.payout p where p.date <= today));
  select sum(p.usd), max(p.usd), min(p.usd) into v_total, v_best, v_worst
    from stats.payout p where p.date >= v_since and p.date <= today;

  -- Today's accrual: the latest snapshot observed today (UTC), never yesterday's.
  select * into acc from stats.accrual a
    where a.observed_at >= today_start and a.observed_at <= p_now
    order by a.observed_at desc limit 1;

  select * into brd from stats.breadth b where b.observed_at <= p_now order by b.observed_at desc limit 1;
  select * into cap from stats.capital c where c.observed_at <= p_now order by c.observed_at desc limit 1;

  -- Trailing window ending at the latest payout.
  if last_night.date is not null then
    r_from := last_night.date - cfg.window_days + 1;
    select sum(p.usd) into r_rewards from stats.payout p where p.date between r_from and last_night.date;
    select sum(t.usd) into r_costs from stats.trading_cost t where t.date between r_from and last_night.date;
    r_net := r_rewards - r_costs;
    -- Capital base: mean over the window's days of each day's last at-stake snapshot,
    -- days without one skipped; with none at all, the latest snapshot.
    -- One limit-1 index probe per day, in one statement; day bounds in absolute time (24 h steps
    -- from the first UTC midnight), so no row converts time zones.
    select avg(s.at_stake) into r_base
      from generate_series(r_from::timestamp at time zone 'UTC', last_night.date::timestamp at time zone 'UTC', interval '24 hours') as g(day_start)
      cross join lateral (
        select c.cash_usd + c.inventory_usd as at_stake from stats.capital c
        where c.observed_at >= g.day_start and c.observed_at < g.day_start + interval '24 hours'
          and c.observed_at <= p_now
        order by c.observed_at desc limit 1) s;
    r_base := coalesce(r_base, cap.cash_usd + cap.inventory_usd);
    if r_base <= 0 then r_base := null; end if;
  end if;
  v_returns := json_build_object(
    'window_days', cfg.window_days,
    'from_date', r_from,
    'to_date', last_night.date,
    'rewards_usd', round(r_rewards, 2),
    'trading_costs_usd', round(r_costs, 2),
    'net_usd', round(r_net, 2),
    'rewards_vs_costs', case when r_costs > 0 then round(r_rewards / r_costs, 2) end,
    'gross_yield_pct', round(r_rewards / r_base * 100, 2),
    'net_yield_pct', round(r_net / r_base * 100, 2));

  -- The latest time a published figure changed.
  v_updated := greatest(
    coalesce(acc.observed_at, (select max(a.observed_at) from stats.accrual a where a.observed_at <= p_now)),
    brd.observed_at,
    cap.observed_at,
    (select max(p.updated_at) from stats.payout p where p.date <= today),
    (select max(t.updated_at) from stats.trading_cost t where t.date <= today));

  -- 'demo' only while every row is demo data; a real write records its source in settings.
  v_source := coalesce(cfg.data_source,
    case when exists (select from stats.payout where is_demo)
           or exists (select from stats.accrual where is_demo)
           or exists (select from stats.capital where is_demo)
         then 'demo' end);

  return json_build_object(
    'updated_at', stats.iso(v_updated),
    'daily', coalesce(v_daily, '[]'::json),
    'last_night_usd', round(last_night.usd, 2),
    'last_night_date', last_night.date,
    'accrued_today_usd', coalesce(round(acc.usd, 2), 0),
    'accrued_today_markets', coalesce(acc.markets, 0),
    'markets_quoted_24h', case when brd.observed_at > p_now - interval '24 hours' then brd.markets_quoted_24h else 0 end,
    'total_usd', round(v_total, 2),
    'since_date', v_since,
    'best_day_usd', round(v_best, 2),
    'worst_day_usd', round(v_worst, 2),
    'capital', case when cap.observed_at is not null then json_build_object(
      'cash_usd', round(cap.cash_usd, 2),
      'inventory_usd', round(cap.inventory_usd, 2),
      'positions', cap.positions,
      'at_stake_usd', round(cap.cash_usd + cap.inventory_usd, 2),
      'as_of', stats.iso(cap.observed_at)) end,
    'returns', v_returns,
    'data_source', v_source);
end $function$
;

