
  create table "stats"."history_snapshot" (
    "id" boolean not null default true,
    "since_date" date,
    "nights" json not null,
    "computed_at" timestamp with time zone not null
      );


CREATE UNIQUE INDEX history_snapshot_pkey ON stats.history_snapshot USING btree (id);

alter table "stats"."history_snapshot" add constraint "history_snapshot_pkey" PRIMARY KEY using index "history_snapshot_pkey";

alter table "stats"."history_snapshot" add constraint "history_snapshot_id_check" CHECK (id) not valid;

alter table "stats"."history_snapshot" validate constraint "history_snapshot_id_check";

set check_function_bodies = off;

CREATE OR REPLACE FUNCTION public.landing_history()
 RETURNS json
 LANGUAGE sql
 STABLE SECURITY DEFINER
 SET search_path TO ''
AS $function$
  select stats.with_validators(stats.history_at(now()))
$function$
;

CREATE OR REPLACE FUNCTION stats.history_at(p_now timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
declare
  snapshot stats.history_snapshot;
  v_since date;
  v_nights json;
begin
  select * into snapshot from stats.history_snapshot;
  if snapshot.computed_at is not null and p_now >= snapshot.computed_at then
    v_since := snapshot.since_date;
    v_nights := snapshot.nights;
  else
    v_since := stats.since_date((p_now at time zone 'UTC')::date);
    v_nights := stats.history_nights(p_now, v_since);
  end if;
  return json_build_object(
    'updated_at', stats.iso(stats.figures_updated_at(p_now)),
    'since_date', v_since,
    'data_source', stats.data_source(),
    'nights', v_nights);
end $function$
;

CREATE OR REPLACE FUNCTION stats.history_changed()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO ''
AS $function$
begin
  if pg_catalog.current_setting('stats.history_rebuilt_in', true) is distinct from pg_catalog.txid_current()::text then
    perform stats.refresh_history_snapshot();
    perform pg_catalog.set_config('stats.history_rebuilt_in', pg_catalog.txid_current()::text, true);
  end if;
  return null;
end $function$
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
      'updated_at', stats.iso(n.updated_at)) order by n.date), '[]'::json)
    from (
      select p.date, p.usd, p.updated_at,
        sum(p.usd) over (order by p.date) as total,
        t.usd as cost,
        (select c.cash_usd + c.inventory_usd from stats.capital c
          where c.observed_at >= p.date::timestamp at time zone 'UTC'
            and c.observed_at < p.date::timestamp at time zone 'UTC' + interval '24 hours'
            and c.observed_at <= p_now
          order by c.observed_at desc limit 1) as at_stake
      from stats.payout p
      left join stats.trading_cost t on t.date = p.date
      where p.date >= p_since and p.date <= (p_now at time zone 'UTC')::date
    ) n
$function$
;

CREATE OR REPLACE FUNCTION stats.history_truncated()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO ''
AS $function$
begin
  delete from stats.history_snapshot;
  return null;
end $function$
;

CREATE OR REPLACE FUNCTION stats.refresh_history_snapshot()
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO ''
AS $function$
declare
  -- The wall clock, not the transaction's start: a reader whose now() is later sees every row this
  -- transaction wrote.
  at timestamptz := clock_timestamp();
  since date := stats.since_date((at at time zone 'UTC')::date);
begin
  insert into stats.history_snapshot (id, since_date, nights, computed_at)
    values (true, since, stats.history_nights(at, since), at)
    on conflict (id) do update set since_date = excluded.since_date, nights = excluded.nights, computed_at = excluded.computed_at;
end $function$
;

CREATE OR REPLACE FUNCTION stats.since_date(p_today date)
 RETURNS date
 LANGUAGE sql
 STABLE
 SET search_path TO ''
AS $function$
  select coalesce((select s.since_date from stats.settings s), (select min(p.date) from stats.payout p where p.date <= p_today))
$function$
;

CREATE OR REPLACE FUNCTION stats.with_validators(p_record json)
 RETURNS json
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
AS $function$
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
end $function$
;

CREATE OR REPLACE FUNCTION public.landing_stats()
 RETURNS json
 LANGUAGE sql
 STABLE SECURITY DEFINER
 SET search_path TO ''
AS $function$
  select stats.with_validators(stats.stats_at(now()))
$function$
;

CREATE OR REPLACE FUNCTION stats.payout_figures(p_now timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
declare
  today date := (p_now at time zone 'UTC')::date;
  last_night stats.payout;
  v_daily json;
  v_since date;
  v_total numeric;
  v_best numeric;
  v_worst numeric;
begin
  select * into last_night from stats.payout where date <= today order by date desc limit 1;
  select json_agg(json_build_object('date', d.date, 'usd', round(d.usd, 2)) order by d.date)
    into v_daily
    from (select p.date, p.usd from stats.payout p where p.date <= today order by p.date desc limit 16) d;

  v_since := stats.since_date(today);
  select sum(p.usd), max(p.usd), min(p.usd) into v_total, v_best, v_worst
    from stats.payout p where p.date >= v_since and p.date <= today;

  return json_build_object(
    'daily', coalesce(v_daily, '[]'::json),
    'last_night_usd', round(last_night.usd, 2),
    'last_night_date', last_night.date,
    'total_usd', round(v_total, 2),
    'since_date', v_since,
    'best_day_usd', round(v_best, 2),
    'worst_day_usd', round(v_worst, 2));
end $function$
;

CREATE CONSTRAINT TRIGGER capital_history AFTER INSERT OR DELETE OR UPDATE ON stats.capital DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION stats.history_changed();

CREATE TRIGGER capital_history_truncated AFTER TRUNCATE ON stats.capital FOR EACH STATEMENT EXECUTE FUNCTION stats.history_truncated();

CREATE CONSTRAINT TRIGGER payout_history AFTER INSERT OR DELETE OR UPDATE ON stats.payout DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION stats.history_changed();

CREATE TRIGGER payout_history_truncated AFTER TRUNCATE ON stats.payout FOR EACH STATEMENT EXECUTE FUNCTION stats.history_truncated();

CREATE CONSTRAINT TRIGGER settings_history AFTER UPDATE OF since_date ON stats.settings DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION stats.history_changed();

CREATE CONSTRAINT TRIGGER trading_cost_history AFTER INSERT OR DELETE OR UPDATE ON stats.trading_cost DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION stats.history_changed();

CREATE TRIGGER trading_cost_history_truncated AFTER TRUNCATE ON stats.trading_cost FOR EACH STATEMENT EXECUTE FUNCTION stats.history_truncated();

alter table stats.history_snapshot owner to stats_owner;
alter function public.landing_history() owner to stats_owner;
comment on function public.landing_history() is 'The whole track record: every settled night since since_date with running gross total, trading cost and capital base.';
grant execute on function public.landing_history() to anon;
alter function stats.history_at(timestamptz) owner to stats_owner;
grant execute on function stats.history_at(timestamptz) to stats_writer;
alter function stats.history_nights(timestamptz, date) owner to stats_owner;
alter function stats.history_changed() owner to stats_owner;
alter function stats.history_truncated() owner to stats_owner;
alter function stats.refresh_history_snapshot() owner to stats_owner;
alter function stats.since_date(date) owner to stats_owner;
grant execute on function stats.since_date(date) to stats_writer;
alter function stats.with_validators(json) owner to stats_owner;

-- The history as the data stand now, so the first reads need not compute it.
select stats.refresh_history_snapshot();
