-- Markets quoted in the last 24 hours from the latest observation at or before p_now (p_latest): its
-- count, 0 once it is older than 24 hours (or before the first).
create function stats.breadth_figure(p_now timestamptz, p_latest stats.breadth) returns integer
language sql stable set search_path = '' as $$
  select case when p_latest.observed_at > p_now - interval '24 hours' then p_latest.markets_quoted_24h else 0 end
$$;
alter function stats.breadth_figure(timestamptz, stats.breadth) owner to stats_owner;
grant execute on function stats.breadth_figure(timestamptz, stats.breadth) to stats_writer;
