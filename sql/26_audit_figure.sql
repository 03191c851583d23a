-- The latest audit: of the attestations published for the log in use by p_now, the latest one, as
-- the auditor signed it (its day, its key name, how many nights it checked and how many matched,
-- the size of the checkpoint it checked them against) and when it was published; null before any.
create function stats.audit_figure(p_now timestamptz) returns json
language sql stable set search_path = '' set plan_cache_mode = force_generic_plan as $$
  select json_build_object(
    'date', a.audit_date,
    'auditor', a.auditor,
    'nights_checked', cardinality(a.nights),
    'nights_matched', a.nights_matched,
    'checkpoint_size', a.checkpoint_size,
    'published_at', stats.iso(a.published_at))
  from stats.log_audits(p_now) a order by a.published_at desc, a.id desc limit 1
$$;
alter function stats.audit_figure(timestamptz) owner to stats_owner;
grant execute on function stats.audit_figure(timestamptz) to stats_writer;
