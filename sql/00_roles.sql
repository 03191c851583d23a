-- The service's roles. Roles are cluster-wide, so each is created only when missing.
--   stats_owner    NOLOGIN  owns the stats schema and the SECURITY DEFINER functions
--   anon           NOLOGIN  what a request with the public key runs as: EXECUTE on the landing_* functions
--   authenticator  LOGIN    PostgREST's login role; NOINHERIT, may only switch to anon
--   stats_writer   LOGIN    the writer job: reads and writes the data tables, nothing else
--   stats_monitor  NOLOGIN  reads the server's activity statistics (pg_read_all_stats) for health:
--                           owns the one SECURITY DEFINER function that does, and nothing else
-- Login passwords are secrets: the roles are created without one, and the stack sets them from the
-- environment. Each object's grants sit beside the object, in its own file.
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
  if not exists (select from pg_roles where rolname = 'stats_monitor') then
    create role stats_monitor nologin;
  end if;
end $$;

alter role anon set statement_timeout = '3s';
grant anon to authenticator;
-- Only a member of pg_read_all_stats sees the WAL receiver's status; every other role sees its pid alone
-- (https://www.postgresql.org/docs/15/monitoring-stats.html#MONITORING-PG-STAT-WAL-RECEIVER-VIEW).
grant pg_read_all_stats to stats_monitor;

-- Functions are executable by PUBLIC by default: take that away everywhere we create them.
alter default privileges revoke execute on functions from public;
alter default privileges for role stats_owner revoke execute on functions from public;
revoke create on schema public from public;
