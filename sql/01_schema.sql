-- Private data schema `stats`: nothing here is reachable by `anon`; the public surface is the landing_*
-- functions of 40_api.sql.
create schema stats;
alter schema stats owner to stats_owner;
revoke all on schema stats from public;
grant usage on schema stats to stats_writer;

-- A finite amount: rejects NaN and ±Infinity, which numeric accepts.
create domain stats.usd_amount as numeric
  check (value > '-Infinity'::numeric and value < 'Infinity'::numeric);

-- ISO 8601 UTC with a Z, whatever the session's TimeZone is. No SET clause, so the planner can
-- inline it; it names only pg_catalog, qualified.
create function stats.iso(ts timestamptz) returns text
language sql stable parallel safe as $$
  select pg_catalog.to_char(pg_catalog.timezone('UTC', ts), 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
$$;
alter function stats.iso(timestamptz) owner to stats_owner;
grant execute on function stats.iso(timestamptz) to stats_writer;
