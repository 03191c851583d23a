-- Audits begin in the log: an opening entry (kind "audit") names the auditor, the SHA-256 of its
-- nonce and the checkpoint to draw from; attestations are version 2 (opening, how the nights were
-- chosen, each night's result, pass or fail); the stats record shows only an auditor the policy lists,
-- and counts the audits opened with no result.
alter table "stats"."log_audit" add column "chosen" text;

alter table "stats"."log_audit" add column "log_key" text;

alter table "stats"."log_audit" add column "nonce" text;

alter table "stats"."log_audit" add column "opening_idx" bigint;

alter table "stats"."log_audit" add column "payers_sha256" text;

alter table "stats"."log_audit" add column "result" text;

alter table "stats"."log_audit" add column "sample_k" integer;

alter table "stats"."stats_snapshot" add column "audits_unfinished" integer;

CREATE UNIQUE INDEX log_audit_opening_idx ON stats.log_audit USING btree (origin, opening_idx);

CREATE UNIQUE INDEX log_entry_audit_nonce_idx ON stats.log_entry USING btree ((((entry)::jsonb ->> 'nonce_sha256'::text))) WHERE ((date IS NULL) AND (((entry)::jsonb ->> 'kind'::text) = 'audit'::text));

alter table "stats"."log_audit" add constraint "log_audit_chosen_check" CHECK ((chosen = ANY (ARRAY['drawn'::text, 'named'::text]))) not valid;

alter table "stats"."log_audit" validate constraint "log_audit_chosen_check";

alter table "stats"."log_audit" add constraint "log_audit_result_check" CHECK ((result = ANY (ARRAY['pass'::text, 'fail'::text]))) not valid;

alter table "stats"."log_audit" validate constraint "log_audit_result_check";

alter table "stats"."log_audit" add constraint "log_audit_sample_k_check" CHECK ((sample_k > 0)) not valid;

alter table "stats"."log_audit" validate constraint "log_audit_sample_k_check";

alter table "stats"."log_audit" add constraint "log_audit_v2_whole" CHECK ((((opening_idx IS NULL) = (result IS NULL)) AND ((opening_idx IS NULL) = (chosen IS NULL)) AND ((opening_idx IS NULL) = (log_key IS NULL)) AND ((opening_idx IS NULL) = (payers_sha256 IS NULL)) AND ((chosen = 'drawn'::text) = (sample_k IS NOT NULL)) AND ((chosen = 'drawn'::text) = (nonce IS NOT NULL)))) not valid;

alter table "stats"."log_audit" validate constraint "log_audit_v2_whole";

set check_function_bodies = off;

CREATE OR REPLACE FUNCTION stats.auditor_listed(p_auditor_key text, p_now timestamp with time zone)
 RETURNS boolean
 LANGUAGE sql
 STABLE
 SET search_path TO ''
AS $function$
  select coalesce((
    select bool_or(pg_catalog.regexp_split_to_array(pg_catalog.btrim(l, E' \t'), E'[ \t]+') = array['auditor', p_auditor_key])
    from (select p.policy from stats.log_policy p where p.recorded_at <= p_now order by p.recorded_at desc limit 1) lp,
      pg_catalog.unnest(pg_catalog.string_to_array(lp.policy, E'\n')) l), false)
$function$
;

CREATE OR REPLACE FUNCTION stats.audits_unfinished(p_now timestamp with time zone)
 RETURNS integer
 LANGUAGE sql
 STABLE
 SET search_path TO ''
AS $function$
  select count(*)::integer from stats.log_entry l
  where l.date is null and l.entry::jsonb ->> 'kind' = 'audit' and l.idx < (select coalesce(max(c.size), 0) from stats.log_checkpoint c where c.signed_at <= p_now)
    and l.is_demo = (select c.is_demo from stats.log_checkpoint c order by c.size desc limit 1)
    and not exists (select from stats.log_audits(p_now) a where a.opening_idx = l.idx)
$function$
;

CREATE OR REPLACE FUNCTION stats.log_opening_entry_text(p_auditor text, p_checkpoint bigint, p_nonce_sha256 text, p_sample integer, p_nights date[])
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
 SET search_path TO ''
AS $function$
  select '{"auditor":"' || p_auditor || '","checkpoint":' || p_checkpoint || ',"kind":"audit"'
    || coalesce(',"nights":[' || (select pg_catalog.string_agg('"' || pg_catalog.to_char(d, 'YYYY-MM-DD') || '"', ',' order by d)
                                  from pg_catalog.unnest(p_nights) d) || ']', '')
    || ',"nonce_sha256":"' || p_nonce_sha256 || '"'
    || coalesce(',"sample":' || p_sample, '') || '}'
$function$
;

CREATE OR REPLACE FUNCTION stats.open_audit(p_auditor text, p_nonce_sha256 text, p_checkpoint bigint, p_sample integer, p_nights date[])
 RETURNS bigint
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  demo boolean := coalesce(stats.data_source() = 'demo', false);
  next_idx bigint;
begin
  if p_auditor !~ '^[^+\s"\\]+\+[0-9a-f]{8}\+[A-Za-z0-9+/]+=*$' then
    raise exception 'the auditor is not a note verifier key (<name>+<8 hex>+<base64>), or its name holds a quote or a backslash'
      using errcode = 'invalid_parameter_value';
  end if;
  if p_nonce_sha256 !~ '^[0-9a-f]{64}$' then
    raise exception 'the nonce''s SHA-256 is 64 lowercase hex digits' using errcode = 'invalid_parameter_value';
  end if;
  if (p_sample is null) = (p_nights is null) or p_sample < 1 or pg_catalog.cardinality(p_nights) = 0
     or (select count(distinct d) from pg_catalog.unnest(p_nights) d) <> pg_catalog.cardinality(p_nights) then
    raise exception 'an audit draws a sample of at least one night or names distinct nights, not both' using errcode = 'invalid_parameter_value';
  end if;
  lock table stats.log_entry in exclusive mode;
  if exists (select 1 from stats.log_halt) then
    raise exception 'the log is halted: no audit can begin until it grows again (see health)' using errcode = 'object_not_in_prerequisite_state';
  end if;
  if not exists (select from stats.log_checkpoint c where c.size = p_checkpoint) then
    raise exception 'the log signed no checkpoint of size %: name one it signed (and witnesses cosigned)', p_checkpoint
      using errcode = 'invalid_parameter_value';
  end if;
  if exists (select from stats.log_entry l where l.date is null and l.entry::jsonb ->> 'kind' = 'audit'
             and l.entry::jsonb ->> 'nonce_sha256' = p_nonce_sha256) then
    raise exception 'an audit with this nonce was opened already: the auditor picks a new nonce for every audit' using errcode = 'unique_violation';
  end if;
  select coalesce(max(idx) + 1, 0) into next_idx from stats.log_entry;
  insert into stats.log_entry (idx, date, entry, is_demo)
    values (next_idx, null, stats.log_opening_entry_text(p_auditor, p_checkpoint, p_nonce_sha256, p_sample, p_nights), demo);
  return next_idx;
end $function$
;

CREATE OR REPLACE FUNCTION stats.audit_figure(p_now timestamp with time zone)
 RETURNS json
 LANGUAGE sql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
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
$function$
;

CREATE OR REPLACE FUNCTION stats.log_append(p_now timestamp with time zone)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO ''
AS $function$
declare
  today date := (p_now at time zone 'UTC')::date;
  demo boolean := coalesce(stats.data_source() = 'demo', false);
  next_idx bigint;
  wallet text;
  logged_idx bigint;
  logged_wallet text;
  appended integer := 0;
  nights integer;
begin
  lock table stats.log_entry in exclusive mode;
  if exists (select 1 from stats.log_halt) then
    return 0;
  end if;
  select coalesce(max(idx) + 1, 0) into next_idx from stats.log_entry;

  select w.commitment into wallet from stats.wallet_commitment w where w.is_demo = demo order by w.recorded_at desc limit 1;
  select l.idx, l.entry::jsonb ->> 'wallet' into logged_idx, logged_wallet
    from stats.log_entry l where l.date is null and l.entry::jsonb ->> 'kind' = 'wallet' order by l.idx desc limit 1;
  if wallet is not null and wallet is distinct from logged_wallet then
    insert into stats.log_entry (idx, date, entry, is_demo)
      values (next_idx, null, stats.log_wallet_entry_text(wallet, logged_idx), demo);
    next_idx := next_idx + 1;
    appended := 1;
  end if;

  insert into stats.log_entry (idx, date, entry, is_demo)
    select next_idx + row_number() over (order by c.date) - 1, c.date, c.entry, demo
    from (
      select n.date, latest.entry as logged,
        stats.log_entry_text(n.date, n.usd, n.trading_cost_usd, n.at_stake_usd, n.updated_at, latest.idx,
          case when latest.idx is null or latest.entry ? 'transfers' then t.commitment end) as entry
      from json_to_recordset(stats.history_nights(p_now, stats.since_date(today)))
        as n(date date, usd numeric, trading_cost_usd numeric, at_stake_usd numeric, updated_at text)
      left join lateral (
        select l.idx, l.entry::jsonb as entry from stats.log_entry l where l.date = n.date order by l.idx desc limit 1
      ) latest on true
      left join stats.night_transfers t on t.date = n.date and t.is_demo = demo
      where n.date <= today - 3
    ) c
    where c.logged is null or (c.logged - 'supersedes') is distinct from (c.entry::jsonb - 'supersedes')
    order by c.date;
  get diagnostics nights = row_count;
  return appended + nights;
end $function$
;

CREATE OR REPLACE FUNCTION stats.log_record()
 RETURNS json
 LANGUAGE sql
 STABLE
 SET search_path TO ''
AS $function$
  with latest as (select c.* from stats.log_checkpoint c order by c.size desc limit 1)
  select json_build_object(
    'updated_at', stats.iso(greatest((select max(c.signed_at) from stats.log_checkpoint c),
      (select max(s.received_at) from stats.log_cosignature s), (select max(r.at) from stats.log_witness_round r),
      (select max(a.published_at) from stats.log_audits('infinity') a))),
    'demo', coalesce((select l.is_demo from latest l), stats.data_source() = 'demo'),
    'vkey', (select l.vkey from latest l),
    'log_checkpoint', stats.log_head(),
    'policy', (select p.policy from stats.log_policy p order by p.recorded_at desc limit 1),
    'entries', coalesce((select json_agg(e.entry order by e.idx) from stats.log_entry e where e.idx < stats.log_size()), '[]'::json),
    'checkpoints', coalesce((select json_agg(json_build_object(
        'size', c.size, 'root', c.root, 'note', c.note, 'signed_at', stats.iso(c.signed_at),
        'quorum_at', stats.iso(w.quorum_at),
        'cosignatures', (select coalesce(json_agg(f.line order by f.witness), '[]'::json) from (
          select distinct on (s.witness) s.witness, s.line from stats.log_cosignature s
          where s.size = c.size order by s.witness, s.cosigned_at) f)) order by c.size)
      from stats.log_checkpoint c left join stats.log_witnessed w on w.size = c.size), '[]'::json),
    'cosignatures', (select coalesce(json_agg(f.line order by f.witness), '[]'::json) from (
      select distinct on (s.witness) s.witness, s.line from stats.log_cosignature s
      where s.size = (select l.size from latest l) order by s.witness, s.cosigned_at desc) f),
    'witnessing', (select json_build_object('at', stats.iso(r.at), 'size', r.size, 'witnesses', r.witnesses,
        'cosigned', r.cosigned, 'quorum_met', r.quorum_met)
      from stats.log_witness_round r order by r.at desc limit 1),
    'halted', (select json_build_object('at', stats.iso(h.at), 'reason', h.reason) from stats.log_halt h order by h.at desc limit 1),
    'audits', (select coalesce(json_agg(json_build_object('note', a.note, 'published_at', stats.iso(a.published_at),
        'listed', stats.auditor_listed(a.auditor_key, 'infinity')) order by a.published_at, a.id), '[]'::json)
      from stats.log_audits('infinity') a))
$function$
;

CREATE OR REPLACE FUNCTION stats.publish_audit(p_note text)
 RETURNS stats.log_audit
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  blank integer := pg_catalog.strpos(p_note, E'\n\n');
  body text[];
  n integer;
  m text[];
  a stats.log_audit;
  opening jsonb;
  night record;
  named date[];
  heads constant text[] := array['^public-stats audit attestation v2$', '^origin (\S.*)$', '^log-key (\S+\+[0-9a-f]{8}\+\S+)$',
    '^checkpoint ([1-9][0-9]{0,17}) ([A-Za-z0-9+/]{43}=)$', '^opening (0|[1-9][0-9]{0,17})$',
    '^chosen (drawn ([1-9][0-9]{0,8}) rule v2 nonce ([A-Za-z0-9._:-]{32,128})|named)$',
    '^chain ([1-9][0-9]{0,8})$', '^payers ([0-9a-f]{64})$'];
  tails constant text[] := array['^result (pass|fail)$', '^date ([0-9]{4}-[0-9]{2}-[0-9]{2})$', '^auditor (([^+\s]+)\+[0-9a-f]{8}\+[A-Za-z0-9+/]+=*)$'];
  said constant text[] := array['public-stats audit attestation v2', 'origin <log origin>', 'log-key <verifier key>', 'checkpoint <size> <root base64>',
    'opening <entry index>', 'chosen drawn <k> rule v2 nonce <nonce>" or "chosen named', 'chain <chain id>', 'payers <sha256 hex>'];
  -- A night the checkpoint does not hold (entry "-") can only fail.
  night_format constant text := '^night ([0-9]{4}-[0-9]{2}-[0-9]{2}) (- fail|(0|[1-9][0-9]{0,17}) (pass|fail))$';
begin
  if blank = 0 or pg_catalog.right(p_note, 1) <> E'\n' then
    raise exception 'an attestation is a signed note: its body, a blank line and its signature lines, each ending in a newline'
      using errcode = 'invalid_parameter_value';
  end if;
  body := pg_catalog.string_to_array(pg_catalog.left(p_note, blank - 1), E'\n');
  n := pg_catalog.cardinality(body);
  if n < 12 then
    raise exception 'an attestation''s body has at least 12 lines (version 2), this one %', n using errcode = 'invalid_parameter_value';
  end if;
  for i in 1 .. 8 loop
    if body[i] !~ heads[i] then
      raise exception 'line % of the attestation is not "%"', i, said[i] using errcode = 'invalid_parameter_value';
    end if;
  end loop;
  for i in 9 .. n - 3 loop
    if body[i] !~ night_format then
      raise exception 'line % of the attestation is not "night <YYYY-MM-DD> <entry index> <pass|fail>" or "night <YYYY-MM-DD> - fail"', i using errcode = 'invalid_parameter_value';
    end if;
  end loop;
  for i in 1 .. 3 loop
    if body[n - 3 + i] !~ tails[i] then
      raise exception 'line % of the attestation is not "%"', n - 3 + i, (array['result <pass|fail>', 'date <YYYY-MM-DD>', 'auditor <verifier key>'])[i]
        using errcode = 'invalid_parameter_value';
    end if;
  end loop;
  a.origin := (pg_catalog.regexp_match(body[2], heads[2]))[1];
  a.log_key := (pg_catalog.regexp_match(body[3], heads[3]))[1];
  m := pg_catalog.regexp_match(body[4], heads[4]);
  a.checkpoint_size := m[1]::bigint;
  a.checkpoint_root := m[2];
  a.opening_idx := (pg_catalog.regexp_match(body[5], heads[5]))[1]::bigint;
  m := pg_catalog.regexp_match(body[6], heads[6]);
  a.chosen := case when m[1] = 'named' then 'named' else 'drawn' end;
  a.sample_k := m[2]::integer;
  a.nonce := m[3];
  a.chain_id := (pg_catalog.regexp_match(body[7], heads[7]))[1]::integer;
  a.payers_sha256 := (pg_catalog.regexp_match(body[8], heads[8]))[1];
  a.result := (pg_catalog.regexp_match(body[n - 2], tails[1]))[1];
  a.audit_date := (pg_catalog.regexp_match(body[n - 1], tails[2]))[1]::date;
  m := pg_catalog.regexp_match(body[n], tails[3]);
  a.auditor_key := m[1];
  a.auditor := m[2];
  select pg_catalog.array_agg(x.date order by x.ord), count(*) filter (where x.pass) into a.nights, a.nights_matched
    from (select (pg_catalog.regexp_match(body[i], night_format))[1]::date as date, (pg_catalog.regexp_match(body[i], night_format))[4] = 'pass' as pass, i as ord
          from pg_catalog.generate_series(9, n - 3) i) x;
  if not exists (select from pg_catalog.unnest(pg_catalog.string_to_array(pg_catalog.substr(p_note, blank + 2), E'\n')) l
                 where pg_catalog.starts_with(l, '— ' || a.auditor || ' ')) then
    raise exception 'the attestation carries no signature by its auditor, %', a.auditor using errcode = 'invalid_parameter_value';
  end if;
  if (select count(distinct d) from pg_catalog.unnest(a.nights) d) <> pg_catalog.cardinality(a.nights) then
    raise exception 'the attestation names a night twice' using errcode = 'invalid_parameter_value';
  end if;
  if a.result = 'pass' and a.nights_matched < pg_catalog.cardinality(a.nights) then
    raise exception 'the attestation says pass though a night failed' using errcode = 'invalid_parameter_value';
  end if;
  if not exists (select from stats.log_checkpoint c where c.size = a.checkpoint_size and c.root = a.checkpoint_root
                 and pg_catalog.split_part(c.note, E'\n', 1) = a.origin) then
    raise exception 'the attestation names checkpoint % (root %) of %, which the log did not sign', a.checkpoint_size, a.checkpoint_root, a.origin
      using errcode = 'invalid_parameter_value';
  end if;
  select l.entry::jsonb into opening from stats.log_entry l
    where l.idx = a.opening_idx and l.date is null and l.entry::jsonb ->> 'kind' = 'audit' and l.idx < stats.log_size();
  if opening is null then
    raise exception 'entry % of the signed log is not an audit opening', a.opening_idx using errcode = 'invalid_parameter_value';
  end if;
  if a.opening_idx < a.checkpoint_size or (opening ->> 'checkpoint')::bigint <> a.checkpoint_size or opening ->> 'auditor' <> a.auditor_key then
    raise exception 'the opening at entry % is not this auditor''s audit of checkpoint %, opened after it', a.opening_idx, a.checkpoint_size
      using errcode = 'invalid_parameter_value';
  end if;
  if a.chosen = 'drawn' and ((opening ->> 'sample') is null or (opening ->> 'sample')::integer <> a.sample_k
                             or opening ->> 'nonce_sha256' <> pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(a.nonce, 'UTF8')), 'hex')) then
    raise exception 'the opening at entry % does not draw % nights with this nonce', a.opening_idx, a.sample_k using errcode = 'invalid_parameter_value';
  end if;
  select pg_catalog.array_agg(d::date order by d::date) into named from jsonb_array_elements_text(opening -> 'nights') d;
  if a.chosen = 'named' and named is distinct from (select pg_catalog.array_agg(d order by d) from pg_catalog.unnest(a.nights) d) then
    raise exception 'the opening at entry % names other nights than the attestation', a.opening_idx using errcode = 'invalid_parameter_value';
  end if;
  for night in select (pg_catalog.regexp_match(body[i], night_format))[1]::date as date, coalesce((pg_catalog.regexp_match(body[i], night_format))[3], '-') as idx
               from pg_catalog.generate_series(9, n - 3) i loop
    if night.idx is distinct from (select l.idx::text from stats.log_entry l where l.date = night.date and l.idx < a.checkpoint_size order by l.idx desc limit 1)
       and not (night.idx = '-' and not exists (select from stats.log_entry l where l.date = night.date and l.idx < a.checkpoint_size)) then
      raise exception 'the attestation gives night % an entry other than its latest within checkpoint %', night.date, a.checkpoint_size
        using errcode = 'invalid_parameter_value';
    end if;
  end loop;
  if exists (select from stats.log_audit p where p.note = p_note) then
    raise exception 'this attestation is already published' using errcode = 'unique_violation';
  end if;
  if exists (select from stats.log_audit p where p.origin = a.origin and p.opening_idx = a.opening_idx) then
    raise exception 'the audit opened at entry % has its attestation published already: one result per audit', a.opening_idx using errcode = 'unique_violation';
  end if;
  insert into stats.log_audit (note, auditor, auditor_key, audit_date, origin, checkpoint_size, checkpoint_root, chain_id, nights, nights_matched,
                               opening_idx, chosen, sample_k, nonce, log_key, payers_sha256, result)
    values (p_note, a.auditor, a.auditor_key, a.audit_date, a.origin, a.checkpoint_size, a.checkpoint_root, a.chain_id, a.nights, a.nights_matched,
            a.opening_idx, a.chosen, a.sample_k, a.nonce, a.log_key, a.payers_sha256, a.result)
    returning * into a;
  return a;
end $function$
;

CREATE OR REPLACE FUNCTION stats.refresh_stats_snapshot()
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO ''
AS $function$
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
end $function$
;

CREATE OR REPLACE FUNCTION stats.stats_at(p_now timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
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
  s.audit := stats.audit_figure(p_now);
  s.audits_unfinished := stats.audits_unfinished(p_now);
  return s;
end $function$
;

-- Owners and grants, which migra does not write: as sql/ declares them.
alter function stats.auditor_listed(text, timestamptz) owner to stats_owner;
alter function stats.audits_unfinished(timestamptz) owner to stats_owner;
alter function stats.log_opening_entry_text(text, bigint, text, integer, date[]) owner to stats_owner;
alter function stats.open_audit(text, text, bigint, integer, date[]) owner to stats_owner;
grant execute on function stats.auditor_listed(text, timestamptz) to stats_writer;
grant execute on function stats.audits_unfinished(timestamptz) to stats_writer;
-- The snapshot row predates audits_unfinished: filled in as of when it was made.
update stats.stats_snapshot set audits_unfinished = stats.audits_unfinished(computed_at);
