-- The real log's origin is fixed by its first checkpoint: stats.log_origin() gives it (null before
-- one is signed), and a real checkpoint naming another origin is refused, so a moved site keeps its log.
set check_function_bodies = off;

CREATE OR REPLACE FUNCTION stats.log_origin()
 RETURNS text
 LANGUAGE sql
 STABLE
 SET search_path TO ''
AS $function$
  select pg_catalog.split_part(c.note, E'\n', 1) from stats.log_checkpoint c where not c.is_demo order by c.size limit 1
$function$
;

CREATE OR REPLACE FUNCTION stats.log_checkpoint_appended()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  last stats.log_checkpoint;
begin
  select * into last from stats.log_checkpoint order by size desc limit 1;
  if new.size <= last.size then
    raise exception 'the log''s checkpoints only grow: size % would follow size %', new.size, last.size
      using errcode = 'check_violation';
  end if;
  if new.size > (select coalesce(max(idx) + 1, 0) from stats.log_entry) then
    raise exception 'checkpoint size % names entries the log does not hold', new.size using errcode = 'check_violation';
  end if;
  if last.is_demo is distinct from new.is_demo and last.size is not null then
    raise exception 'demo and real nights never share a log' using errcode = 'check_violation';
  end if;
  if not new.is_demo and pg_catalog.split_part(new.note, E'\n', 1) <> coalesce(stats.log_origin(), pg_catalog.split_part(new.note, E'\n', 1)) then
    raise exception 'the log''s origin is %, fixed by its first checkpoint: a checkpoint naming % is refused',
      stats.log_origin(), pg_catalog.split_part(new.note, E'\n', 1) using errcode = 'check_violation';
  end if;
  return new;
end $function$
;

alter function stats.log_origin() owner to stats_owner;
grant execute on function stats.log_origin() to stats_writer;
