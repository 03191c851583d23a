-- Private data schema `stats`. Nothing here is reachable by `anon`; the public surface is the
-- two functions of the next migration. Roles and grants live in one place: *_roles_and_grants.sql.

create schema stats;

-- A finite amount: rejects NaN and ±Infinity, which numeric accepts.
create domain stats.usd_amount as numeric
  check (value > '-Infinity'::numeric and value < 'Infinity'::numeric);

-- Settings: one row. No data source changes them.
create table stats.settings (
  id boolean primary key default true check (id),
  since_date date,
  window_days integer not null default 15 check (window_days between 1 and 366),
  payout_fresh_days integer not null default 1 check (payout_fresh_days >= 0),
  accrual_fresh_minutes integer not null default 15 check (accrual_fresh_minutes >= 0),
  writer_alive_minutes integer not null default 5 check (writer_alive_minutes > 0),
  -- Which real source wrote last ('polymarket' | 'import'); null while there is only demo data or none.
  data_source text check (data_source in ('polymarket', 'import'))
);
insert into stats.settings default values;

-- Nightly payouts, keyed by payout date (the night that settled at 00:00 UTC on `date`).
create table stats.payout (
  date date primary key,
  usd stats.usd_amount not null check (usd >= 0),
  is_demo boolean not null default false,
  recorded_at timestamptz not null default now(),
  -- first recorded or last corrected; an upsert that changes no value leaves it (trigger below)
  updated_at timestamptz not null default now()
);
create index payout_updated_at_idx on stats.payout (updated_at);

-- Previous values of corrected payouts.
create table stats.payout_correction (
  id bigint generated always as identity primary key,
  date date not null,
  old_usd numeric not null,
  new_usd numeric not null,
  corrected_at timestamptz not null default now()
);
create index payout_correction_date_idx on stats.payout_correction (date);

-- Accrual snapshots of the day in progress; the accrual date is the UTC date of observed_at.
create table stats.accrual (
  observed_at timestamptz primary key,
  usd stats.usd_amount not null check (usd >= 0),
  markets integer not null check (markets >= 0),
  is_demo boolean not null default false
);

create table stats.breadth (
  observed_at timestamptz primary key,
  markets_quoted_24h integer not null check (markets_quoted_24h >= 0),
  is_demo boolean not null default false
);

create table stats.capital (
  observed_at timestamptz primary key,
  cash_usd stats.usd_amount not null check (cash_usd >= 0),
  inventory_usd stats.usd_amount not null check (inventory_usd >= 0),
  positions integer not null check (positions >= 0),
  is_demo boolean not null default false
);

-- Daily cost of unwinding inventory, signed: a gain from unwinding is a negative cost.
create table stats.trading_cost (
  date date primary key,
  usd stats.usd_amount not null,
  is_demo boolean not null default false,
  recorded_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index trading_cost_updated_at_idx on stats.trading_cost (updated_at);

create table stats.heartbeat (
  at timestamptz primary key,
  is_demo boolean not null default false
);

-- data_source asks whether demo rows remain; these partial indexes answer without reading history.
create index payout_demo_idx on stats.payout (date) where is_demo;
create index accrual_demo_idx on stats.accrual (observed_at) where is_demo;
create index capital_demo_idx on stats.capital (observed_at) where is_demo;

-- Payout dates may not lie after today (UTC). A CHECK may not call now(), so a trigger does it.
create function stats.reject_future_date() returns trigger
language plpgsql set search_path = '' as $$
begin
  if new.date > (now() at time zone 'utc')::date then
    raise exception using errcode = 'check_violation',
      message = format('%s.date %s lies after today (UTC)', tg_table_name, new.date);
  end if;
  return new;
end $$;

create trigger payout_not_in_future before insert or update on stats.payout
  for each row execute function stats.reject_future_date();
create trigger trading_cost_not_in_future before insert or update on stats.trading_cost
  for each row execute function stats.reject_future_date();

-- Keeps updated_at honest: only a changed value moves it. Changed payouts go to the audit table.
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

create trigger payout_track_change before update on stats.payout
  for each row execute function stats.track_change();
create trigger trading_cost_track_change before update on stats.trading_cost
  for each row execute function stats.track_change();

-- The first real write removes every demo row: demo and real data never mix. The writer may do that, and only
-- that, as a deletion: it has no DELETE privilege of its own (roles migration), so real rows can be
-- corrected (audited) but never silently removed.
create function stats.purge_demo() returns void
language sql set search_path = '' as $$
  delete from stats.payout where is_demo;
  delete from stats.trading_cost where is_demo;
  delete from stats.accrual where is_demo;
  delete from stats.breadth where is_demo;
  delete from stats.capital where is_demo;
  delete from stats.heartbeat where is_demo;
$$;
