-- The public surface: exactly these two functions, exposed by PostgREST under /rpc. anon may
-- execute them and nothing else.
grant usage on schema public to anon;

-- With validators for HTTP caches, which PostgREST sends from response.headers
-- (https://docs.postgrest.org/en/v12/references/transactions.html#response-headers): a strong ETag
-- of the exact record, and Last-Modified from updated_at.
create function public.landing_stats() returns json
language plpgsql stable security definer set search_path = '' as $$
declare
  record json := stats.stats_at(now());
  updated timestamptz := (record ->> 'updated_at')::timestamptz;
begin
  perform pg_catalog.set_config('response.headers', case
    when updated is null then pg_catalog.json_build_array(pg_catalog.json_build_object('ETag', '"' || pg_catalog.md5(record::text) || '"'))
    else pg_catalog.json_build_array(
      pg_catalog.json_build_object('ETag', '"' || pg_catalog.md5(record::text) || '"'),
      pg_catalog.json_build_object('Last-Modified', pg_catalog.to_char(pg_catalog.timezone('UTC', updated), 'Dy, DD Mon YYYY HH24:MI:SS "GMT"')))
    end::text, true);
  return record;
end $$;
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
