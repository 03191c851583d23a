-- The stats record, assembled from the figure groups defined one per file (20_… to 26_…). The
-- edge, MCP and A2A layers only reshape what it returns.
--
-- stats.stats_at(now) and every figure function take the clock as an argument so tests can pin it;
-- public.landing_stats() calls it with now(). Conventions: today = the UTC date of now; amounts keep
-- full precision and are rounded to cents once, where they are published (round(numeric, 2): half
-- away from zero); a published sum adds up the published values it covers, so it foots with them;
-- "no data" is null, never a made-up zero. Every lookup of a time series is a limit-1 probe or a
-- range bound on the primary key, so the cost stays flat however much history accumulates. Generic
-- plans: every statement is planned once per connection, not on every call (the plans are the same
-- whatever the clock says).
--
-- The figures change only when data are written, so they are worked out when a transaction that
-- wrote them commits (35_figure_snapshots.sql), into stats.stats_snapshot, and a read assembles the
-- record from that one row.
-- Only two figures move with the clock alone, and they are applied at read time to the snapshot's
-- latest rows: today's accrual (none once the day has turned) and the 24-hour breadth. A snapshot
-- answers for clocks from its making until the first stored row dated after it would count
-- (valid_until: a row observed, or a night dated, ahead of the clock); any other clock (tests pin
-- it), no snapshot (after a TRUNCATE), or a transaction that has written figures and not yet
-- committed, works the figures out live, so the answer is the same.

-- Everything the record needs as of p_now, worked out from the tables.
create table stats.stats_snapshot (
  id boolean primary key default true check (id),
  computed_at timestamptz not null,
  -- The first time after computed_at at which a stored row enters the figures; null: none does.
  valid_until timestamptz,
  updated_at timestamptz,
  daily json not null,
  last_night_usd numeric,
  last_night_date date,
  total_usd numeric,
  since_date date,
  best_day_usd numeric,
  worst_day_usd numeric,
  -- The latest accrual and breadth observed at or before computed_at, of any day.
  accrual stats.accrual,
  breadth stats.breadth,
  capital json,
  returns json,
  data_source text,
  audit json,
  audits_unfinished integer
);
alter table stats.stats_snapshot owner to stats_owner;
-- The writer reads the stats record (its status command), which is read from here.
grant select on stats.stats_snapshot to stats_writer;

create function stats.stats_figures(p_now timestamptz) returns stats.stats_snapshot
language plpgsql stable set search_path = '' set plan_cache_mode = force_generic_plan as $$
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
  s.audit := stats.audit_figure(p_now);
  s.audits_unfinished := stats.audits_unfinished(p_now);
  return s;
end $$;
alter function stats.stats_figures(timestamptz) owner to stats_owner;
grant execute on function stats.stats_figures(timestamptz) to stats_writer;

create function stats.refresh_stats_snapshot() returns void
language plpgsql security definer set search_path = '' as $$
begin
  -- The wall clock, not the transaction's start: a reader whose now() is later sees every row this
  -- transaction wrote.
  insert into stats.stats_snapshot select * from stats.stats_figures(clock_timestamp())
    on conflict (id) do update set computed_at = excluded.computed_at, valid_until = excluded.valid_until,
      updated_at = excluded.updated_at, daily = excluded.daily, last_night_usd = excluded.last_night_usd,
      last_night_date = excluded.last_night_date, total_usd = excluded.total_usd, since_date = excluded.since_date,
      best_day_usd = excluded.best_day_usd, worst_day_usd = excluded.worst_day_usd, accrual = excluded.accrual,
      breadth = excluded.breadth, capital = excluded.capital, returns = excluded.returns, data_source = excluded.data_source,
      audit = excluded.audit, audits_unfinished = excluded.audits_unfinished;
end $$;
alter function stats.refresh_stats_snapshot() owner to stats_owner;

create function stats.stats_at(p_now timestamptz) returns json
language plpgsql stable set search_path = '' set plan_cache_mode = force_generic_plan as $$
declare
  s stats.stats_snapshot;
  accrual record;
begin
  select * into s from stats.stats_snapshot;
  if not stats.snapshot_holds(s.computed_at, s.valid_until, p_now) then
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
    'data_source', s.data_source,
    'log_checkpoint', stats.log_head(),
    'audit', s.audit,
    'audits_unfinished', s.audits_unfinished);
end $$;
alter function stats.stats_at(timestamptz) owner to stats_owner;
grant execute on function stats.stats_at(timestamptz) to stats_writer;
