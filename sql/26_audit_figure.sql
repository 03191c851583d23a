-- Whether an auditor counts: its verifier key is on an `auditor <vkey>` line of the witness policy
-- the writer worked under at p_now (stats.log_policy), the policy the site publishes beside its log.
-- An attestation by any other key is still served under /log/audits, never shown as the audit.
create function stats.auditor_listed(p_auditor_key text, p_now timestamptz) returns boolean
language sql stable set search_path = '' as $$
  select coalesce((
    select bool_or(pg_catalog.regexp_split_to_array(pg_catalog.btrim(l, E' \t'), E'[ \t]+') = array['auditor', p_auditor_key])
    from (select p.policy from stats.log_policy p where p.recorded_at <= p_now order by p.recorded_at desc limit 1) lp,
      pg_catalog.unnest(pg_catalog.string_to_array(lp.policy, E'\n')) l), false)
$$;
alter function stats.auditor_listed(text, timestamptz) owner to stats_owner;
grant execute on function stats.auditor_listed(text, timestamptz) to stats_writer;

-- The latest audit: of the version 2 attestations published for the log in use by p_now, by an
-- auditor the policy lists, the latest one, as the auditor signed it (its day, its key name, how the
-- nights were chosen, how many it checked and how many matched, its result, the size of the checkpoint
-- it judged them within) and when it was published; null before any.
create function stats.audit_figure(p_now timestamptz) returns json
language sql stable set search_path = '' set plan_cache_mode = force_generic_plan as $$
  select json_build_object(
    'date', a.audit_date,
    'auditor', a.auditor,
    'chosen', a.chosen,
    'result', a.result,
    'nights_checked', cardinality(a.nights),
    'nights_matched', a.nights_matched,
    'checkpoint_size', a.checkpoint_size,
    'published_at', stats.iso(a.published_at))
  from stats.log_audits(p_now) a
  where a.result is not null and stats.auditor_listed(a.auditor_key, p_now)
  order by a.published_at desc, a.id desc limit 1
$$;
alter function stats.audit_figure(timestamptz) owner to stats_owner;
grant execute on function stats.audit_figure(timestamptz) to stats_writer;

-- How many audits the log in use (that of the latest checkpoint) holds openings of, signed by p_now, with no attestation published
-- by p_now: begun and not finished, or abandoned.
create function stats.audits_unfinished(p_now timestamptz) returns integer
language sql stable set search_path = '' as $$
  select count(*)::integer from stats.log_entry l
  where l.date is null and l.entry::jsonb ->> 'kind' = 'audit' and l.idx < (select coalesce(max(c.size), 0) from stats.log_checkpoint c where c.signed_at <= p_now)
    and l.is_demo = (select c.is_demo from stats.log_checkpoint c order by c.size desc limit 1)
    and not exists (select from stats.log_audits(p_now) a where a.opening_idx = l.idx)
$$;
alter function stats.audits_unfinished(timestamptz) owner to stats_owner;
grant execute on function stats.audits_unfinished(timestamptz) to stats_writer;
