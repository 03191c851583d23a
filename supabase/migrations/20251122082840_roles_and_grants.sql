-- Every role and every grant of the service, in one place.
--   stats_owner    NOLOGIN  owns the stats schema and the two SECURITY DEFINER functions
--   anon           NOLOGIN  what a request with the public key runs as: EXECUTE on two functions
--   authenticator  LOGIN    PostgREST's login role; NOINHERIT, may only switch to anon
--   stats_writer   LOGIN    the writer job: reads and writes the data tables, nothing else
-- Login passwords are secrets: migrations create the roles without one, and the stack sets them
-- from the environment (stack/database.ts). Roles are cluster-wide, so create them idempotently.

do $$
begin
  if not exists (select from pg_roles where rolname = 'stats_owner') then
    create role stats_owner nologin;
  end if;
  if not exists (select from pg_roles where rolname = 'anon') then
    create role anon nologin noinherit;
  end if;
  if not exists (select from pg_roles where rolname = 'authenticator') then
    create role authenticator noinherit nologin;
  end if;
  if not exists (select from pg_roles where rolname = 'stats_writer') then
    create role stats_writer nologin;
  end if;
end $$;

alter role anon set statement_timeout = '3s';
grant anon to authenticator;

-- Ownership: definer functions run as a role that is not a superuser.
alter schema stats owner to stats_owner;
alter table stats.settings owner to stats_owner;
alter table stats.payout owner to stats_owner;
alter table stats.payout_correction owner to stats_owner;
alter table stats.accrual owner to stats_owner;
alter table stats.breadth owner to stats_owner;
alter table stats.capital owner to stats_owner;
alter table stats.trading_cost owner to stats_owner;
alter table stats.heartbeat owner to stats_owner;
alter function stats.iso(timestamptz) owner to stats_owner;
alter function stats.stats_at(timestamptz) owner to stats_owner;
alter function stats.health_at(timestamptz) owner to stats_owner;
alter function stats.reject_future_date() owner to stats_owner;
alter function stats.track_change() owner to stats_owner;
alter function stats.purge_demo() owner to stats_owner;
alter function public.landing_stats() owner to stats_owner;
alter function public.landing_health() owner to stats_owner;
-- The audit row of a correction is written by the trigger with the owner's rights, so the writer
-- needs no privilege on the audit table beyond reading it.
alter function stats.track_change() security definer;
-- Likewise the demo purge: the writer deletes demo rows through it, never real ones.
alter function stats.purge_demo() security definer;

-- Functions are executable by PUBLIC by default: take that away everywhere we create them.
alter default privileges revoke execute on functions from public;
alter default privileges for role stats_owner revoke execute on functions from public;
revoke all on schema stats from public;
revoke execute on all functions in schema stats from public;
revoke execute on all functions in schema public from public;
revoke create on schema public from public;

-- anon: exactly two functions, no table, no other schema.
grant usage on schema public to anon;
grant execute on function public.landing_stats() to anon;
grant execute on function public.landing_health() to anon;

-- The writer: the data tables it feeds, and reading settings and the audit trail.
grant usage on schema stats to stats_writer;
grant select, insert, update on stats.payout, stats.accrual, stats.breadth, stats.capital,
  stats.trading_cost, stats.heartbeat to stats_writer;
grant execute on function stats.purge_demo() to stats_writer;
grant select on stats.payout_correction to stats_writer;
grant select, update (data_source) on stats.settings to stats_writer;
grant execute on function stats.stats_at(timestamptz), stats.health_at(timestamptz), stats.iso(timestamptz)
  to stats_writer;
