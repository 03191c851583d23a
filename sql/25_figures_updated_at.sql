-- The latest time a published figure changed: the newest accrual, breadth and capital observation,
-- the newest recorded or corrected payout and trading cost, and the newest audit published.
create function stats.figures_updated_at(p_now timestamptz) returns timestamptz
language plpgsql stable set search_path = '' set plan_cache_mode = force_generic_plan as $$
declare
  today date := (p_now at time zone 'UTC')::date;
begin
  return greatest(
    (select max(a.observed_at) from stats.accrual a where a.observed_at <= p_now),
    (select max(b.observed_at) from stats.breadth b where b.observed_at <= p_now),
    (select max(c.observed_at) from stats.capital c where c.observed_at <= p_now),
    (select max(p.updated_at) from stats.payout p where p.date <= today),
    (select max(t.updated_at) from stats.trading_cost t where t.date <= today),
    (select max(a.published_at) from stats.log_audits(p_now) a));
end $$;
alter function stats.figures_updated_at(timestamptz) owner to stats_owner;
grant execute on function stats.figures_updated_at(timestamptz) to stats_writer;

-- The first time after p_now at which a row already stored enters the figures: an observation, a
-- night's payout or cost, or an audit, dated ahead of p_now. Null: none. What was worked out at p_now holds until then.
create function stats.figures_valid_until(p_now timestamptz) returns timestamptz
language plpgsql stable set search_path = '' set plan_cache_mode = force_generic_plan as $$
declare
  today date := (p_now at time zone 'UTC')::date;
begin
  return least(
    (select min(a.observed_at) from stats.accrual a where a.observed_at > p_now),
    (select min(b.observed_at) from stats.breadth b where b.observed_at > p_now),
    (select min(c.observed_at) from stats.capital c where c.observed_at > p_now),
    (select min(p.date) from stats.payout p where p.date > today)::timestamp at time zone 'UTC',
    (select min(t.date) from stats.trading_cost t where t.date > today)::timestamp at time zone 'UTC',
    (select min(a.published_at) from stats.log_audit a where a.published_at > p_now));
end $$;
alter function stats.figures_valid_until(timestamptz) owner to stats_owner;
grant execute on function stats.figures_valid_until(timestamptz) to stats_writer;
