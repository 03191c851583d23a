-- Capital snapshots: cash, the value of filled inventory, the count of positions.
create table stats.capital (
  observed_at timestamptz primary key,
  cash_usd stats.usd_amount not null check (cash_usd >= 0),
  inventory_usd stats.usd_amount not null check (inventory_usd >= 0),
  positions integer not null check (positions >= 0),
  is_demo boolean not null default false
);
create index capital_demo_idx on stats.capital (observed_at) where is_demo;
create trigger capital_keep_demo_flag before update on stats.capital
  for each row execute function stats.keep_demo_flag();
alter table stats.capital owner to stats_owner;
grant select, insert on stats.capital to stats_writer;
grant update (cash_usd, inventory_usd, positions) on stats.capital to stats_writer;
