-- landing_health answers the "down" record instead of raising an error while the record is worked out:
-- PostgREST answers HTTP 400 for an error whose SQLSTATE it does not map, and health answers 200.
set check_function_bodies = off;

CREATE OR REPLACE FUNCTION public.landing_health()
 RETURNS json
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO ''
AS $function$
begin
  return stats.health_at(now());
exception when others then
  return pg_catalog.json_build_object('status', 'down',
    'checked_at', pg_catalog.to_char(pg_catalog.timezone('UTC', now()), 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
    'data', null, 'writer', null);
end $function$
;

