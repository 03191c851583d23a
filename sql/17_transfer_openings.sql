-- The openings of the reward-transfer commitments (17_reward_transfers.sql): for each commitment the
-- writer made, its salt and what it commits to (the wallet's address, or a night's transfers), sealed
-- with AES-256-GCM under the writer's OPENINGS_KEY and bound to the commitment it opens
-- (contract/audit/transfer-vault.ts). The database holds no key: a row tells nothing without it, and
-- every writer of the database, a promoted replica and a restored backup hold every opening. key_id
-- names the key that sealed a row (derived from it, telling nothing of it). No demo rows: the demo
-- commits to its nights from the date alone.
create table stats.transfer_opening (
  commitment text primary key check (commitment ~ '^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$'),
  kind text not null check (kind in ('wallet', 'night')),
  key_id text not null check (key_id ~ '^[0-9a-f]{16}$'),
  -- 12-byte nonce, ciphertext, 16-byte tag.
  sealed bytea not null check (octet_length(sealed) > 28),
  recorded_at timestamptz not null default clock_timestamp()
);
alter table stats.transfer_opening owner to stats_owner;
-- The writer seals an opening in the transaction that records its commitment, and never changes or
-- removes one: a commitment in the log must stay openable.
grant select, insert on stats.transfer_opening to stats_writer;

create trigger transfer_opening_kept before update or delete on stats.transfer_opening
  for each row execute function stats.log_evidence_kept();
create trigger transfer_opening_not_truncated before truncate on stats.transfer_opening
  for each statement execute function stats.log_evidence_kept();
