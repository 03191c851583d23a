-- Today's accrual: the latest snapshot observed today (UTC), never yesterday's; 0 before the first.
create function stats.accrual_figures(p_now timestamptz) returns json
language plpgsql stable set search_path = '' set plan_cache_mode = force_generic_plan as $$
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
end $$;
alter function stats.accrual_figures(timestamptz) owner to stats_owner;
grant execute on function stats.accrual_figures(timestamptz) to stats_writer;
