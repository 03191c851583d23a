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
