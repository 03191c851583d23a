-- Reward-transfer commitments and audits. The log gains a second kind of entry, the commitment to
-- the wallet the rewards are paid to (no date: log_entry.date may be null, for that kind only), and
-- each night's entry the commitment to its reward transfers (`transfers`), from the writer's new
-- tables wallet_commitment and night_transfers; nights logged before keep their entries as they are.
-- Audit attestations are published by the owner into log_audit, and the stats record (`audit`) and
-- the log record (`audits`) show them.
drop function if exists "stats"."log_entry_text"(p_date date, p_usd numeric, p_trading_cost_usd numeric, p_at_stake_usd numeric, p_updated_at text, p_supersedes bigint);


  create table "stats"."log_audit" (
    "id" bigint generated always as identity not null,
    "note" text not null,
    "auditor" text not null,
    "auditor_key" text not null,
    "audit_date" date not null,
    "origin" text not null,
    "checkpoint_size" bigint not null,
    "checkpoint_root" text not null,
    "chain_id" integer not null,
    "nights" date[] not null,
    "nights_matched" integer not null,
    "published_at" timestamp with time zone not null default clock_timestamp()
      );



  create table "stats"."night_transfers" (
    "date" date not null,
    "commitment" text not null,
    "is_demo" boolean not null default false
      );



  create table "stats"."wallet_commitment" (
    "commitment" text not null,
    "recorded_at" timestamp with time zone not null default clock_timestamp(),
    "is_demo" boolean not null default false
      );


alter table "stats"."log_entry" alter column "date" drop not null;

alter table "stats"."stats_snapshot" add column "audit" json;

CREATE UNIQUE INDEX log_audit_note_key ON stats.log_audit USING btree (note);

CREATE UNIQUE INDEX log_audit_pkey ON stats.log_audit USING btree (id);

CREATE INDEX log_audit_published_at_idx ON stats.log_audit USING btree (origin, published_at);

CREATE INDEX log_entry_wallet_idx ON stats.log_entry USING btree (idx DESC) WHERE (date IS NULL);

CREATE UNIQUE INDEX night_transfers_pkey ON stats.night_transfers USING btree (date);

CREATE UNIQUE INDEX wallet_commitment_pkey ON stats.wallet_commitment USING btree (commitment);

CREATE INDEX wallet_commitment_recorded_at_idx ON stats.wallet_commitment USING btree (recorded_at);

alter table "stats"."log_audit" add constraint "log_audit_pkey" PRIMARY KEY using index "log_audit_pkey";

alter table "stats"."night_transfers" add constraint "night_transfers_pkey" PRIMARY KEY using index "night_transfers_pkey";

alter table "stats"."wallet_commitment" add constraint "wallet_commitment_pkey" PRIMARY KEY using index "wallet_commitment_pkey";

alter table "stats"."log_audit" add constraint "log_audit_chain_id_check" CHECK ((chain_id > 0)) not valid;

alter table "stats"."log_audit" validate constraint "log_audit_chain_id_check";

alter table "stats"."log_audit" add constraint "log_audit_check" CHECK (((nights_matched >= 0) AND (nights_matched <= cardinality(nights)))) not valid;

alter table "stats"."log_audit" validate constraint "log_audit_check";

alter table "stats"."log_audit" add constraint "log_audit_checkpoint_size_check" CHECK ((checkpoint_size > 0)) not valid;

alter table "stats"."log_audit" validate constraint "log_audit_checkpoint_size_check";

alter table "stats"."log_audit" add constraint "log_audit_nights_check" CHECK ((cardinality(nights) > 0)) not valid;

alter table "stats"."log_audit" validate constraint "log_audit_nights_check";

alter table "stats"."log_audit" add constraint "log_audit_note_key" UNIQUE using index "log_audit_note_key";

alter table "stats"."log_entry" add constraint "log_entry_night_dated" CHECK ((((entry)::jsonb ? 'kind'::text) = (date IS NULL))) not valid;

alter table "stats"."log_entry" validate constraint "log_entry_night_dated";

alter table "stats"."night_transfers" add constraint "night_transfers_commitment_check" CHECK ((commitment ~ '^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$'::text)) not valid;

alter table "stats"."night_transfers" validate constraint "night_transfers_commitment_check";

alter table "stats"."wallet_commitment" add constraint "wallet_commitment_commitment_check" CHECK ((commitment ~ '^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$'::text)) not valid;

alter table "stats"."wallet_commitment" validate constraint "wallet_commitment_commitment_check";

set check_function_bodies = off;

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
    'nights_checked', cardinality(a.nights),
    'nights_matched', a.nights_matched,
    'checkpoint_size', a.checkpoint_size,
    'published_at', stats.iso(a.published_at))
  from stats.log_audits(p_now) a order by a.published_at desc, a.id desc limit 1
$function$
;

CREATE OR REPLACE FUNCTION stats.log_audits(p_now timestamp with time zone)
 RETURNS SETOF stats.log_audit
 LANGUAGE sql
 STABLE
 SET search_path TO ''
AS $function$
  select a.* from stats.log_audit a
  where a.origin = (select pg_catalog.split_part(c.note, E'\n', 1) from stats.log_checkpoint c order by c.size desc limit 1)
    and a.published_at <= p_now
  order by a.published_at, a.id
$function$
;

CREATE OR REPLACE FUNCTION stats.log_entry_text(p_date date, p_usd numeric, p_trading_cost_usd numeric, p_at_stake_usd numeric, p_updated_at text, p_supersedes bigint, p_transfers text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
 SET search_path TO ''
AS $function$
  select '{"at_stake_usd":' || coalesce(pg_catalog.trim_scale(p_at_stake_usd)::text, 'null')
    || ',"date":"' || pg_catalog.to_char(p_date, 'YYYY-MM-DD')
    || '","supersedes":' || coalesce(p_supersedes::text, 'null')
    || ',"trading_cost_usd":' || coalesce(pg_catalog.trim_scale(p_trading_cost_usd)::text, 'null')
    || coalesce(',"transfers":"' || p_transfers || '"', '')
    || ',"updated_at":"' || p_updated_at
    || '","usd":' || pg_catalog.trim_scale(p_usd)::text || '}'
$function$
;

CREATE OR REPLACE FUNCTION stats.log_wallet_entry_text(p_wallet text, p_replaces bigint)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
 SET search_path TO ''
AS $function$
  select '{"kind":"wallet","replaces":' || coalesce(p_replaces::text, 'null') || ',"wallet":"' || p_wallet || '"}'
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
  m text[];
  a stats.log_audit;
  formats constant text[] := array[
    '^public-stats audit attestation v1$',
    '^origin (\S.*)$',
    '^checkpoint ([1-9][0-9]{0,17}) ([A-Za-z0-9+/]{43}=)$',
    '^chain ([1-9][0-9]{0,8})$',
    '^nights ([0-9]{4}-[0-9]{2}-[0-9]{2}(,[0-9]{4}-[0-9]{2}-[0-9]{2})*)$',
    '^matched (0|[1-9][0-9]{0,8})$',
    '^date ([0-9]{4}-[0-9]{2}-[0-9]{2})$',
    '^auditor (([^+\s]+)\+[0-9a-f]{8}\+[A-Za-z0-9+/]+=*)$'];
  said constant text[] := array['public-stats audit attestation v1', 'origin <log origin>', 'checkpoint <size> <root base64>',
    'chain <chain id>', 'nights <YYYY-MM-DD,...>', 'matched <n>', 'date <YYYY-MM-DD>', 'auditor <verifier key>'];
begin
  if blank = 0 or pg_catalog.right(p_note, 1) <> E'\n' then
    raise exception 'an attestation is a signed note: its body, a blank line and its signature lines, each ending in a newline'
      using errcode = 'invalid_parameter_value';
  end if;
  body := pg_catalog.string_to_array(pg_catalog.left(p_note, blank - 1), E'\n');
  if pg_catalog.cardinality(body) <> 8 then
    raise exception 'an attestation''s body has 8 lines, this one %', pg_catalog.cardinality(body) using errcode = 'invalid_parameter_value';
  end if;
  for i in 1 .. 8 loop
    if body[i] !~ formats[i] then
      raise exception 'line % of the attestation is not "%"', i, said[i] using errcode = 'invalid_parameter_value';
    end if;
  end loop;
  a.origin := (pg_catalog.regexp_match(body[2], formats[2]))[1];
  m := pg_catalog.regexp_match(body[3], formats[3]);
  a.checkpoint_size := m[1]::bigint;
  a.checkpoint_root := m[2];
  a.chain_id := (pg_catalog.regexp_match(body[4], formats[4]))[1]::integer;
  a.nights := pg_catalog.string_to_array((pg_catalog.regexp_match(body[5], formats[5]))[1], ',')::date[];
  a.nights_matched := (pg_catalog.regexp_match(body[6], formats[6]))[1]::integer;
  a.audit_date := (pg_catalog.regexp_match(body[7], formats[7]))[1]::date;
  m := pg_catalog.regexp_match(body[8], formats[8]);
  a.auditor_key := m[1];
  a.auditor := m[2];
  if not exists (select from pg_catalog.unnest(pg_catalog.string_to_array(pg_catalog.substr(p_note, blank + 2), E'\n')) l
                 where pg_catalog.starts_with(l, '— ' || a.auditor || ' ')) then
    raise exception 'the attestation carries no signature by its auditor, %', a.auditor using errcode = 'invalid_parameter_value';
  end if;
  if (select count(distinct n) from pg_catalog.unnest(a.nights) n) <> pg_catalog.cardinality(a.nights) then
    raise exception 'the attestation names a night twice' using errcode = 'invalid_parameter_value';
  end if;
  if a.nights_matched > pg_catalog.cardinality(a.nights) then
    raise exception 'the attestation says % nights matched of the % it checked', a.nights_matched, pg_catalog.cardinality(a.nights)
      using errcode = 'invalid_parameter_value';
  end if;
  if not exists (select from stats.log_checkpoint c where c.size = a.checkpoint_size and c.root = a.checkpoint_root
                 and pg_catalog.split_part(c.note, E'\n', 1) = a.origin) then
    raise exception 'the attestation names checkpoint % (root %) of %, which the log did not sign', a.checkpoint_size, a.checkpoint_root, a.origin
      using errcode = 'invalid_parameter_value';
  end if;
  if exists (select from pg_catalog.unnest(a.nights) n where not exists (
               select from stats.log_entry l where l.date = n and l.idx < a.checkpoint_size)) then
    raise exception 'the attestation names a night that checkpoint % does not hold', a.checkpoint_size using errcode = 'invalid_parameter_value';
  end if;
  if exists (select from stats.log_audit p where p.note = p_note) then
    raise exception 'this attestation is already published' using errcode = 'unique_violation';
  end if;
  insert into stats.log_audit (note, auditor, auditor_key, audit_date, origin, checkpoint_size, checkpoint_root, chain_id, nights, nights_matched)
    values (p_note, a.auditor, a.auditor_key, a.audit_date, a.origin, a.checkpoint_size, a.checkpoint_root, a.chain_id, a.nights, a.nights_matched)
    returning * into a;
  return a;
end $function$
;

CREATE OR REPLACE FUNCTION stats.figures_updated_at(p_now timestamp with time zone)
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
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
end $function$
;

CREATE OR REPLACE FUNCTION stats.figures_valid_until(p_now timestamp with time zone)
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
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
end $function$
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
    from stats.log_entry l where l.date is null order by l.idx desc limit 1;
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
    'audits', (select coalesce(json_agg(json_build_object('note', a.note, 'published_at', stats.iso(a.published_at)) order by a.published_at, a.id), '[]'::json)
      from stats.log_audits('infinity') a))
$function$
;

CREATE OR REPLACE FUNCTION stats.purge_demo()
 RETURNS void
 LANGUAGE sql
 SECURITY DEFINER
 SET search_path TO ''
AS $function$
  delete from stats.payout where is_demo;
  delete from stats.trading_cost where is_demo;
  delete from stats.accrual where is_demo;
  delete from stats.breadth where is_demo;
  delete from stats.capital where is_demo;
  delete from stats.heartbeat where is_demo;
  delete from stats.wallet_commitment where is_demo;
  delete from stats.night_transfers where is_demo;
  delete from stats.log_checkpoint where is_demo;
  delete from stats.log_entry where is_demo;
$function$
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
      audit = excluded.audit;
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
    'audit', s.audit);
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
  return s;
end $function$
;

grant select on table "stats"."log_audit" to "stats_writer";

grant insert on table "stats"."night_transfers" to "stats_writer";

grant select on table "stats"."night_transfers" to "stats_writer";

grant insert on table "stats"."wallet_commitment" to "stats_writer";

grant select on table "stats"."wallet_commitment" to "stats_writer";

CREATE CONSTRAINT TRIGGER log_audit_figures_changed AFTER INSERT ON stats.log_audit DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION stats.figures_changed();

CREATE TRIGGER log_audit_figures_pending AFTER INSERT ON stats.log_audit FOR EACH STATEMENT EXECUTE FUNCTION stats.figures_pending();

CREATE TRIGGER log_audit_kept BEFORE DELETE OR UPDATE ON stats.log_audit FOR EACH ROW EXECUTE FUNCTION stats.log_evidence_kept();

CREATE TRIGGER log_audit_not_truncated BEFORE TRUNCATE ON stats.log_audit FOR EACH STATEMENT EXECUTE FUNCTION stats.log_evidence_kept();

CREATE TRIGGER night_transfers_keep_demo_flag BEFORE UPDATE ON stats.night_transfers FOR EACH ROW EXECUTE FUNCTION stats.keep_demo_flag();

CREATE TRIGGER night_transfers_not_in_future BEFORE INSERT OR UPDATE ON stats.night_transfers FOR EACH ROW EXECUTE FUNCTION stats.reject_future_date();

grant update (commitment) on stats.night_transfers to stats_writer;
alter table stats.wallet_commitment owner to stats_owner;
alter table stats.night_transfers owner to stats_owner;
alter table stats.log_audit owner to stats_owner;
alter function stats.log_entry_text(date, numeric, numeric, numeric, text, bigint, text) owner to stats_owner;
alter function stats.log_wallet_entry_text(text, bigint) owner to stats_owner;
alter function stats.publish_audit(text) owner to stats_owner;
alter function stats.log_audits(timestamptz) owner to stats_owner;
grant execute on function stats.log_audits(timestamptz) to stats_writer;
alter function stats.audit_figure(timestamptz) owner to stats_owner;
grant execute on function stats.audit_figure(timestamptz) to stats_writer;
