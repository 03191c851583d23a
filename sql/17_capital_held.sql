-- The capital reading the writer holds back as implausible (it moved past CAPITAL_MAX_JUMP_SHARE
-- since the last snapshot with no transfer or trade to explain it), and how many readings in a row
-- have agreed with it since. Kept here, not in a process, so a writer run from cron (`once`), a
-- restarted writer and a standby that takes over all count the same readings. At most one row; the
-- writer removes it when a reading is published. Never published itself.
create table stats.capital_held (
  id boolean primary key default true check (id),
  cash_usd stats.usd_amount not null check (cash_usd >= 0),
  at_stake_usd stats.usd_amount not null check (at_stake_usd >= 0),
  readings integer not null check (readings >= 1),
  first_read_at timestamptz not null,
  last_read_at timestamptz not null check (last_read_at >= first_read_at)
);
alter table stats.capital_held owner to stats_owner;
grant select, insert, update, delete on stats.capital_held to stats_writer;
