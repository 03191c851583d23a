
  create table "stats"."log_entry" (
    "idx" bigint not null,
    "date" date not null,
    "entry" text not null,
    "is_demo" boolean not null,
    "appended_at" timestamp with time zone not null default clock_timestamp()
      );


CREATE INDEX log_entry_date_idx ON stats.log_entry USING btree (date, idx DESC);

CREATE UNIQUE INDEX log_entry_pkey ON stats.log_entry USING btree (idx);

alter table "stats"."log_entry" add constraint "log_entry_pkey" PRIMARY KEY using index "log_entry_pkey";

alter table "stats"."log_entry" add constraint "log_entry_idx_check" CHECK ((idx >= 0)) not valid;

alter table "stats"."log_entry" validate constraint "log_entry_idx_check";

set check_function_bodies = off;

CREATE OR REPLACE FUNCTION public.landing_log()
 RETURNS json
 LANGUAGE sql
 STABLE SECURITY DEFINER
 SET search_path TO ''
AS $function$
  select stats.with_validators(stats.log_at(now()))
$function$
;

CREATE OR REPLACE FUNCTION stats.log_append(p_now timestamp with time zone)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO ''
AS $function$
declare
  today date := (p_now at time zone 'UTC')::date;
  next_idx bigint;
  appended integer;
begin
  lock table stats.log_entry in exclusive mode;
  select coalesce(max(idx) + 1, 0) into next_idx from stats.log_entry;
  insert into stats.log_entry (idx, date, entry, is_demo)
    select next_idx + row_number() over (order by n.date) - 1, n.date,
      stats.log_entry_text(n.date, n.usd, n.trading_cost_usd, n.at_stake_usd, n.updated_at, latest.idx),
      stats.data_source() = 'demo'
    from json_to_recordset(stats.history_nights(p_now, stats.since_date(today)))
      as n(date date, usd numeric, trading_cost_usd numeric, at_stake_usd numeric, updated_at text)
    left join lateral (
      select l.idx, l.entry::jsonb as entry from stats.log_entry l where l.date = n.date order by l.idx desc limit 1
    ) latest on true
    where n.date <= today - 3
      and (latest.idx is null
        or (latest.entry - 'supersedes') is distinct from
           (stats.log_entry_text(n.date, n.usd, n.trading_cost_usd, n.at_stake_usd, n.updated_at, null)::jsonb - 'supersedes'))
    order by n.date;
  get diagnostics appended = row_count;
  return appended;
end $function$
;

CREATE OR REPLACE FUNCTION stats.log_at(p_now timestamp with time zone)
 RETURNS json
 LANGUAGE sql
 STABLE
 SET search_path TO ''
AS $function$
  select json_build_object(
    'updated_at', stats.iso(max(l.appended_at)),
    'demo', coalesce(bool_or(l.is_demo), stats.data_source() = 'demo'),
    'entries', coalesce(json_agg(l.entry order by l.idx), '[]'::json))
  from stats.log_entry l where l.appended_at <= p_now
$function$
;

CREATE OR REPLACE FUNCTION stats.log_entry_appended()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  last stats.log_entry;
begin
  select * into last from stats.log_entry order by idx desc limit 1;
  if new.idx <> coalesce(last.idx + 1, 0) then
    raise exception 'the log is append-only: entry % would not follow entry %', new.idx, coalesce(last.idx::text, 'none')
      using errcode = 'check_violation';
  end if;
  if last.is_demo is distinct from new.is_demo and last.idx is not null then
    raise exception 'demo and real nights never share a log' using errcode = 'check_violation';
  end if;
  return new;
end $function$
;

CREATE OR REPLACE FUNCTION stats.log_entry_kept()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
begin
  if tg_op = 'DELETE' and old.is_demo then
    return old;
  end if;
  raise exception 'the log is append-only: % refused', lower(tg_op) using errcode = 'insufficient_privilege';
end $function$
;

CREATE OR REPLACE FUNCTION stats.log_entry_text(p_date date, p_usd numeric, p_trading_cost_usd numeric, p_at_stake_usd numeric, p_updated_at text, p_supersedes bigint)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
 SET search_path TO ''
AS $function$
  select '{"at_stake_usd":' || coalesce(pg_catalog.trim_scale(p_at_stake_usd)::text, 'null')
    || ',"date":"' || pg_catalog.to_char(p_date, 'YYYY-MM-DD')
    || '","supersedes":' || coalesce(p_supersedes::text, 'null')
    || ',"trading_cost_usd":' || coalesce(pg_catalog.trim_scale(p_trading_cost_usd)::text, 'null')
    || ',"updated_at":"' || p_updated_at
    || '","usd":' || pg_catalog.trim_scale(p_usd)::text || '}'
$function$
;

CREATE OR REPLACE FUNCTION stats.history_nights(p_now timestamp with time zone, p_since date)
 RETURNS json
 LANGUAGE sql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
  select coalesce(json_agg(json_build_object(
      'date', n.date,
      'usd', round(n.usd, 2),
      'total_usd', round(n.total, 2),
      'trading_cost_usd', round(n.cost, 2),
      'at_stake_usd', round(n.at_stake, 2),
      'updated_at', stats.iso(n.updated_at),
      'log_index', n.log_index) order by n.date), '[]'::json)
    from (
      select p.date, p.usd, p.updated_at,
        sum(p.usd) over (order by p.date) as total,
        t.usd as cost,
        (select c.cash_usd + c.inventory_usd from stats.capital c
          where c.observed_at >= p.date::timestamp at time zone 'UTC'
            and c.observed_at < p.date::timestamp at time zone 'UTC' + interval '24 hours'
            and c.observed_at <= p_now
          order by c.observed_at desc limit 1) as at_stake,
        (select l.idx from stats.log_entry l where l.date = p.date and l.appended_at <= p_now
          order by l.idx desc limit 1) as log_index
      from stats.payout p
      left join stats.trading_cost t on t.date = p.date
      where p.date >= p_since and p.date <= (p_now at time zone 'UTC')::date
    ) n
$function$
;

CREATE OR REPLACE FUNCTION stats.purge_demo()
 RETURNS void
 LANGUAGE sql
 SECURITY DEFINER
 SET search_path TO ''
AS $function$
  delete from stats.payout where is_demo;
  delete from stats.trading_cost where is_demo;
  delete from stats.accrual where is_demo;
  delete from stats.breadth where is_demo;
  delete from stats.capital where is_demo;
  delete from stats.heartbeat where is_demo;
  delete from stats.log_entry where is_demo;
$function$
;

grant select on table "stats"."log_entry" to "stats_writer";

CREATE TRIGGER log_entry_appended BEFORE INSERT ON stats.log_entry FOR EACH ROW EXECUTE FUNCTION stats.log_entry_appended();

CREATE CONSTRAINT TRIGGER log_entry_history AFTER INSERT OR DELETE ON stats.log_entry DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION stats.history_changed();

CREATE TRIGGER log_entry_kept BEFORE DELETE OR UPDATE ON stats.log_entry FOR EACH ROW EXECUTE FUNCTION stats.log_entry_kept();

CREATE TRIGGER log_entry_not_truncated BEFORE TRUNCATE ON stats.log_entry FOR EACH STATEMENT EXECUTE FUNCTION stats.log_entry_kept();
alter table stats.log_entry owner to stats_owner;
alter function public.landing_log() owner to stats_owner;
comment on function public.landing_log() is 'The transparency log''s entries in order: each settled night''s final figures as RFC 8785 canonical JSON.';
grant execute on function public.landing_log() to anon;
alter function stats.log_append(timestamptz) owner to stats_owner;
grant execute on function stats.log_append(timestamptz) to stats_writer;
alter function stats.log_at(timestamptz) owner to stats_owner;
alter function stats.log_entry_appended() owner to stats_owner;
alter function stats.log_entry_kept() owner to stats_owner;
alter function stats.log_entry_text(date, numeric, numeric, numeric, text, bigint) owner to stats_owner;
-- The nights carry their log index from now on.
select stats.refresh_history_snapshot();
