-- The whole track record: every settled night since since_date, oldest first, with the running gross
-- total, that date's trading cost (null when none is recorded), the capital base the returns use for
-- that day (its last at-stake snapshot, null when the day has none), when the night's payout was
-- first recorded or last corrected, the transparency log's latest signed entry for that date (null
-- until the night is final), and when the witnesses' quorum first cosigned a checkpoint holding the
-- night's first entry. Every amount is rounded to cents once; the running total is the sum of the
-- nights as published (each rounded to cents), so it foots with them exactly.
--
-- A night is witnessed on time when that cosigning came no later than a day after the night turned
-- final (its date plus three days): later, and the night could have been made up after the fact, so
-- it is reported as logged late. Without a witness policy the question has no answer (null).
--
-- Building ten years of nights takes tens of milliseconds (JSON for 3,650 rows and a capital probe
-- per night), so the record is built when the data change, not when it is read: into
-- stats.history_snapshot, rebuilt as each transaction that changed them commits
-- (35_figure_snapshots.sql), which history_at returns as it is. A clock the snapshot does not cover
-- (pinned before it in tests, or past a row dated ahead of it), a missing snapshot (after a TRUNCATE)
-- or a transaction that has written and not yet committed works the record out live, so the answer
-- is the same either way.

-- The nights as of p_now, computed from the tables: one index range over payout, a merge with
-- trading_cost, and a limit-1 probe into capital per night.
create function stats.history_nights(p_now timestamptz, p_since date) returns json
language sql stable set search_path = '' set plan_cache_mode = force_generic_plan as $$
  select coalesce(json_agg(json_build_object(
      'date', n.date,
      'usd', round(n.usd, 2),
      'total_usd', n.total,
      'trading_cost_usd', round(n.cost, 2),
      'at_stake_usd', round(n.at_stake, 2),
      'updated_at', stats.iso(n.updated_at),
      'log_index', n.log_index,
      'witnessed_at', stats.iso(n.witnessed_at),
      'witnessed_on_time', case
        when not n.witnessed then null
        when n.witnessed_at is not null then n.witnessed_at <= n.deadline
        when p_now > n.deadline then false
      end) order by n.date), '[]'::json)
    from (
      select p.date, p.usd, p.updated_at,
        sum(round(p.usd, 2)) over (order by p.date) as total,
        t.usd as cost,
        (select c.cash_usd + c.inventory_usd from stats.capital c
          where c.observed_at >= p.date::timestamp at time zone 'UTC'
            and c.observed_at < p.date::timestamp at time zone 'UTC' + interval '24 hours'
            and c.observed_at <= p_now
          order by c.observed_at desc limit 1) as at_stake,
        (select l.idx from stats.log_entry l where l.date = p.date and l.idx < signed.size
          order by l.idx desc limit 1) as log_index,
        (select min(w.quorum_at) from stats.log_witnessed w where w.size > (
          select min(l.idx) from stats.log_entry l where l.date = p.date)) as witnessed_at,
        p.date::timestamp at time zone 'UTC' + interval '4 days' as deadline,
        witnessing.policy is not null as witnessed
      from stats.payout p
      cross join (select stats.log_size() as size) signed
      left join lateral (select lp.policy from stats.log_policy lp order by lp.recorded_at desc limit 1) witnessing on true
      left join stats.trading_cost t on t.date = p.date
      where p.date >= p_since and p.date <= (p_now at time zone 'UTC')::date
    ) n
$$;
alter function stats.history_nights(timestamptz, date) owner to stats_owner;

-- The whole record as of p_now, worked out from the tables.
create function stats.history_record(p_now timestamptz) returns json
language plpgsql stable set search_path = '' set plan_cache_mode = force_generic_plan as $$
declare
  v_since date := stats.since_date((p_now at time zone 'UTC')::date);
begin
  return json_build_object(
    'updated_at', stats.iso(stats.figures_updated_at(p_now)),
    'since_date', v_since,
    'data_source', stats.data_source(),
    'log_checkpoint', stats.log_head(),
    'nights', stats.history_nights(p_now, v_since));
end $$;
alter function stats.history_record(timestamptz) owner to stats_owner;

-- One row: the record as of computed_at, good until valid_until (the first stored row dated ahead of
-- it; null: none), and the totals over its nights that the stats record shows (payout_figures),
-- which would otherwise read every night on every call.
create table stats.history_snapshot (
  id boolean primary key default true check (id),
  since_date date,
  computed_at timestamptz not null,
  total_usd numeric,
  best_day_usd numeric,
  worst_day_usd numeric,
  record json not null,
  valid_until timestamptz
);
alter table stats.history_snapshot owner to stats_owner;
-- The writer reads the stats record (its status command), whose totals come from here.
grant select on stats.history_snapshot to stats_writer;

create function stats.refresh_history_snapshot() returns void
language plpgsql security definer set search_path = '' as $$
declare
  -- The wall clock, not the transaction's start: a reader whose now() is later sees every row this
  -- transaction wrote.
  at timestamptz := clock_timestamp();
  today date := (at at time zone 'UTC')::date;
  since date := stats.since_date(today);
begin
  insert into stats.history_snapshot (id, computed_at, valid_until, record, since_date, total_usd, best_day_usd, worst_day_usd)
    select true, at, stats.figures_valid_until(at), stats.history_record(at), since, sum(round(p.usd, 2)), max(p.usd), min(p.usd)
      from stats.payout p where p.date >= since and p.date <= today
    on conflict (id) do update set computed_at = excluded.computed_at, valid_until = excluded.valid_until,
      record = excluded.record, since_date = excluded.since_date,
      total_usd = excluded.total_usd, best_day_usd = excluded.best_day_usd, worst_day_usd = excluded.worst_day_usd;
end $$;
alter function stats.refresh_history_snapshot() owner to stats_owner;

create function stats.history_at(p_now timestamptz) returns json
language plpgsql stable set search_path = '' set plan_cache_mode = force_generic_plan as $$
declare
  snapshot stats.history_snapshot;
begin
  select * into snapshot from stats.history_snapshot;
  if stats.snapshot_holds(snapshot.computed_at, snapshot.valid_until, p_now) then
    return snapshot.record;
  end if;
  return stats.history_record(p_now);
end $$;
alter function stats.history_at(timestamptz) owner to stats_owner;
grant execute on function stats.history_at(timestamptz) to stats_writer;
