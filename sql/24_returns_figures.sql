-- The trailing window of window_days ending at the latest payout: rewards, trading costs, net, and
-- the yields on the capital base. Rewards and costs are the sums of the window's nights as published
-- (each rounded to cents), net is their difference, and the ratio and yields are worked out from those
-- sums, so a reader who adds up the published nights reaches the same figures. Base: the mean over the
-- window's days of each day's last at-stake snapshot as published (in cents), days without one
-- skipped; with none at all, the latest snapshot; rounded to cents once; null when not positive.
-- One limit-1 index probe per day, in one statement; day bounds in absolute time (24 h steps from
-- the first UTC midnight), so no row converts time zones.
create function stats.returns_figures(p_now timestamptz, p_last_night date) returns json
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
alter function stats.returns_figures(timestamptz, date) owner to stats_owner;
grant execute on function stats.returns_figures(timestamptz, date) to stats_writer;
