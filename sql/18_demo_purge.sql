-- The first real write removes every demo row: demo and real data never mix. The writer may do
-- that, and only that, as a deletion: it has no DELETE privilege on the figure tables, and the demo
-- flag of a row never changes, so real rows can be corrected (audited) but never removed.
create function stats.purge_demo() returns void
language sql set search_path = '' as $$
  delete from stats.payout where is_demo;
  delete from stats.trading_cost where is_demo;
  delete from stats.accrual where is_demo;
  delete from stats.breadth where is_demo;
  delete from stats.capital where is_demo;
  delete from stats.heartbeat where is_demo;
  delete from stats.wallet_commitment where is_demo;
  delete from stats.night_transfers where is_demo;
  delete from stats.log_checkpoint where is_demo;
  delete from stats.log_entry where is_demo;
$$;
alter function stats.purge_demo() owner to stats_owner;
alter function stats.purge_demo() security definer;
grant execute on function stats.purge_demo() to stats_writer;
