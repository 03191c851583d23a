-- Settings: one row. No data source changes them, except which real source wrote last.
create table stats.settings (
  id boolean primary key default true check (id),
  since_date date,
  window_days integer not null default 15 check (window_days between 1 and 366),
  payout_fresh_days integer not null default 1 check (payout_fresh_days >= 0),
  accrual_fresh_minutes integer not null default 15 check (accrual_fresh_minutes >= 0),
  writer_alive_minutes integer not null default 5 check (writer_alive_minutes > 0),
  -- On a read replica: the most seconds its data may trail the primary before health is degraded.
  replica_lag_max_seconds integer not null default 60 check (replica_lag_max_seconds >= 0),
  -- Which real source wrote last ('polymarket' | 'import'); null while there is only demo data or none.
  data_source text check (data_source in ('polymarket', 'import'))
);
insert into stats.settings default values;
alter table stats.settings owner to stats_owner;
grant select, update (data_source) on stats.settings to stats_writer;
