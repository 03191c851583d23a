-- landing_stats sends an ETag of the exact record and Last-Modified from updated_at (sql/40_api.sql).
set check_function_bodies = off;

CREATE OR REPLACE FUNCTION public.landing_stats()
 RETURNS json
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO ''
AS $function$
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
end $function$
;

