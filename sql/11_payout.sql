-- Nightly payouts, keyed by payout date (the night that settled at 00:00 UTC on `date`), and the
-- previous values of corrected ones.
create table stats.payout (
  date date primary key,
  usd stats.usd_amount not null check (usd >= 0),
  is_demo boolean not null default false,
  recorded_at timestamptz not null default now(),
  -- first recorded or last corrected; an upsert that changes no value leaves it (trigger below)
  updated_at timestamptz not null default now()
);
create index payout_updated_at_idx on stats.payout (updated_at);
-- data_source asks whether demo rows remain; the partial index answers without reading history.
create index payout_demo_idx on stats.payout (date) where is_demo;
create trigger payout_not_in_future before insert or update on stats.payout
  for each row execute function stats.reject_future_date();
create trigger payout_track_change before update on stats.payout
  for each row execute function stats.track_change();
create trigger payout_keep_demo_flag before update on stats.payout
  for each row execute function stats.keep_demo_flag();
alter table stats.payout owner to stats_owner;
-- The writer never updates the demo flag, and deletes only through purge_demo.
grant select, insert on stats.payout to stats_writer;
grant update (usd) on stats.payout to stats_writer;

create table stats.payout_correction (
  id bigint generated always as identity primary key,
  date date not null,
  old_usd numeric not null,
  new_usd numeric not null,
  corrected_at timestamptz not null default now()
);
create index payout_correction_date_idx on stats.payout_correction (date);
alter table stats.payout_correction owner to stats_owner;
grant select on stats.payout_correction to stats_writer;
