-- The openings of the reward-transfer commitments move into the database, sealed (AES-256-GCM) under
-- the writer's OPENINGS_KEY, which the database never holds: every writer of the database, a promoted
-- replica and a restored backup hold them, and the rows alone tell nothing. Append-only, like the
-- log's evidence. The writer moves the openings it kept in files (DATA_DIR/reward-transfers) in on
-- its first start.
create table stats.transfer_opening (
  commitment text primary key check (commitment ~ '^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$'),
  kind text not null check (kind in ('wallet', 'night')),
  key_id text not null check (key_id ~ '^[0-9a-f]{16}$'),
  sealed bytea not null check (octet_length(sealed) > 28),
  recorded_at timestamptz not null default clock_timestamp()
);
alter table stats.transfer_opening owner to stats_owner;
grant select, insert on stats.transfer_opening to stats_writer;

create trigger transfer_opening_kept before update or delete on stats.transfer_opening
  for each row execute function stats.log_evidence_kept();
create trigger transfer_opening_not_truncated before truncate on stats.transfer_opening
  for each statement execute function stats.log_evidence_kept();
