-- The writer's heartbeats: its liveness, and which writer was alive. A writer names itself
-- (WRITER_NAME, or a random name per process) and never its host; an imported heartbeat has no name.
-- The name is published (landing_health), so it is held to a plain short token.
create table stats.heartbeat (
  at timestamptz primary key,
  is_demo boolean not null default false,
  writer text check (writer ~ '^[A-Za-z0-9._-]{1,32}$')
);
create trigger heartbeat_keep_demo_flag before update on stats.heartbeat
  for each row execute function stats.keep_demo_flag();
alter table stats.heartbeat owner to stats_owner;
grant select, insert on stats.heartbeat to stats_writer;
