-- Markets the account quoted, for the rolling 24-hour breadth. Only a keyed digest of each market
-- (an HMAC under a secret that only the writer holds) and when it was last quoted are kept, so no
-- row names a market, and nobody without the writer's secret can tell which market a row stands for.
create table stats.quoted_market (
  digest bytea primary key check (octet_length(digest) = 32),
  last_seen_at timestamptz not null
);
create index quoted_market_last_seen_idx on stats.quoted_market (last_seen_at);
alter table stats.quoted_market owner to stats_owner;
-- DELETE only here: digests older than the window are dropped; the figure tables stay delete-free.
grant select, insert, update, delete on stats.quoted_market to stats_writer;

-- Previous values of corrected trading costs. A day's cost is recomputed while the Data API may still
-- be indexing its activity, so a later value replaces an earlier one; the old value is kept here.
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
revoke execute on function stats.audit_trading_cost() from public;

create trigger trading_cost_audit after update on stats.trading_cost
  for each row execute function stats.audit_trading_cost();
