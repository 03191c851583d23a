-- Commitments to the reward transfers, which the log publishes (28_log.sql) so that an auditor can
-- later be shown that the nights were paid as published. Each is the base64 of a SHA-256 digest
-- over a secret salt and what it commits to: the wallet's address, or a night's transfers (their
-- transaction hashes and amounts). The salts and what they open stay with the writer; no address
-- or transaction hash ever reaches the database. A commitment is 32 bytes, so standard base64 of
-- 44 characters, the last before the padding one of the 16 that end 32 bytes exactly (the checks
-- below); it goes into a log entry's JSON as it is, so nothing in it needs escaping.

-- The wallet the rewards are paid to, committed each time it changes: the latest row (by
-- recorded_at) is the wallet in force, and the log gains an entry for it when it differs from the
-- log's latest wallet entry.
create table stats.wallet_commitment (
  commitment text primary key check (commitment ~ '^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$'),
  recorded_at timestamptz not null default clock_timestamp(),
  is_demo boolean not null default false
);
create index wallet_commitment_recorded_at_idx on stats.wallet_commitment (recorded_at);
alter table stats.wallet_commitment owner to stats_owner;
-- The writer records a new commitment and never changes or removes one (purge_demo removes demo ones).
grant select, insert on stats.wallet_commitment to stats_writer;

-- Each night's commitment to its reward transfers, keyed by payout date, written in the transaction
-- that writes the night's payout. A night's entry in the log carries it (`transfers`), unless the
-- night entered the log before it had one.
create table stats.night_transfers (
  date date primary key,
  commitment text not null check (commitment ~ '^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$'),
  is_demo boolean not null default false
);
create trigger night_transfers_not_in_future before insert or update on stats.night_transfers
  for each row execute function stats.reject_future_date();
create trigger night_transfers_keep_demo_flag before update on stats.night_transfers
  for each row execute function stats.keep_demo_flag();
alter table stats.night_transfers owner to stats_owner;
-- Upserted by the writer: a night asked again with other transfers gets a new commitment.
grant select, insert on stats.night_transfers to stats_writer;
grant update (commitment) on stats.night_transfers to stats_writer;
