-- The capital snapshot: the latest one, with at stake = cash plus inventory; null before the first.
create function stats.capital_figure(p_now timestamptz) returns json
language plpgsql stable set search_path = '' set plan_cache_mode = force_generic_plan as $$
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
end $$;
alter function stats.capital_figure(timestamptz) owner to stats_owner;
grant execute on function stats.capital_figure(timestamptz) to stats_writer;
