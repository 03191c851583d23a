-- The stats record, assembled from the figure groups defined one per file (20_… to 26_…). The
-- edge, MCP and A2A layers only reshape what it returns.
--
-- stats.stats_at(now) and every figure function take the clock as an argument so tests can pin it;
-- public.landing_stats() calls it with now(). Conventions: today = the UTC date of now; amounts keep
-- full precision and are rounded to cents once, at the end (round(numeric, 2): half away from zero);
-- "no data" is null, never a made-up zero. Every lookup of a time series is a limit-1 probe or a
-- range bound on the primary key, so the cost stays flat however much history accumulates. Generic
-- plans: every statement is planned once per connection, not on every call (the plans are the same
-- whatever the clock says).
create function stats.stats_at(p_now timestamptz) returns json
language plpgsql stable set search_path = '' set plan_cache_mode = force_generic_plan as $$
declare
  payouts json := stats.payout_figures(p_now);
  accrual json := stats.accrual_figures(p_now);
begin
  return json_build_object(
    'updated_at', stats.iso(stats.figures_updated_at(p_now)),
    'daily', payouts -> 'daily',
    'last_night_usd', payouts -> 'last_night_usd',
    'last_night_date', payouts -> 'last_night_date',
    'accrued_today_usd', accrual -> 'accrued_today_usd',
    'accrued_today_markets', accrual -> 'accrued_today_markets',
    'markets_quoted_24h', stats.breadth_figure(p_now),
    'total_usd', payouts -> 'total_usd',
    'since_date', payouts -> 'since_date',
    'best_day_usd', payouts -> 'best_day_usd',
    'worst_day_usd', payouts -> 'worst_day_usd',
    'capital', stats.capital_figure(p_now),
    'returns', stats.returns_figures(p_now, (payouts ->> 'last_night_date')::date),
    'data_source', stats.data_source());
end $$;
alter function stats.stats_at(timestamptz) owner to stats_owner;
grant execute on function stats.stats_at(timestamptz) to stats_writer;
