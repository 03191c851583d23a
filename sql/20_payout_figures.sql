-- Where the track record starts: the since_date setting, else the first payout dated today or earlier.
create function stats.since_date(p_today date) returns date
language sql stable set search_path = '' as $$
  select coalesce((select s.since_date from stats.settings s), (select min(p.date) from stats.payout p where p.date <= p_today))
$$;
alter function stats.since_date(date) owner to stats_owner;
grant execute on function stats.since_date(date) to stats_writer;

-- Nightly payouts: the latest 16 nights dated today or earlier, oldest first; the latest night; and
-- the totals from since_date: sum, best and worst night. The totals come from the history snapshot
-- (27_history.sql), rebuilt whenever a payout or since_date changes, when it holds the same nights:
-- it was made at or before p_now and no payout is dated after its day and up to today. Otherwise
-- (a clock pinned before it, a TRUNCATE, a payout dated ahead that has come due) they are summed here.
create function stats.payout_figures(p_now timestamptz) returns json
language plpgsql stable set search_path = '' set plan_cache_mode = force_generic_plan as $$
declare
  today date := (p_now at time zone 'UTC')::date;
  last_night stats.payout;
  v_daily json;
  v_since date;
  v_total numeric;
  v_best numeric;
  v_worst numeric;
  v_snapshot_at timestamptz;
begin
  select * into last_night from stats.payout where date <= today order by date desc limit 1;
  select json_agg(json_build_object('date', d.date, 'usd', round(d.usd, 2)) order by d.date)
    into v_daily
    from (select p.date, p.usd from stats.payout p where p.date <= today order by p.date desc limit 16) d;

  select h.computed_at, h.since_date, h.total_usd, h.best_day_usd, h.worst_day_usd
    into v_snapshot_at, v_since, v_total, v_best, v_worst from stats.history_snapshot h;
  if v_snapshot_at is null or v_snapshot_at > p_now or exists (select from stats.payout p
      where p.date > (v_snapshot_at at time zone 'UTC')::date and p.date <= today) then
    v_since := stats.since_date(today);
    select sum(p.usd), max(p.usd), min(p.usd) into v_total, v_best, v_worst
      from stats.payout p where p.date >= v_since and p.date <= today;
  end if;

  return json_build_object(
    'daily', coalesce(v_daily, '[]'::json),
    'last_night_usd', round(last_night.usd, 2),
    'last_night_date', last_night.date,
    'total_usd', round(v_total, 2),
    'since_date', v_since,
    'best_day_usd', round(v_best, 2),
    'worst_day_usd', round(v_worst, 2));
end $$;
alter function stats.payout_figures(timestamptz) owner to stats_owner;
grant execute on function stats.payout_figures(timestamptz) to stats_writer;
