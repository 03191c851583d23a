-- What the log's one signer (the writer, with the log's own key) has signed, what witnesses have
-- cosigned, and whether the log has stopped. Each is append-only, like the entries: a checkpoint
-- (https://c2sp.org/tlog-checkpoint) once served is evidence, and evidence is never rewritten.

-- One signed checkpoint per tree size: the signed note (body, blank line, the log's signature line)
-- and the verifier key it was signed with. Sizes only grow; the signer checks that each new tree is
-- consistent with the last one stored here before it signs.
create table stats.log_checkpoint (
  size bigint primary key check (size > 0),
  root text not null,
  note text not null,
  vkey text not null,
  is_demo boolean not null,
  signed_at timestamptz not null default clock_timestamp()
);
alter table stats.log_checkpoint owner to stats_owner;
grant select, insert on stats.log_checkpoint to stats_writer;

-- The real log's origin: the first line of its first checkpoint's note, null before one is signed.
-- An origin names a log for life (https://c2sp.org/tlog-checkpoint): every later checkpoint of the
-- real log names it too, whatever the site's URL has become since, and so does every part that names
-- the log (the writer signs under it, `npm start` hands it to the edge and the documents). The demo
-- log's checkpoints never fix it: they go with the demo data.
create function stats.log_origin() returns text
language sql stable set search_path = '' as $$
  select pg_catalog.split_part(c.note, E'\n', 1) from stats.log_checkpoint c where not c.is_demo order by c.size limit 1
$$;
alter function stats.log_origin() owner to stats_owner;
grant execute on function stats.log_origin() to stats_writer;

create function stats.log_checkpoint_appended() returns trigger
language plpgsql set search_path = '' as $$
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
  if not new.is_demo and pg_catalog.split_part(new.note, E'\n', 1) <> coalesce(stats.log_origin(), pg_catalog.split_part(new.note, E'\n', 1)) then
    raise exception 'the log''s origin is %, fixed by its first checkpoint: a checkpoint naming % is refused',
      stats.log_origin(), pg_catalog.split_part(new.note, E'\n', 1) using errcode = 'check_violation';
  end if;
  return new;
end $$;
alter function stats.log_checkpoint_appended() owner to stats_owner;

create trigger log_checkpoint_appended before insert on stats.log_checkpoint
  for each row execute function stats.log_checkpoint_appended();
-- Never changed; only the demo log's go with the demo data (the entries' rule).
create trigger log_checkpoint_kept before update or delete on stats.log_checkpoint
  for each row execute function stats.log_entry_kept();
create trigger log_checkpoint_not_truncated before truncate on stats.log_checkpoint
  for each statement execute function stats.log_entry_kept();

-- Every cosignature (https://c2sp.org/tlog-cosignature, cosignature/v1) a witness of the policy
-- returned for a checkpoint, verified by the writer before it is stored: the witness's key name, the
-- time the witness signed (its own timestamp) and the signature line as sent. A witness asked again
-- for the same checkpoint adds a newer one; the earliest says since when the witness saw it.
create table stats.log_cosignature (
  size bigint not null references stats.log_checkpoint (size),
  witness text not null,
  cosigned_at timestamptz not null,
  line text not null,
  received_at timestamptz not null default clock_timestamp(),
  primary key (size, witness, cosigned_at)
);
alter table stats.log_cosignature owner to stats_owner;
grant select, insert on stats.log_cosignature to stats_writer;

create function stats.log_evidence_kept() returns trigger
language plpgsql set search_path = '' as $$
begin
  raise exception 'the log''s evidence is append-only: % on % refused', lower(tg_op), tg_table_name using errcode = 'insufficient_privilege';
end $$;
alter function stats.log_evidence_kept() owner to stats_owner;

create trigger log_cosignature_kept before update or delete on stats.log_cosignature
  for each row execute function stats.log_evidence_kept();
create trigger log_cosignature_not_truncated before truncate on stats.log_cosignature
  for each statement execute function stats.log_evidence_kept();

-- When the policy's quorum first cosigned a checkpoint: the time of the cosignature that completed
-- it (each witness counted by its earliest cosignature of that size) and the witnesses that did.
-- Written by the writer, which holds the policy (https://c2sp.org/tlog-policy).
create table stats.log_witnessed (
  size bigint primary key references stats.log_checkpoint (size),
  quorum_at timestamptz not null,
  witnesses text[] not null
);
alter table stats.log_witnessed owner to stats_owner;
grant select, insert on stats.log_witnessed to stats_writer;

create trigger log_witnessed_kept before update or delete on stats.log_witnessed
  for each row execute function stats.log_evidence_kept();
create trigger log_witnessed_not_truncated before truncate on stats.log_witnessed
  for each statement execute function stats.log_evidence_kept();

-- Each round of asking the witnesses: which checkpoint, how many of the policy's witnesses cosigned it
-- in that round, and whether they made the quorum. Health reads the latest, and says since when the
-- quorum has not cosigned. A policy may name no witness (`quorum none`): its rounds ask nobody and
-- meet their quorum, and still record it, so health stays fresh under it.
create table stats.log_witness_round (
  at timestamptz primary key default clock_timestamp(),
  size bigint not null references stats.log_checkpoint (size),
  witnesses integer not null check (witnesses >= 0),
  cosigned text[] not null,
  quorum_met boolean not null
);
alter table stats.log_witness_round owner to stats_owner;
grant select, insert on stats.log_witness_round to stats_writer;

create trigger log_witness_round_kept before update or delete on stats.log_witness_round
  for each row execute function stats.log_evidence_kept();
create trigger log_witness_round_not_truncated before truncate on stats.log_witness_round
  for each statement execute function stats.log_evidence_kept();

-- The witness policy the writer works under, as its text (https://c2sp.org/tlog-policy), each time it
-- changes; the latest is published beside the log. None: the log is not witnessed.
create table stats.log_policy (
  recorded_at timestamptz primary key default clock_timestamp(),
  policy text
);
alter table stats.log_policy owner to stats_owner;
grant select, insert on stats.log_policy to stats_writer;

create trigger log_policy_kept before update or delete on stats.log_policy
  for each row execute function stats.log_evidence_kept();
create trigger log_policy_not_truncated before truncate on stats.log_policy
  for each statement execute function stats.log_evidence_kept();

-- Why the log stopped growing: a tree that does not extend the last checkpoint, a signer that signed
-- more than the database holds (a restore or a failover lost the log's tail), or a witness that has
-- cosigned a larger tree than ours. While a row is here the log appends nothing, and health says why;
-- the owner removes it once the cause is understood.
create table stats.log_halt (
  at timestamptz primary key default clock_timestamp(),
  reason text not null
);
alter table stats.log_halt owner to stats_owner;
grant select, insert on stats.log_halt to stats_writer;

-- The log state a record is computed against: the latest checkpoint's origin, size and root hash
-- (null before any). Every record carries it, and the signature of every answer covers it.
create function stats.log_head() returns json
language sql stable set search_path = '' as $$
  select json_build_object('origin', split_part(c.note, E'\n', 1), 'size', c.size, 'root', c.root)
  from stats.log_checkpoint c order by c.size desc limit 1
$$;
alter function stats.log_head() owner to stats_owner;
grant execute on function stats.log_head() to stats_writer;

-- The size of the latest checkpoint: entries are served, and counted as logged, by index below it.
create function stats.log_size() returns bigint
language sql stable set search_path = '' as $$
  select coalesce(max(size), 0) from stats.log_checkpoint
$$;
alter function stats.log_size() owner to stats_owner;
grant execute on function stats.log_size() to stats_writer;

-- The audit attestations published for the log: each a signed note (https://c2sp.org/signed-note)
-- by an auditor's key, saying which nights of a checkpoint of the log it checked against the chain,
-- how they were chosen (drawn from the checkpoint's root and the auditor's nonce, or named by the
-- owner), each night's result and the audit's: pass or fail, since an audit that failed is published
-- too. The note is kept verbatim, as served; the columns are read from its body, so what the records
-- say of an audit is what the auditor signed. Evidence, so append-only; published by the owner only
-- (stats.publish_audit), never by the writer. An attestation names its log by origin, so one of the
-- demo log is never shown with the real one. Version 1 attestations (published before audits began
-- in the log) keep their rows, with no opening, choice or result: they are served, never shown as
-- the audit.
create table stats.log_audit (
  id bigint generated always as identity primary key,
  note text not null unique,
  -- The auditor's key name, and its verifier key (https://c2sp.org/signed-note#verifier-keys).
  auditor text not null,
  auditor_key text not null,
  audit_date date not null,
  origin text not null,
  checkpoint_size bigint not null check (checkpoint_size > 0),
  checkpoint_root text not null,
  chain_id integer not null check (chain_id > 0),
  nights date[] not null check (cardinality(nights) > 0),
  nights_matched integer not null check (nights_matched between 0 and cardinality(nights)),
  published_at timestamptz not null default clock_timestamp(),
  -- Version 2: the opening's entry index, how the nights were chosen (drawn: sample_k of them with
  -- the nonce), the log key, the payer list's SHA-256 and the result; all null in version 1.
  opening_idx bigint,
  chosen text check (chosen in ('drawn', 'named')),
  sample_k integer check (sample_k > 0),
  nonce text,
  log_key text,
  payers_sha256 text,
  result text check (result in ('pass', 'fail')),
  constraint log_audit_v2_whole check ((opening_idx is null) = (result is null) and (opening_idx is null) = (chosen is null)
    and (opening_idx is null) = (log_key is null) and (opening_idx is null) = (payers_sha256 is null)
    and (chosen = 'drawn') = (sample_k is not null) and (chosen = 'drawn') = (nonce is not null))
);
create index log_audit_published_at_idx on stats.log_audit (origin, published_at);
-- One result per opening: an audit is attested once, pass or fail, never shopped for again.
create unique index log_audit_opening_idx on stats.log_audit (origin, opening_idx);
alter table stats.log_audit owner to stats_owner;
-- Read by the writer, whose status command works out the stats record, the latest audit among it.
grant select on stats.log_audit to stats_writer;

create trigger log_audit_kept before update or delete on stats.log_audit
  for each row execute function stats.log_evidence_kept();
create trigger log_audit_not_truncated before truncate on stats.log_audit
  for each statement execute function stats.log_evidence_kept();

-- Publishes an attestation, pass or fail: its body must be exactly
--   public-stats audit attestation v2
--   origin <log origin>
--   log-key <the log's verifier key>
--   checkpoint <size> <root base64>
--   opening <index of the audit's opening entry>
--   chosen drawn <k> rule v2 nonce <nonce>      or      chosen named
--   chain <chain id>
--   payers <SHA-256 of the payer list, hex>
--   night <YYYY-MM-DD> <entry index> <pass|fail>, or night <YYYY-MM-DD> - fail   (one or more, in date order)
--   result <pass|fail>
--   date <YYYY-MM-DD>
--   auditor <auditor verifier key>
-- followed by a blank line and signature lines, one of them by the auditor's key name. It must name
-- a checkpoint the log signed (origin, size and root); an opening entry after that checkpoint, by the
-- same auditor, for that checkpoint, whose nonce hashes to the nonce's SHA-256 and whose sample (or
-- nights) is the attestation's; and for each night its latest entry within the checkpoint. One
-- attestation per opening. The signature itself is checked by whoever publishes it (`npm run audit --
-- publish`) and by every reader: Postgres has no Ed25519. Returns the row published.
create function stats.publish_audit(p_note text) returns stats.log_audit
language plpgsql set search_path = '' as $$
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
end $$;
alter function stats.publish_audit(text) owner to stats_owner;

-- The attestations of the log in use (named by the origin of its latest checkpoint) published by
-- p_now, oldest first.
create function stats.log_audits(p_now timestamptz) returns setof stats.log_audit
language sql stable set search_path = '' as $$
  select a.* from stats.log_audit a
  where a.origin = (select pg_catalog.split_part(c.note, E'\n', 1) from stats.log_checkpoint c order by c.size desc limit 1)
    and a.published_at <= p_now
  order by a.published_at, a.id
$$;
alter function stats.log_audits(timestamptz) owner to stats_owner;
grant execute on function stats.log_audits(timestamptz) to stats_writer;
