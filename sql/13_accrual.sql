-- Accrual snapshots of the day in progress; the accrual date is the UTC date of observed_at.
create table stats.accrual (
  observed_at timestamptz primary key,
  usd stats.usd_amount not null check (usd >= 0),
  markets integer not null check (markets >= 0),
  is_demo boolean not null default false
);
create index accrual_demo_idx on stats.accrual (observed_at) where is_demo;
create trigger accrual_keep_demo_flag before update on stats.accrual
  for each row execute function stats.keep_demo_flag();
alter table stats.accrual owner to stats_owner;
grant select, insert on stats.accrual to stats_writer;
grant update (usd, markets) on stats.accrual to stats_writer;
