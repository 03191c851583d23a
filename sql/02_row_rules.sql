-- Rules every data row obeys, whoever writes it.

-- Payout and cost dates may not lie after today (UTC). A CHECK may not call now(), so a trigger does it.
create function stats.reject_future_date() returns trigger
language plpgsql set search_path = '' as $$
begin
  if new.date > (now() at time zone 'utc')::date then
    raise exception using errcode = 'check_violation',
      message = format('%s.date %s lies after today (UTC)', tg_table_name, new.date);
  end if;
  return new;
end $$;
alter function stats.reject_future_date() owner to stats_owner;

-- Keeps updated_at honest: only a changed value moves it. Changed payouts go to the audit table,
-- written with the owner's rights, so the writer needs no privilege on it beyond reading it.
create function stats.track_change() returns trigger
language plpgsql set search_path = '' as $$
begin
  if new.usd is not distinct from old.usd and new.is_demo = old.is_demo then
    new.updated_at := old.updated_at;
  else
    new.updated_at := now();
    if tg_table_name = 'payout' then
      insert into stats.payout_correction (date, old_usd, new_usd) values (old.date, old.usd, new.usd);
    end if;
  end if;
  new.recorded_at := old.recorded_at;
  return new;
end $$;
alter function stats.track_change() owner to stats_owner;
alter function stats.track_change() security definer;

-- Whether a row is demo is fixed when the row is written. The writer purges demo rows (purge_demo
-- deletes `where is_demo`), so a writer able to flip the flag on a real row could then delete it.
create function stats.keep_demo_flag() returns trigger
language plpgsql set search_path = '' as $$
begin
  if new.is_demo is distinct from old.is_demo then
    raise exception 'is_demo of a % row is fixed when the row is written', tg_table_name
      using errcode = 'check_violation';
  end if;
  return new;
end $$;
alter function stats.keep_demo_flag() owner to stats_owner;
