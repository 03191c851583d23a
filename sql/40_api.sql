-- The public surface: exactly these two functions, exposed by PostgREST under /rpc. anon may
-- execute them and nothing else.
grant usage on schema public to anon;

create function public.landing_stats() returns json
language sql stable security definer set search_path = '' as $$
  select stats.stats_at(now())
$$;
comment on function public.landing_stats() is 'Public stats record: gross reward payouts, today''s accrual estimate, breadth, totals, capital, trailing returns.';
alter function public.landing_stats() owner to stats_owner;
grant execute on function public.landing_stats() to anon;

create function public.landing_health() returns json
language sql stable security definer set search_path = '' as $$
  select stats.health_at(now())
$$;
comment on function public.landing_health() is 'Data freshness and writer liveness.';
alter function public.landing_health() owner to stats_owner;
grant execute on function public.landing_health() to anon;
