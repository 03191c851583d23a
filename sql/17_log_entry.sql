-- The transparency log's entries: the final figures of each settled night, in the order they were
-- appended. Entry idx is the leaf index of a Merkle tree (RFC 6962) the site serves as tiles
-- (https://c2sp.org/tlog-tiles); `entry` holds the leaf's exact bytes, the RFC 8785 canonical JSON
-- of the night. The log is append-only for every role, the writer and the owner included: an entry
-- is never updated or removed, and a corrected night is a new entry that names the one it supersedes.
-- Demo nights go to a log of their own that the first real write removes with the rest of the demo
-- data, so the two logs never share a tree.
--
-- Besides nights the log holds the commitment to the wallet the rewards are paid to, an entry of
-- its own kind ({"kind":"wallet",...}) with no date, appended whenever that commitment changes; the
-- nights and those entries share one sequence of indexes. An audit's opening is an entry of a third
-- kind, "audit" (17_log_openings.sql). Only a night has a date.
create table stats.log_entry (
  idx bigint primary key check (idx >= 0),
  date date,
  entry text not null,
  is_demo boolean not null,
  appended_at timestamptz not null default clock_timestamp(),
  constraint log_entry_night_dated check ((entry::jsonb ? 'kind') = (date is null))
);
-- The latest entry of a date: history_at names it for each night, log_append compares against it.
create index log_entry_date_idx on stats.log_entry (date, idx desc);
-- The latest wallet entry (the latest undated entry of kind "wallet"): log_append compares the wallet
-- committed now against it.
create index log_entry_wallet_idx on stats.log_entry (idx desc) where date is null;
alter table stats.log_entry owner to stats_owner;
-- Read by the writer; written only through stats.log_append (owner's rights).
grant select on stats.log_entry to stats_writer;

-- An entry goes at the end, and a log is demo or real throughout.
create function stats.log_entry_appended() returns trigger
language plpgsql set search_path = '' as $$
declare
  last stats.log_entry;
begin
  select * into last from stats.log_entry order by idx desc limit 1;
  if new.idx <> coalesce(last.idx + 1, 0) then
    raise exception 'the log is append-only: entry % would not follow entry %', new.idx, coalesce(last.idx::text, 'none')
      using errcode = 'check_violation';
  end if;
  if last.is_demo is distinct from new.is_demo and last.idx is not null then
    raise exception 'demo and real nights never share a log' using errcode = 'check_violation';
  end if;
  return new;
end $$;
alter function stats.log_entry_appended() owner to stats_owner;

-- No entry is ever changed or removed; only the demo log goes, when real data replaces it.
create function stats.log_entry_kept() returns trigger
language plpgsql set search_path = '' as $$
begin
  if tg_op = 'DELETE' and old.is_demo then
    return old;
  end if;
  raise exception 'the log is append-only: % refused', lower(tg_op) using errcode = 'insufficient_privilege';
end $$;
alter function stats.log_entry_kept() owner to stats_owner;

create trigger log_entry_appended before insert on stats.log_entry
  for each row execute function stats.log_entry_appended();
create trigger log_entry_kept before update or delete on stats.log_entry
  for each row execute function stats.log_entry_kept();
create trigger log_entry_not_truncated before truncate on stats.log_entry
  for each statement execute function stats.log_entry_kept();
