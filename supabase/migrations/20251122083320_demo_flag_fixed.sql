-- Whether a row is demo is fixed when the row is written. The writer purges demo rows (purge_demo
-- deletes `where is_demo`), so a writer able to flip the flag on a real row could then delete it:
-- no update may change the flag, and the writer's upserts never try to.
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

do $$
declare
  t text;
begin
  foreach t in array array['payout', 'trading_cost', 'accrual', 'breadth', 'capital', 'heartbeat'] loop
    execute format('create trigger %I before update on stats.%I for each row execute function stats.keep_demo_flag()',
      t || '_keep_demo_flag', t);
  end loop;
end $$;

-- The writer may not update the flag column at all: its UPDATE covers the value columns only.
revoke update on stats.payout, stats.trading_cost, stats.accrual, stats.breadth, stats.capital,
  stats.heartbeat from stats_writer;
grant update (usd) on stats.payout, stats.trading_cost to stats_writer;
grant update (usd, markets) on stats.accrual to stats_writer;
grant update (markets_quoted_24h) on stats.breadth to stats_writer;
grant update (cash_usd, inventory_usd, positions) on stats.capital to stats_writer;
