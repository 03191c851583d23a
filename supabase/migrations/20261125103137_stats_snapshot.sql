-- The stats record is read from one row, stats.stats_snapshot, worked out as a transaction that
-- wrote its data commits; the accrual and breadth figures take the latest rows as arguments, so a read
-- applies the clock to them; one deferred trigger rebuilds both snapshots, and a transaction that has
-- written reads its figures from the tables until it commits.
drop trigger if exists "capital_history" on "stats"."capital";

drop trigger if exists "capital_history_truncated" on "stats"."capital";

drop trigger if exists "log_entry_history" on "stats"."log_entry";

drop trigger if exists "payout_history" on "stats"."payout";

drop trigger if exists "payout_history_truncated" on "stats"."payout";

drop trigger if exists "settings_history" on "stats"."settings";

drop trigger if exists "trading_cost_history" on "stats"."trading_cost";

drop trigger if exists "trading_cost_history_truncated" on "stats"."trading_cost";

drop function if exists "stats"."accrual_figures"(p_now timestamp with time zone);

drop function if exists "stats"."breadth_figure"(p_now timestamp with time zone);

drop function if exists "stats"."history_changed"();

drop function if exists "stats"."history_truncated"();

drop function if exists "stats"."payout_figures"(p_now timestamp with time zone);


  create table "stats"."stats_snapshot" (
    "id" boolean not null default true,
    "computed_at" timestamp with time zone not null,
    "valid_until" timestamp with time zone,
    "updated_at" timestamp with time zone,
    "daily" json not null,
    "last_night_usd" numeric,
    "last_night_date" date,
    "total_usd" numeric,
    "since_date" date,
    "best_day_usd" numeric,
    "worst_day_usd" numeric,
    "accrual" stats.accrual,
    "breadth" stats.breadth,
    "capital" json,
    "returns" json,
    "data_source" text
      );


CREATE UNIQUE INDEX stats_snapshot_pkey ON stats.stats_snapshot USING btree (id);

alter table "stats"."stats_snapshot" add constraint "stats_snapshot_pkey" PRIMARY KEY using index "stats_snapshot_pkey";

alter table "stats"."stats_snapshot" add constraint "stats_snapshot_id_check" CHECK (id) not valid;

alter table "stats"."stats_snapshot" validate constraint "stats_snapshot_id_check";

set check_function_bodies = off;

CREATE OR REPLACE FUNCTION stats.accrual_figures(p_now timestamp with time zone, p_latest stats.accrual, OUT accrued_today_usd numeric, OUT accrued_today_markets integer)
 RETURNS record
 LANGUAGE sql
 STABLE
 SET search_path TO ''
AS $function$
  select case when today then round(p_latest.usd, 2) else 0 end, case when today then p_latest.markets else 0 end
    from (select p_latest.observed_at >= (p_now at time zone 'UTC')::date::timestamp at time zone 'UTC' as today) t
$function$
;

CREATE OR REPLACE FUNCTION stats.breadth_figure(p_now timestamp with time zone, p_latest stats.breadth)
 RETURNS integer
 LANGUAGE sql
 STABLE
 SET search_path TO ''
AS $function$
  select case when p_latest.observed_at > p_now - interval '24 hours' then p_latest.markets_quoted_24h else 0 end
$function$
;

CREATE OR REPLACE FUNCTION stats.figures_changed()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO ''
AS $function$
begin
  if pg_catalog.current_setting('stats.figures_rebuilt_in', true) is distinct from pg_catalog.txid_current()::text then
    perform stats.refresh_figures();
    perform pg_catalog.set_config('stats.figures_rebuilt_in', pg_catalog.txid_current()::text, true);
  end if;
  return null;
end $function$
;

CREATE OR REPLACE FUNCTION stats.figures_pending()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
begin
  perform pg_catalog.set_config('stats.figures_pending', 'on', true);
  return null;
end $function$
;

CREATE OR REPLACE FUNCTION stats.figures_pending_here()
 RETURNS boolean
 LANGUAGE sql
 STABLE
 SET search_path TO ''
AS $function$
  -- null in a session that never set it
  select coalesce(pg_catalog.current_setting('stats.figures_pending', true) = 'on', false)
$function$
;

CREATE OR REPLACE FUNCTION stats.figures_truncated()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO ''
AS $function$
begin
  delete from stats.history_snapshot;
  delete from stats.stats_snapshot;
  return null;
end $function$
;

CREATE OR REPLACE FUNCTION stats.payout_figures(p_now timestamp with time zone, OUT daily json, OUT last_night_usd numeric, OUT last_night_date date, OUT total_usd numeric, OUT since_date date, OUT best_day_usd numeric, OUT worst_day_usd numeric)
 RETURNS record
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
declare
  today date := (p_now at time zone 'UTC')::date;
  last_night stats.payout;
  v_snapshot_at timestamptz;
begin
  select * into last_night from stats.payout p where p.date <= today order by p.date desc limit 1;
  select coalesce(json_agg(json_build_object('date', d.date, 'usd', round(d.usd, 2)) order by d.date), '[]'::json)
    into daily
    from (select p.date, p.usd from stats.payout p where p.date <= today order by p.date desc limit 16) d;

  select h.computed_at, h.since_date, h.total_usd, h.best_day_usd, h.worst_day_usd
    into v_snapshot_at, since_date, total_usd, best_day_usd, worst_day_usd from stats.history_snapshot h;
  if v_snapshot_at is null or v_snapshot_at > p_now or exists (select from stats.payout p
      where p.date > (v_snapshot_at at time zone 'UTC')::date and p.date <= today) then
    since_date := stats.since_date(today);
    select sum(p.usd), max(p.usd), min(p.usd) into total_usd, best_day_usd, worst_day_usd
      from stats.payout p where p.date >= payout_figures.since_date and p.date <= today;
  end if;

  last_night_usd := round(last_night.usd, 2);
  last_night_date := last_night.date;
  total_usd := round(total_usd, 2);
  best_day_usd := round(best_day_usd, 2);
  worst_day_usd := round(worst_day_usd, 2);
end $function$
;

CREATE OR REPLACE FUNCTION stats.refresh_figures()
 RETURNS void
 LANGUAGE sql
 SECURITY DEFINER
 SET search_path TO ''
AS $function$
  select stats.refresh_history_snapshot();
  select stats.refresh_stats_snapshot();
$function$
;

CREATE OR REPLACE FUNCTION stats.refresh_stats_snapshot()
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO ''
AS $function$
begin
  -- The wall clock, not the transaction's start: a reader whose now() is later sees every row this
  -- transaction wrote.
  insert into stats.stats_snapshot select * from stats.stats_figures(clock_timestamp())
    on conflict (id) do update set computed_at = excluded.computed_at, valid_until = excluded.valid_until,
      updated_at = excluded.updated_at, daily = excluded.daily, last_night_usd = excluded.last_night_usd,
      last_night_date = excluded.last_night_date, total_usd = excluded.total_usd, since_date = excluded.since_date,
      best_day_usd = excluded.best_day_usd, worst_day_usd = excluded.worst_day_usd, accrual = excluded.accrual,
      breadth = excluded.breadth, capital = excluded.capital, returns = excluded.returns, data_source = excluded.data_source;
end $function$
;

CREATE OR REPLACE FUNCTION stats.stats_figures(p_now timestamp with time zone)
 RETURNS stats.stats_snapshot
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
declare
  today date := (p_now at time zone 'UTC')::date;
  s stats.stats_snapshot;
begin
  s.id := true;
  s.computed_at := p_now;
  s.valid_until := least(
    (select min(a.observed_at) from stats.accrual a where a.observed_at > p_now),
    (select min(b.observed_at) from stats.breadth b where b.observed_at > p_now),
    (select min(c.observed_at) from stats.capital c where c.observed_at > p_now),
    (select min(p.date) from stats.payout p where p.date > today)::timestamp at time zone 'UTC',
    (select min(t.date) from stats.trading_cost t where t.date > today)::timestamp at time zone 'UTC');
  s.updated_at := stats.figures_updated_at(p_now);
  select f.daily, f.last_night_usd, f.last_night_date, f.total_usd, f.since_date, f.best_day_usd, f.worst_day_usd
    into s.daily, s.last_night_usd, s.last_night_date, s.total_usd, s.since_date, s.best_day_usd, s.worst_day_usd
    from stats.payout_figures(p_now) f;
  select a into s.accrual from stats.accrual a where a.observed_at <= p_now order by a.observed_at desc limit 1;
  select b into s.breadth from stats.breadth b where b.observed_at <= p_now order by b.observed_at desc limit 1;
  s.capital := stats.capital_figure(p_now);
  s.returns := stats.returns_figures(p_now, s.last_night_date);
  s.data_source := stats.data_source();
  return s;
end $function$
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
  if snapshot.computed_at is not null and p_now >= snapshot.computed_at and not stats.figures_pending_here() then
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

CREATE OR REPLACE FUNCTION stats.stats_at(p_now timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
declare
  s stats.stats_snapshot;
  accrual record;
begin
  select * into s from stats.stats_snapshot;
  if s.computed_at is null or p_now < s.computed_at or p_now >= s.valid_until or stats.figures_pending_here() then
    s := stats.stats_figures(p_now);
  end if;
  accrual := stats.accrual_figures(p_now, s.accrual);
  return json_build_object(
    'updated_at', stats.iso(s.updated_at),
    'daily', s.daily,
    'last_night_usd', s.last_night_usd,
    'last_night_date', s.last_night_date,
    'accrued_today_usd', accrual.accrued_today_usd,
    'accrued_today_markets', accrual.accrued_today_markets,
    'markets_quoted_24h', stats.breadth_figure(p_now, s.breadth),
    'total_usd', s.total_usd,
    'since_date', s.since_date,
    'best_day_usd', s.best_day_usd,
    'worst_day_usd', s.worst_day_usd,
    'capital', s.capital,
    'returns', s.returns,
    'data_source', s.data_source);
end $function$
;

grant select on table "stats"."stats_snapshot" to "stats_writer";

CREATE CONSTRAINT TRIGGER accrual_figures_changed AFTER INSERT OR DELETE OR UPDATE ON stats.accrual DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION stats.figures_changed();

CREATE TRIGGER accrual_figures_pending AFTER INSERT OR DELETE OR UPDATE ON stats.accrual FOR EACH STATEMENT EXECUTE FUNCTION stats.figures_pending();

CREATE TRIGGER accrual_figures_truncated AFTER TRUNCATE ON stats.accrual FOR EACH STATEMENT EXECUTE FUNCTION stats.figures_truncated();

CREATE CONSTRAINT TRIGGER breadth_figures_changed AFTER INSERT OR DELETE OR UPDATE ON stats.breadth DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION stats.figures_changed();

CREATE TRIGGER breadth_figures_pending AFTER INSERT OR DELETE OR UPDATE ON stats.breadth FOR EACH STATEMENT EXECUTE FUNCTION stats.figures_pending();

CREATE TRIGGER breadth_figures_truncated AFTER TRUNCATE ON stats.breadth FOR EACH STATEMENT EXECUTE FUNCTION stats.figures_truncated();

CREATE CONSTRAINT TRIGGER capital_figures_changed AFTER INSERT OR DELETE OR UPDATE ON stats.capital DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION stats.figures_changed();

CREATE TRIGGER capital_figures_pending AFTER INSERT OR DELETE OR UPDATE ON stats.capital FOR EACH STATEMENT EXECUTE FUNCTION stats.figures_pending();

CREATE TRIGGER capital_figures_truncated AFTER TRUNCATE ON stats.capital FOR EACH STATEMENT EXECUTE FUNCTION stats.figures_truncated();

CREATE CONSTRAINT TRIGGER log_entry_figures_changed AFTER INSERT OR DELETE ON stats.log_entry DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION stats.figures_changed();

CREATE TRIGGER log_entry_figures_pending AFTER INSERT OR DELETE ON stats.log_entry FOR EACH STATEMENT EXECUTE FUNCTION stats.figures_pending();

CREATE CONSTRAINT TRIGGER payout_figures_changed AFTER INSERT OR DELETE OR UPDATE ON stats.payout DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION stats.figures_changed();

CREATE TRIGGER payout_figures_pending AFTER INSERT OR DELETE OR UPDATE ON stats.payout FOR EACH STATEMENT EXECUTE FUNCTION stats.figures_pending();

CREATE TRIGGER payout_figures_truncated AFTER TRUNCATE ON stats.payout FOR EACH STATEMENT EXECUTE FUNCTION stats.figures_truncated();

CREATE CONSTRAINT TRIGGER settings_figures_changed AFTER UPDATE OF since_date, window_days, data_source ON stats.settings DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION stats.figures_changed();

CREATE TRIGGER settings_figures_pending AFTER UPDATE OF since_date, window_days, data_source ON stats.settings FOR EACH STATEMENT EXECUTE FUNCTION stats.figures_pending();

CREATE CONSTRAINT TRIGGER trading_cost_figures_changed AFTER INSERT OR DELETE OR UPDATE ON stats.trading_cost DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION stats.figures_changed();

CREATE TRIGGER trading_cost_figures_pending AFTER INSERT OR DELETE OR UPDATE ON stats.trading_cost FOR EACH STATEMENT EXECUTE FUNCTION stats.figures_pending();

CREATE TRIGGER trading_cost_figures_truncated AFTER TRUNCATE ON stats.trading_cost FOR EACH STATEMENT EXECUTE FUNCTION stats.figures_truncated();

alter table "stats"."stats_snapshot" owner to stats_owner;
alter function stats.accrual_figures(timestamptz, stats.accrual) owner to stats_owner;
grant execute on function stats.accrual_figures(timestamptz, stats.accrual) to stats_writer;
alter function stats.breadth_figure(timestamptz, stats.breadth) owner to stats_owner;
grant execute on function stats.breadth_figure(timestamptz, stats.breadth) to stats_writer;
alter function stats.payout_figures(timestamptz) owner to stats_owner;
grant execute on function stats.payout_figures(timestamptz) to stats_writer;
alter function stats.stats_figures(timestamptz) owner to stats_owner;
grant execute on function stats.stats_figures(timestamptz) to stats_writer;
alter function stats.figures_pending_here() owner to stats_owner;
grant execute on function stats.figures_pending_here() to stats_writer;
alter function stats.refresh_stats_snapshot() owner to stats_owner;
alter function stats.refresh_figures() owner to stats_owner;
alter function stats.figures_changed() owner to stats_owner;
alter function stats.figures_pending() owner to stats_owner;
alter function stats.figures_truncated() owner to stats_owner;

-- The data already there: its snapshot, so the record is read from it from now on.
select stats.refresh_stats_snapshot();
