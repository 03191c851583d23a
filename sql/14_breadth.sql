-- Markets quoted in the 24 hours before each observation.
create table stats.breadth (
  observed_at timestamptz primary key,
  markets_quoted_24h integer not null check (markets_quoted_24h >= 0),
  is_demo boolean not null default false
);
create trigger breadth_keep_demo_flag before update on stats.breadth
  for each row execute function stats.keep_demo_flag();
alter table stats.breadth owner to stats_owner;
grant select, insert on stats.breadth to stats_writer;
grant update (markets_quoted_24h) on stats.breadth to stats_writer;
