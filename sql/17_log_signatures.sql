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
-- quorum has not cosigned.
create table stats.log_witness_round (
  at timestamptz primary key default clock_timestamp(),
  size bigint not null references stats.log_checkpoint (size),
  witnesses integer not null check (witnesses > 0),
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
-- by an auditor's key, saying that it drew nights from a checkpoint of the log, checked each night's
-- committed reward transfers against the chain, and how many matched. The note is kept verbatim, as
-- served; the columns are read from its body, so what the records say of an audit is what the
-- auditor signed. Evidence, so append-only; published by the owner only (stats.publish_audit), never
-- by the writer. An attestation names its log by origin, so one of the demo log is never shown
-- with the real one.
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
  published_at timestamptz not null default clock_timestamp()
);
create index log_audit_published_at_idx on stats.log_audit (origin, published_at);
alter table stats.log_audit owner to stats_owner;
-- Read by the writer, whose status command works out the stats record, the latest audit among it.
grant select on stats.log_audit to stats_writer;

create trigger log_audit_kept before update or delete on stats.log_audit
  for each row execute function stats.log_evidence_kept();
create trigger log_audit_not_truncated before truncate on stats.log_audit
  for each statement execute function stats.log_evidence_kept();

-- Publishes an attestation: its body must be exactly
--   public-stats audit attestation v1
--   origin <log origin>
--   checkpoint <size> <root base64>
--   chain <chain id>
--   nights <YYYY-MM-DD,YYYY-MM-DD,...>
--   matched <n>
--   date <YYYY-MM-DD>
--   auditor <auditor verifier key>
-- followed by a blank line and signature lines, one of them by the auditor's key name. It must name
-- a checkpoint the log signed (origin, size and root) and nights that checkpoint holds; a note
-- already published is refused. The signature itself is checked by whoever publishes it (`npm run
-- audit -- publish`) and by every reader: Postgres has no Ed25519. Returns the row published.
create function stats.publish_audit(p_note text) returns stats.log_audit
language plpgsql set search_path = '' as $$
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
