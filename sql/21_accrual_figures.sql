-- Today's accrual from the latest snapshot observed at or before p_now (p_latest, of any day): its
-- figures when it was observed today (UTC), never yesterday's; 0 and 0 otherwise.
create function stats.accrual_figures(p_now timestamptz, p_latest stats.accrual,
  out accrued_today_usd numeric, out accrued_today_markets integer)
language sql stable set search_path = '' as $$
  select case when today then round(p_latest.usd, 2) else 0 end, case when today then p_latest.markets else 0 end
    from (select p_latest.observed_at >= (p_now at time zone 'UTC')::date::timestamp at time zone 'UTC' as today) t
$$;
alter function stats.accrual_figures(timestamptz, stats.accrual) owner to stats_owner;
grant execute on function stats.accrual_figures(timestamptz, stats.accrual) to stats_writer;
