drop function if exists "stats"."log_at"(p_now timestamp with time zone);


  create table "stats"."log_checkpoint" (
    "size" bigint not null,
    "root" text not null,
    "note" text not null,
    "vkey" text not null,
    "is_demo" boolean not null,
    "signed_at" timestamp with time zone not null default clock_timestamp()
      );



  create table "stats"."log_cosignature" (
    "size" bigint not null,
    "witness" text not null,
    "cosigned_at" timestamp with time zone not null,
    "line" text not null,
    "received_at" timestamp with time zone not null default clock_timestamp()
      );



  create table "stats"."log_halt" (
    "at" timestamp with time zone not null default clock_timestamp(),
    "reason" text not null
      );



  create table "stats"."log_policy" (
    "recorded_at" timestamp with time zone not null default clock_timestamp(),
    "policy" text
      );



  create table "stats"."log_witness_round" (
    "at" timestamp with time zone not null default clock_timestamp(),
    "size" bigint not null,
    "witnesses" integer not null,
    "cosigned" text[] not null,
    "quorum_met" boolean not null
      );



  create table "stats"."log_witnessed" (
    "size" bigint not null,
    "quorum_at" timestamp with time zone not null,
    "witnesses" text[] not null
      );


CREATE UNIQUE INDEX log_checkpoint_pkey ON stats.log_checkpoint USING btree (size);

CREATE UNIQUE INDEX log_cosignature_pkey ON stats.log_cosignature USING btree (size, witness, cosigned_at);

CREATE UNIQUE INDEX log_halt_pkey ON stats.log_halt USING btree (at);

CREATE UNIQUE INDEX log_policy_pkey ON stats.log_policy USING btree (recorded_at);

CREATE UNIQUE INDEX log_witness_round_pkey ON stats.log_witness_round USING btree (at);

CREATE UNIQUE INDEX log_witnessed_pkey ON stats.log_witnessed USING btree (size);

alter table "stats"."log_checkpoint" add constraint "log_checkpoint_pkey" PRIMARY KEY using index "log_checkpoint_pkey";

alter table "stats"."log_cosignature" add constraint "log_cosignature_pkey" PRIMARY KEY using index "log_cosignature_pkey";

alter table "stats"."log_halt" add constraint "log_halt_pkey" PRIMARY KEY using index "log_halt_pkey";

alter table "stats"."log_policy" add constraint "log_policy_pkey" PRIMARY KEY using index "log_policy_pkey";

alter table "stats"."log_witness_round" add constraint "log_witness_round_pkey" PRIMARY KEY using index "log_witness_round_pkey";

alter table "stats"."log_witnessed" add constraint "log_witnessed_pkey" PRIMARY KEY using index "log_witnessed_pkey";

alter table "stats"."log_checkpoint" add constraint "log_checkpoint_size_check" CHECK ((size > 0)) not valid;

alter table "stats"."log_checkpoint" validate constraint "log_checkpoint_size_check";

alter table "stats"."log_cosignature" add constraint "log_cosignature_size_fkey" FOREIGN KEY (size) REFERENCES stats.log_checkpoint(size) not valid;

alter table "stats"."log_cosignature" validate constraint "log_cosignature_size_fkey";

alter table "stats"."log_witness_round" add constraint "log_witness_round_size_fkey" FOREIGN KEY (size) REFERENCES stats.log_checkpoint(size) not valid;

alter table "stats"."log_witness_round" validate constraint "log_witness_round_size_fkey";

alter table "stats"."log_witness_round" add constraint "log_witness_round_witnesses_check" CHECK ((witnesses > 0)) not valid;

alter table "stats"."log_witness_round" validate constraint "log_witness_round_witnesses_check";

alter table "stats"."log_witnessed" add constraint "log_witnessed_size_fkey" FOREIGN KEY (size) REFERENCES stats.log_checkpoint(size) not valid;

alter table "stats"."log_witnessed" validate constraint "log_witnessed_size_fkey";

set check_function_bodies = off;

CREATE OR REPLACE FUNCTION stats.log_checkpoint_appended()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  last stats.log_checkpoint;
begin
  select * into last from stats.log_checkpoint order by size desc limit 1;
  if new.size <= last.size then
    raise exception 'the log''s checkpoints only grow: size % would follow size %', new.size, last.size
      using errcode = 'check_violation';
  end if;
  if new.size > (select coalesce(max(idx) + 1, 0) from stats.log_entry) then
    raise exception 'checkpoint size % names entries the log does not hold', new.size using errcode = 'check_violation';
  end if;
  if last.is_demo is distinct from new.is_demo and last.size is not null then
    raise exception 'demo and real nights never share a log' using errcode = 'check_violation';
  end if;
  return new;
end $function$
;

CREATE OR REPLACE FUNCTION stats.log_evidence_kept()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
begin
  raise exception 'the log''s evidence is append-only: % on % refused', lower(tg_op), tg_table_name using errcode = 'insufficient_privilege';
end $function$
;

CREATE OR REPLACE FUNCTION stats.log_head()
 RETURNS json
 LANGUAGE sql
 STABLE
 SET search_path TO ''
AS $function$
  select json_build_object('origin', split_part(c.note, E'\n', 1), 'size', c.size, 'root', c.root)
  from stats.log_checkpoint c order by c.size desc limit 1
$function$
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
      (select max(s.received_at) from stats.log_cosignature s), (select max(r.at) from stats.log_witness_round r))),
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
    'halted', (select json_build_object('at', stats.iso(h.at), 'reason', h.reason) from stats.log_halt h order by h.at desc limit 1))
$function$
;

CREATE OR REPLACE FUNCTION stats.log_size()
 RETURNS bigint
 LANGUAGE sql
 STABLE
 SET search_path TO ''
AS $function$
  select coalesce(max(size), 0) from stats.log_checkpoint
$function$
;

CREATE OR REPLACE FUNCTION public.landing_log()
 RETURNS json
 LANGUAGE sql
 STABLE SECURITY DEFINER
 SET search_path TO ''
AS $function$
  select stats.with_validators(stats.log_record())
$function$
;

CREATE OR REPLACE FUNCTION stats.health_at(p_now timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
declare
  cfg stats.settings;
  today date := (p_now at time zone 'UTC')::date;
  v_payout date;
  v_payout_age integer;
  v_accrual timestamptz;
  v_accrual_age integer;
  v_heartbeat timestamptz;
  v_writer text;
  v_fresh boolean;
  v_accrual_fresh boolean;
  v_alive boolean;
  v_replica boolean := pg_is_in_recovery();
  v_replica_lag integer;
  v_log_size bigint := stats.log_size();
  v_round stats.log_witness_round;
  v_policy stats.log_policy;
  v_halt stats.log_halt;
  v_quorum_at timestamptz;
  v_log_ok boolean;
begin
  select * into cfg from stats.settings;
  select max(p.date) into v_payout from stats.payout p where p.date <= today;
  select max(a.observed_at) into v_accrual from stats.accrual a where a.observed_at <= p_now;
  select h.at, h.writer into v_heartbeat, v_writer from stats.heartbeat h where h.at <= p_now order by h.at desc limit 1;

  v_payout_age := today - v_payout;
  v_accrual_age := floor(extract(epoch from p_now - v_accrual) / 60)::integer;
  select * into v_round from stats.log_witness_round r order by r.at desc limit 1;
  select * into v_policy from stats.log_policy p order by p.recorded_at desc limit 1;
  select * into v_halt from stats.log_halt h order by h.at desc limit 1;
  select max(r.at) into v_quorum_at from stats.log_witness_round r where r.quorum_met;
  v_log_ok := v_halt.at is null and (v_policy.policy is null
    or p_now - coalesce(v_quorum_at, v_policy.recorded_at) <= interval '26 hours');
  v_fresh := coalesce(v_payout_age <= cfg.payout_fresh_days, false);
  v_accrual_fresh := coalesce(v_accrual_age <= cfg.accrual_fresh_minutes, false);
  v_alive := coalesce(p_now - v_heartbeat < make_interval(mins => cfg.writer_alive_minutes), false);
  if v_replica then
    v_replica_lag := stats.replica_lag_seconds(p_now, pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn(), pg_last_xact_replay_timestamp());
  end if;

  return json_build_object(
    'status', case when v_fresh and v_accrual_fresh and v_alive and v_log_ok
      and (not v_replica or coalesce(v_replica_lag <= cfg.replica_lag_max_seconds, false)) then 'ok' else 'degraded' end,
    'checked_at', stats.iso(p_now),
    'data', json_build_object(
      'last_payout_date', v_payout,
      'payout_age_days', v_payout_age,
      'fresh', v_fresh,
      'last_accrual_at', stats.iso(v_accrual),
      'accrual_age_minutes', v_accrual_age,
      'accrual_fresh', v_accrual_fresh,
      'replica_lag_seconds', v_replica_lag),
    'writer', json_build_object(
      'last_heartbeat_at', stats.iso(v_heartbeat),
      'alive', v_alive,
      'name', v_writer),
    'log', json_build_object(
      'size', v_log_size,
      'witnessed', v_policy.policy is not null,
      'witnesses', case when v_policy.policy is not null then v_round.witnesses end,
      'cosigned', case when v_policy.policy is not null then coalesce(cardinality(v_round.cosigned), 0) end,
      'checked_at', case when v_policy.policy is not null then stats.iso(v_round.at) end,
      'quorum_cosigned_at', case when v_policy.policy is not null then stats.iso(v_quorum_at) end,
      'halted', v_halt.reason));
end $function$
;

CREATE OR REPLACE FUNCTION stats.history_nights(p_now timestamp with time zone, p_since date)
 RETURNS json
 LANGUAGE sql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
  select coalesce(json_agg(json_build_object(
      'date', n.date,
      'usd', round(n.usd, 2),
      'total_usd', round(n.total, 2),
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
        sum(p.usd) over (order by p.date) as total,
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
$function$
;

CREATE OR REPLACE FUNCTION stats.history_record(p_now timestamp with time zone)
 RETURNS json
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
declare
  v_since date := stats.since_date((p_now at time zone 'UTC')::date);
begin
  return json_build_object(
    'updated_at', stats.iso(stats.figures_updated_at(p_now)),
    'since_date', v_since,
    'data_source', stats.data_source(),
    'log_checkpoint', stats.log_head(),
    'nights', stats.history_nights(p_now, v_since));
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
  next_idx bigint;
  appended integer;
begin
  lock table stats.log_entry in exclusive mode;
  if exists (select 1 from stats.log_halt) then
    return 0;
  end if;
  select coalesce(max(idx) + 1, 0) into next_idx from stats.log_entry;
  insert into stats.log_entry (idx, date, entry, is_demo)
    select next_idx + row_number() over (order by n.date) - 1, n.date,
      stats.log_entry_text(n.date, n.usd, n.trading_cost_usd, n.at_stake_usd, n.updated_at, latest.idx),
      stats.data_source() = 'demo'
    from json_to_recordset(stats.history_nights(p_now, stats.since_date(today)))
      as n(date date, usd numeric, trading_cost_usd numeric, at_stake_usd numeric, updated_at text)
    left join lateral (
      select l.idx, l.entry::jsonb as entry from stats.log_entry l where l.date = n.date order by l.idx desc limit 1
    ) latest on true
    where n.date <= today - 3
      and (latest.idx is null
        or (latest.entry - 'supersedes') is distinct from
           (stats.log_entry_text(n.date, n.usd, n.trading_cost_usd, n.at_stake_usd, n.updated_at, null)::jsonb - 'supersedes'))
    order by n.date;
  get diagnostics appended = row_count;
  return appended;
end $function$
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
  delete from stats.log_checkpoint where is_demo;
  delete from stats.log_entry where is_demo;
$function$
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
    'log_checkpoint', stats.log_head());
end $function$
;

grant insert on table "stats"."log_checkpoint" to "stats_writer";

grant select on table "stats"."log_checkpoint" to "stats_writer";

grant insert on table "stats"."log_cosignature" to "stats_writer";

grant select on table "stats"."log_cosignature" to "stats_writer";

grant insert on table "stats"."log_halt" to "stats_writer";

grant select on table "stats"."log_halt" to "stats_writer";

grant insert on table "stats"."log_policy" to "stats_writer";

grant select on table "stats"."log_policy" to "stats_writer";

grant insert on table "stats"."log_witness_round" to "stats_writer";

grant select on table "stats"."log_witness_round" to "stats_writer";

grant insert on table "stats"."log_witnessed" to "stats_writer";

grant select on table "stats"."log_witnessed" to "stats_writer";

CREATE TRIGGER log_checkpoint_appended BEFORE INSERT ON stats.log_checkpoint FOR EACH ROW EXECUTE FUNCTION stats.log_checkpoint_appended();

CREATE CONSTRAINT TRIGGER log_checkpoint_figures_changed AFTER INSERT OR DELETE ON stats.log_checkpoint DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION stats.figures_changed();

CREATE TRIGGER log_checkpoint_figures_pending AFTER INSERT OR DELETE ON stats.log_checkpoint FOR EACH STATEMENT EXECUTE FUNCTION stats.figures_pending();

CREATE TRIGGER log_checkpoint_kept BEFORE DELETE OR UPDATE ON stats.log_checkpoint FOR EACH ROW EXECUTE FUNCTION stats.log_entry_kept();

CREATE TRIGGER log_checkpoint_not_truncated BEFORE TRUNCATE ON stats.log_checkpoint FOR EACH STATEMENT EXECUTE FUNCTION stats.log_entry_kept();

CREATE TRIGGER log_cosignature_kept BEFORE DELETE OR UPDATE ON stats.log_cosignature FOR EACH ROW EXECUTE FUNCTION stats.log_evidence_kept();

CREATE TRIGGER log_cosignature_not_truncated BEFORE TRUNCATE ON stats.log_cosignature FOR EACH STATEMENT EXECUTE FUNCTION stats.log_evidence_kept();

CREATE CONSTRAINT TRIGGER log_policy_figures_changed AFTER INSERT ON stats.log_policy DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION stats.figures_changed();

CREATE TRIGGER log_policy_figures_pending AFTER INSERT ON stats.log_policy FOR EACH STATEMENT EXECUTE FUNCTION stats.figures_pending();

CREATE TRIGGER log_policy_kept BEFORE DELETE OR UPDATE ON stats.log_policy FOR EACH ROW EXECUTE FUNCTION stats.log_evidence_kept();

CREATE TRIGGER log_policy_not_truncated BEFORE TRUNCATE ON stats.log_policy FOR EACH STATEMENT EXECUTE FUNCTION stats.log_evidence_kept();

CREATE TRIGGER log_witness_round_kept BEFORE DELETE OR UPDATE ON stats.log_witness_round FOR EACH ROW EXECUTE FUNCTION stats.log_evidence_kept();

CREATE TRIGGER log_witness_round_not_truncated BEFORE TRUNCATE ON stats.log_witness_round FOR EACH STATEMENT EXECUTE FUNCTION stats.log_evidence_kept();

CREATE CONSTRAINT TRIGGER log_witnessed_figures_changed AFTER INSERT ON stats.log_witnessed DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION stats.figures_changed();

CREATE TRIGGER log_witnessed_figures_pending AFTER INSERT ON stats.log_witnessed FOR EACH STATEMENT EXECUTE FUNCTION stats.figures_pending();

CREATE TRIGGER log_witnessed_kept BEFORE DELETE OR UPDATE ON stats.log_witnessed FOR EACH ROW EXECUTE FUNCTION stats.log_evidence_kept();

CREATE TRIGGER log_witnessed_not_truncated BEFORE TRUNCATE ON stats.log_witnessed FOR EACH STATEMENT EXECUTE FUNCTION stats.log_evidence_kept();

alter table stats.log_checkpoint owner to stats_owner;
alter table stats.log_cosignature owner to stats_owner;
alter table stats.log_witnessed owner to stats_owner;
alter table stats.log_witness_round owner to stats_owner;
alter table stats.log_policy owner to stats_owner;
alter table stats.log_halt owner to stats_owner;
alter function stats.log_checkpoint_appended() owner to stats_owner;
alter function stats.log_evidence_kept() owner to stats_owner;
alter function stats.log_head() owner to stats_owner;
alter function stats.log_record() owner to stats_owner;
alter function stats.log_size() owner to stats_owner;
grant execute on function stats.log_head() to stats_writer;
grant execute on function stats.log_size() to stats_writer;
comment on function public.landing_log() is 'The transparency log: its entries in order (each settled night''s final figures as RFC 8785 canonical JSON), its signed checkpoints with the witnesses'' cosignatures, and its witnessing.';
-- The records the snapshots hold gain log_checkpoint and the nights their witnessing: made again now.
select stats.refresh_figures() where exists (select from stats.history_snapshot) or exists (select from stats.stats_snapshot);
