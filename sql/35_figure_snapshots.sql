-- The snapshots the records are read from (stats.history_snapshot, stats.stats_snapshot) are rebuilt
-- when a transaction that changed any table the figures come from commits: a deferred trigger, once
-- per transaction. Until then that transaction reads the figures from the tables, so it sees its own
-- writes; every other reader sees the data and the snapshots change together, at the commit.

-- Both snapshots, the history's first: the stats record's totals are read from it. Also run by a
-- restore, whose rows load with triggers off.
create function stats.refresh_figures() returns void
language sql security definer set search_path = '' as $$
  select stats.refresh_history_snapshot();
  select stats.refresh_stats_snapshot();
$$;
alter function stats.refresh_figures() owner to stats_owner;

-- Deferred to commit, once per row: the first call of a transaction rebuilds the snapshots, the rest
-- see them done.
create function stats.figures_changed() returns trigger
language plpgsql security definer set search_path = '' as $$
begin
  if pg_catalog.current_setting('stats.figures_rebuilt_in', true) is distinct from pg_catalog.txid_current()::text then
    perform stats.refresh_figures();
    perform pg_catalog.set_config('stats.figures_rebuilt_in', pg_catalog.txid_current()::text, true);
  end if;
  return null;
end $$;
alter function stats.figures_changed() owner to stats_owner;

-- Until its commit rebuilds them, a transaction that changed figures reads them from the tables, so
-- it sees its own writes: each writing statement marks it, for the rest of the transaction.
create function stats.figures_pending() returns trigger
language plpgsql set search_path = '' as $$
begin
  perform pg_catalog.set_config('stats.figures_pending', 'on', true);
  return null;
end $$;
alter function stats.figures_pending() owner to stats_owner;

-- Whether this transaction changed figures that the snapshots do not hold yet.
create function stats.figures_pending_here() returns boolean
language sql stable set search_path = '' as $$
  -- null in a session that never set it
  select coalesce(pg_catalog.current_setting('stats.figures_pending', true) = 'on', false)
$$;
alter function stats.figures_pending_here() owner to stats_owner;
grant execute on function stats.figures_pending_here() to stats_writer;

-- Whether a snapshot made at p_computed_at, good until p_valid_until (null: no end), holds the figures
-- as of p_now: the one rule for both snapshots and every reader of them.
create function stats.snapshot_holds(p_computed_at timestamptz, p_valid_until timestamptz, p_now timestamptz) returns boolean
language sql stable set search_path = '' as $$
  select p_computed_at is not null and p_now >= p_computed_at
    and (p_valid_until is null or p_now < p_valid_until) and not stats.figures_pending_here()
$$;
alter function stats.snapshot_holds(timestamptz, timestamptz, timestamptz) owner to stats_owner;
grant execute on function stats.snapshot_holds(timestamptz, timestamptz, timestamptz) to stats_writer;

-- A TRUNCATE fires no row trigger: the snapshots go, and readers work the figures out live until the
-- next write.
create function stats.figures_truncated() returns trigger
language plpgsql security definer set search_path = '' as $$
begin
  delete from stats.history_snapshot;
  delete from stats.stats_snapshot;
  return null;
end $$;
alter function stats.figures_truncated() owner to stats_owner;

create constraint trigger payout_figures_changed after insert or update or delete on stats.payout
  deferrable initially deferred for each row execute function stats.figures_changed();
create constraint trigger trading_cost_figures_changed after insert or update or delete on stats.trading_cost
  deferrable initially deferred for each row execute function stats.figures_changed();
create constraint trigger accrual_figures_changed after insert or update or delete on stats.accrual
  deferrable initially deferred for each row execute function stats.figures_changed();
create constraint trigger breadth_figures_changed after insert or update or delete on stats.breadth
  deferrable initially deferred for each row execute function stats.figures_changed();
create constraint trigger capital_figures_changed after insert or update or delete on stats.capital
  deferrable initially deferred for each row execute function stats.figures_changed();
create constraint trigger log_entry_figures_changed after insert or delete on stats.log_entry
  deferrable initially deferred for each row execute function stats.figures_changed();
create constraint trigger log_checkpoint_figures_changed after insert or delete on stats.log_checkpoint
  deferrable initially deferred for each row execute function stats.figures_changed();
create constraint trigger log_witnessed_figures_changed after insert on stats.log_witnessed
  deferrable initially deferred for each row execute function stats.figures_changed();
create constraint trigger log_policy_figures_changed after insert on stats.log_policy
  deferrable initially deferred for each row execute function stats.figures_changed();
create constraint trigger log_audit_figures_changed after insert on stats.log_audit
  deferrable initially deferred for each row execute function stats.figures_changed();
create constraint trigger settings_figures_changed after update of since_date, window_days, data_source on stats.settings
  deferrable initially deferred for each row execute function stats.figures_changed();
create trigger payout_figures_pending after insert or update or delete on stats.payout for each statement execute function stats.figures_pending();
create trigger trading_cost_figures_pending after insert or update or delete on stats.trading_cost for each statement execute function stats.figures_pending();
create trigger accrual_figures_pending after insert or update or delete on stats.accrual for each statement execute function stats.figures_pending();
create trigger breadth_figures_pending after insert or update or delete on stats.breadth for each statement execute function stats.figures_pending();
create trigger capital_figures_pending after insert or update or delete on stats.capital for each statement execute function stats.figures_pending();
create trigger log_entry_figures_pending after insert or delete on stats.log_entry for each statement execute function stats.figures_pending();
create trigger log_checkpoint_figures_pending after insert or delete on stats.log_checkpoint for each statement execute function stats.figures_pending();
create trigger log_witnessed_figures_pending after insert on stats.log_witnessed for each statement execute function stats.figures_pending();
create trigger log_policy_figures_pending after insert on stats.log_policy for each statement execute function stats.figures_pending();
create trigger log_audit_figures_pending after insert on stats.log_audit for each statement execute function stats.figures_pending();
create trigger settings_figures_pending after update of since_date, window_days, data_source on stats.settings for each statement execute function stats.figures_pending();
create trigger payout_figures_truncated after truncate on stats.payout for each statement execute function stats.figures_truncated();
create trigger trading_cost_figures_truncated after truncate on stats.trading_cost for each statement execute function stats.figures_truncated();
create trigger accrual_figures_truncated after truncate on stats.accrual for each statement execute function stats.figures_truncated();
create trigger breadth_figures_truncated after truncate on stats.breadth for each statement execute function stats.figures_truncated();
create trigger capital_figures_truncated after truncate on stats.capital for each statement execute function stats.figures_truncated();

