-- landing_history is read as one stored record: the history snapshot keeps the whole record, good until
-- the first row dated ahead of it (stats.figures_valid_until, which the stats snapshot uses too).
-- The snapshot is derived: it goes, and is made again at the end.
delete from stats.history_snapshot;

alter table "stats"."history_snapshot" drop column "nights";

alter table "stats"."history_snapshot" add column "record" json not null;

alter table "stats"."history_snapshot" add column "valid_until" timestamp with time zone;

set check_function_bodies = off;

CREATE OR REPLACE FUNCTION stats.figures_valid_until(p_now timestamp with time zone)
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
declare
  today date := (p_now at time zone 'UTC')::date;
begin
  return least(
    (select min(a.observed_at) from stats.accrual a where a.observed_at > p_now),
    (select min(b.observed_at) from stats.breadth b where b.observed_at > p_now),
    (select min(c.observed_at) from stats.capital c where c.observed_at > p_now),
    (select min(p.date) from stats.payout p where p.date > today)::timestamp at time zone 'UTC',
    (select min(t.date) from stats.trading_cost t where t.date > today)::timestamp at time zone 'UTC');
end $function$
;

CREATE OR REPLACE FUNCTION stats.history_record(p_now timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
declare
  v_since date := stats.since_date((p_now at time zone 'UTC')::date);
begin
  return json_build_object(
    'updated_at', stats.iso(stats.figures_updated_at(p_now)),
    'since_date', v_since,
    'data_source', stats.data_source(),
    'nights', stats.history_nights(p_now, v_since));
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
begin
  select * into snapshot from stats.history_snapshot;
  if snapshot.computed_at is not null and p_now >= snapshot.computed_at
      and (snapshot.valid_until is null or p_now < snapshot.valid_until) and not stats.figures_pending_here() then
    return snapshot.record;
  end if;
  return stats.history_record(p_now);
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
  today date := (at at time zone 'UTC')::date;
  since date := stats.since_date(today);
begin
  insert into stats.history_snapshot (id, computed_at, valid_until, record, since_date, total_usd, best_day_usd, worst_day_usd)
    select true, at, stats.figures_valid_until(at), stats.history_record(at), since, sum(p.usd), max(p.usd), min(p.usd)
      from stats.payout p where p.date >= since and p.date <= today
    on conflict (id) do update set computed_at = excluded.computed_at, valid_until = excluded.valid_until,
      record = excluded.record, since_date = excluded.since_date,
      total_usd = excluded.total_usd, best_day_usd = excluded.best_day_usd, worst_day_usd = excluded.worst_day_usd;
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
  s stats.stats_snapshot;
begin
  s.id := true;
  s.computed_at := p_now;
  s.valid_until := stats.figures_valid_until(p_now);
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

alter function stats.figures_valid_until(timestamptz) owner to stats_owner;
grant execute on function stats.figures_valid_until(timestamptz) to stats_writer;
alter function stats.history_record(timestamptz) owner to stats_owner;

select stats.refresh_history_snapshot();
