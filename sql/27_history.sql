-- The whole track record: every settled night since since_date, oldest first, with the running gross
-- total, that date's trading cost (null when none is recorded), the capital base the returns use for
-- that day (its last at-stake snapshot, null when the day has none) and when the night's payout was
-- first recorded or last corrected. The running total is summed at full precision and every amount
-- rounded to cents once, at the end. One index range over payout and a limit-1 probe per night into
-- trading_cost and capital, so ten years of nights answer in a few milliseconds.
create function stats.history_at(p_now timestamptz) returns json
language plpgsql stable set search_path = '' set plan_cache_mode = force_generic_plan as $$
declare
  today date := (p_now at time zone 'UTC')::date;
  v_since date := stats.since_date(today);
  v_nights json;
begin
  select json_agg(json_build_object(
      'date', n.date,
      'usd', round(n.usd, 2),
      'total_usd', round(n.total, 2),
      'trading_cost_usd', round(n.cost, 2),
      'at_stake_usd', round(n.at_stake, 2),
      'updated_at', stats.iso(n.updated_at)) order by n.date)
    into v_nights
    from (
      select p.date, p.usd, p.updated_at,
        sum(p.usd) over (order by p.date) as total,
        (select t.usd from stats.trading_cost t where t.date = p.date) as cost,
        (select c.cash_usd + c.inventory_usd from stats.capital c
          where c.observed_at >= p.date::timestamp at time zone 'UTC'
            and c.observed_at < p.date::timestamp at time zone 'UTC' + interval '24 hours'
            and c.observed_at <= p_now
          order by c.observed_at desc limit 1) as at_stake
      from stats.payout p
      where p.date >= v_since and p.date <= today
      order by p.date
    ) n;
  return json_build_object(
    'updated_at', stats.iso(stats.figures_updated_at(p_now)),
    'since_date', v_since,
    'data_source', stats.data_source(),
    'nights', coalesce(v_nights, '[]'::json));
end $$;
alter function stats.history_at(timestamptz) owner to stats_owner;
grant execute on function stats.history_at(timestamptz) to stats_writer;
