-- Where the track record starts: the since_date setting, else the first payout dated today or earlier.
create function stats.since_date(p_today date) returns date
language sql stable set search_path = '' as $$
  select coalesce((select s.since_date from stats.settings s), (select min(p.date) from stats.payout p where p.date <= p_today))
$$;
alter function stats.since_date(date) owner to stats_owner;
grant execute on function stats.since_date(date) to stats_writer;

-- Nightly payouts: the latest 16 nights dated today or earlier, oldest first; the latest night; and
-- the totals from since_date: sum, best and worst night. The total is the sum of the nights as
-- published (each rounded to cents), so anyone who adds up the published nights reaches it exactly;
-- summing at full precision and rounding once drifts by cents from that over a few hundred nights.
-- The totals come from the history snapshot
-- (27_history.sql) when it holds the figures as of p_now (stats.snapshot_holds); otherwise (a clock
-- pinned before it, a TRUNCATE, a row dated ahead that has come due, this transaction's own writes
-- before its commit) they are summed here.
create function stats.payout_figures(p_now timestamptz,
  out daily json, out last_night_usd numeric, out last_night_date date, out total_usd numeric,
  out since_date date, out best_day_usd numeric, out worst_day_usd numeric)
language plpgsql stable set search_path = '' set plan_cache_mode = force_generic_plan as $$
declare
  today date := (p_now at time zone 'UTC')::date;
  last_night stats.payout;
  v_snapshot_at timestamptz;
  v_valid_until timestamptz;
begin
  select * into last_night from stats.payout p where p.date <= today order by p.date desc limit 1;
  select coalesce(json_agg(json_build_object('date', d.date, 'usd', round(d.usd, 2)) order by d.date), '[]'::json)
    into daily
    from (select p.date, p.usd from stats.payout p where p.date <= today order by p.date desc limit 16) d;

  select h.computed_at, h.valid_until, h.since_date, h.total_usd, h.best_day_usd, h.worst_day_usd
    into v_snapshot_at, v_valid_until, since_date, total_usd, best_day_usd, worst_day_usd from stats.history_snapshot h;
  if not stats.snapshot_holds(v_snapshot_at, v_valid_until, p_now) then
    since_date := stats.since_date(today);
    select sum(round(p.usd, 2)), max(p.usd), min(p.usd) into total_usd, best_day_usd, worst_day_usd
      from stats.payout p where p.date >= payout_figures.since_date and p.date <= today;
  end if;

  last_night_usd := round(last_night.usd, 2);
  last_night_date := last_night.date;
  best_day_usd := round(best_day_usd, 2);
  worst_day_usd := round(worst_day_usd, 2);
end $$;
alter function stats.payout_figures(timestamptz) owner to stats_owner;
grant execute on function stats.payout_figures(timestamptz) to stats_writer;
