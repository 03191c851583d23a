-- Markets quoted in the last 24 hours: the latest observation, 0 once it is older than 24 hours.
create function stats.breadth_figure(p_now timestamptz) returns integer
language plpgsql stable set search_path = '' set plan_cache_mode = force_generic_plan as $$
declare
  brd stats.breadth;
begin
  select * into brd from stats.breadth b where b.observed_at <= p_now order by b.observed_at desc limit 1;
  return case when brd.observed_at > p_now - interval '24 hours' then brd.markets_quoted_24h else 0 end;
end $$;
alter function stats.breadth_figure(timestamptz) owner to stats_owner;
grant execute on function stats.breadth_figure(timestamptz) to stats_writer;
