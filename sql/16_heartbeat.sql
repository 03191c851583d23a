-- The writer's heartbeats: its liveness.
create table stats.heartbeat (
  at timestamptz primary key,
  is_demo boolean not null default false
);
create trigger heartbeat_keep_demo_flag before update on stats.heartbeat
  for each row execute function stats.keep_demo_flag();
alter table stats.heartbeat owner to stats_owner;
grant select, insert on stats.heartbeat to stats_writer;
