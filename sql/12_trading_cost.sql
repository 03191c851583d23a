-- Daily cost of unwinding inventory, signed: a gain from unwinding is a negative cost. A day's cost is
-- recomputed while the Data API may still be indexing its activity, so a later value replaces an
-- earlier one; the old value is kept in trading_cost_correction.
create table stats.trading_cost (
  date date primary key,
  usd stats.usd_amount not null,
  is_demo boolean not null default false,
  recorded_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index trading_cost_updated_at_idx on stats.trading_cost (updated_at);
create trigger trading_cost_not_in_future before insert or update on stats.trading_cost
  for each row execute function stats.reject_future_date();
create trigger trading_cost_track_change before update on stats.trading_cost
  for each row execute function stats.track_change();
create trigger trading_cost_keep_demo_flag before update on stats.trading_cost
  for each row execute function stats.keep_demo_flag();
alter table stats.trading_cost owner to stats_owner;
grant select, insert on stats.trading_cost to stats_writer;
grant update (usd) on stats.trading_cost to stats_writer;

create table stats.trading_cost_correction (
  id bigint generated always as identity primary key,
  date date not null,
  old_usd numeric not null,
  new_usd numeric not null,
  corrected_at timestamptz not null default now()
);
create index trading_cost_correction_date_idx on stats.trading_cost_correction (date);
alter table stats.trading_cost_correction owner to stats_owner;
grant select on stats.trading_cost_correction to stats_writer;

create function stats.audit_trading_cost() returns trigger
language plpgsql security definer set search_path = '' as $$
begin
  if new.usd is distinct from old.usd then
    insert into stats.trading_cost_correction (date, old_usd, new_usd) values (old.date, old.usd, new.usd);
  end if;
  return null;
end $$;
alter function stats.audit_trading_cost() owner to stats_owner;
create trigger trading_cost_audit after update on stats.trading_cost
  for each row execute function stats.audit_trading_cost();
