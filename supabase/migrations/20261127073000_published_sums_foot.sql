-- Published sums foot: every total adds up the published values it covers (each night rounded to
-- cents), instead of summing full precision and rounding once, which drifted by cents from the sum of
-- the published nights. The returns' base is the mean of the published day values, rounded once.
set check_function_bodies = off;

create or replace function stats.payout_figures(p_now timestamptz,
  out daily json, out last_night_usd numeric, out last_night_date date, out total_usd numeric,
  out since_date date, out best_day_usd numeric, out worst_day_usd numeric)
language plpgsql stable set search_path = '' set plan_cache_mode = force_generic_plan as $$
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
    select sum(round(p.usd, 2)), max(p.usd), min(p.usd) into total_usd, best_day_usd, worst_day_usd
      from stats.payout p where p.date >= payout_figures.since_date and p.date <= today;
  end if;

  last_night_usd := round(last_night.usd, 2);
  last_night_date := last_night.date;
  best_day_usd := round(best_day_usd, 2);
  worst_day_usd := round(worst_day_usd, 2);
end $$;

create or replace function stats.returns_figures(p_now timestamptz, p_last_night date) returns json
language plpgsql stable set search_path = '' set plan_cache_mode = force_generic_plan as $$
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
    select sum(round(p.usd, 2)) into r_rewards from stats.payout p where p.date between r_from and p_last_night;
    select sum(round(t.usd, 2)) into r_costs from stats.trading_cost t where t.date between r_from and p_last_night;
    r_net := r_rewards - r_costs;
    select round(avg(s.at_stake), 2) into r_base
      from generate_series(r_from::timestamp at time zone 'UTC', p_last_night::timestamp at time zone 'UTC', interval '24 hours') as g(day_start)
      cross join lateral (
        select round(c.cash_usd + c.inventory_usd, 2) as at_stake from stats.capital c
        where c.observed_at >= g.day_start and c.observed_at < g.day_start + interval '24 hours'
          and c.observed_at <= p_now
        order by c.observed_at desc limit 1) s;
    r_base := coalesce(r_base, (select round(c.cash_usd + c.inventory_usd, 2) from stats.capital c
      where c.observed_at <= p_now order by c.observed_at desc limit 1));
    if r_base <= 0 then r_base := null; end if;
  end if;
  return json_build_object(
    'window_days', window_days,
    'from_date', r_from,
    'to_date', p_last_night,
    'rewards_usd', r_rewards,
    'trading_costs_usd', r_costs,
    'net_usd', r_net,
    'rewards_vs_costs', case when r_costs > 0 then round(r_rewards / r_costs, 2) end,
    'gross_yield_pct', round(r_rewards / r_base * 100, 2),
    'net_yield_pct', round(r_net / r_base * 100, 2));
end $$;

create or replace function stats.history_nights(p_now timestamptz, p_since date) returns json
language sql stable set search_path = '' set plan_cache_mode = force_generic_plan as $$
  select coalesce(json_agg(json_build_object(
      'date', n.date,
      'usd', round(n.usd, 2),
      'total_usd', n.total,
      'trading_cost_usd', round(n.cost, 2),
      'at_stake_usd', round(n.at_stake, 2),
      'updated_at', stats.iso(n.updated_at),
      'log_index', n.log_index,
      'witnessed_at', stats.iso(n.witnessed_at),
      'witnessed_on_time', case
        when not n.witnessed then null
        when n.witnessed_at is not null then n.witnessed_at <= n.deadline
        when p_now > n.deadline then false
      end) order by n.date), '[]'::json)
    from (
      select p.date, p.usd, p.updated_at,
        sum(round(p.usd, 2)) over (order by p.date) as total,
        t.usd as cost,
        (select c.cash_usd + c.inventory_usd from stats.capital c
          where c.observed_at >= p.date::timestamp at time zone 'UTC'
            and c.observed_at < p.date::timestamp at time zone 'UTC' + interval '24 hours'
            and c.observed_at <= p_now
          order by c.observed_at desc limit 1) as at_stake,
        (select l.idx from stats.log_entry l where l.date = p.date and l.idx < signed.size
          order by l.idx desc limit 1) as log_index,
        (select min(w.quorum_at) from stats.log_witnessed w where w.size > (
          select min(l.idx) from stats.log_entry l where l.date = p.date)) as witnessed_at,
        p.date::timestamp at time zone 'UTC' + interval '4 days' as deadline,
        witnessing.policy is not null as witnessed
      from stats.payout p
      cross join (select stats.log_size() as size) signed
      left join lateral (select lp.policy from stats.log_policy lp order by lp.recorded_at desc limit 1) witnessing on true
      left join stats.trading_cost t on t.date = p.date
      where p.date >= p_since and p.date <= (p_now at time zone 'UTC')::date
    ) n
$$;

create or replace function stats.refresh_history_snapshot() returns void
language plpgsql security definer set search_path = '' as $$
declare
  -- The wall clock, not the transaction's start: a reader whose now() is later sees every row this
  -- transaction wrote.
  at timestamptz := clock_timestamp();
  today date := (at at time zone 'UTC')::date;
  since date := stats.since_date(today);
begin
  insert into stats.history_snapshot (id, computed_at, valid_until, record, since_date, total_usd, best_day_usd, worst_day_usd)
    select true, at, stats.figures_valid_until(at), stats.history_record(at), since, sum(round(p.usd, 2)), max(p.usd), min(p.usd)
      from stats.payout p where p.date >= since and p.date <= today
    on conflict (id) do update set computed_at = excluded.computed_at, valid_until = excluded.valid_until,
      record = excluded.record, since_date = excluded.since_date,
      total_usd = excluded.total_usd, best_day_usd = excluded.best_day_usd, worst_day_usd = excluded.worst_day_usd;
end $$;

-- Snapshots made before this migration hold the old totals: make them again.
select stats.refresh_figures() where exists (select from stats.history_snapshot) or exists (select from stats.stats_snapshot);
