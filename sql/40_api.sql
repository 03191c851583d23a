-- The public surface: exactly these four functions, exposed by PostgREST under /rpc. anon may
-- execute them and nothing else.
grant usage on schema public to anon;

-- Validators for HTTP caches, which PostgREST sends from response.headers
-- (https://docs.postgrest.org/en/v12/references/transactions.html#response-headers): a strong ETag
-- of the exact record, and Last-Modified from its updated_at. Returns the record unchanged.
create function stats.with_validators(p_record json) returns json
language plpgsql stable set search_path = '' as $$
declare
  updated timestamptz := (p_record ->> 'updated_at')::timestamptz;
begin
  perform pg_catalog.set_config('response.headers', case
    when updated is null then pg_catalog.json_build_array(pg_catalog.json_build_object('ETag', '"' || pg_catalog.md5(p_record::text) || '"'))
    else pg_catalog.json_build_array(
      pg_catalog.json_build_object('ETag', '"' || pg_catalog.md5(p_record::text) || '"'),
      pg_catalog.json_build_object('Last-Modified', pg_catalog.to_char(pg_catalog.timezone('UTC', updated), 'Dy, DD Mon YYYY HH24:MI:SS "GMT"')))
    end::text, true);
  return p_record;
end $$;
alter function stats.with_validators(json) owner to stats_owner;

create function public.landing_stats() returns json
language sql stable security definer set search_path = '' as $$
  select stats.with_validators(stats.stats_at(now()))
$$;
comment on function public.landing_stats() is 'Public stats record: gross reward payouts, today''s accrual estimate, breadth, totals, capital, trailing returns.';
alter function public.landing_stats() owner to stats_owner;
grant execute on function public.landing_stats() to anon;

create function public.landing_history() returns json
language sql stable security definer set search_path = '' as $$
  select stats.with_validators(stats.history_at(now()))
$$;
comment on function public.landing_history() is 'The whole track record: every settled night since since_date with running gross total, trading cost and capital base.';
alter function public.landing_history() owner to stats_owner;
grant execute on function public.landing_history() to anon;

create function public.landing_log() returns json
language sql stable security definer set search_path = '' as $$
  select stats.with_validators(stats.log_record())
$$;
comment on function public.landing_log() is 'The transparency log: its entries in order (each settled night''s final figures as RFC 8785 canonical JSON), its signed checkpoints with the witnesses'' cosignatures, and its witnessing.';
alter function public.landing_log() owner to stats_owner;
grant execute on function public.landing_log() to anon;

create function public.landing_health() returns json
language sql stable security definer set search_path = '' as $$
  select stats.health_at(now())
$$;
comment on function public.landing_health() is 'Data freshness and writer liveness.';
alter function public.landing_health() owner to stats_owner;
grant execute on function public.landing_health() to anon;
