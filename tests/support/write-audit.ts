// A test instrument of the writer tests: statement triggers (they fire even when a statement changes
// no row) that record each write to a data table with the session's application_name (which names
// the writer) and the database's clock, so each write is attributed to the writer that made it,
// whatever the writer logs. A rolled-back transaction leaves no record, as it leaves no write. And who
// holds the writer lock now, by the same name.
import type { StatsTableName } from '../../contract/tables.ts';
import { WRITER_LOCK_KEY } from '../../writer/lock.ts';
import { query, resetData } from './db.ts';

const AUDITED: StatsTableName[] = ['payout', 'trading_cost', 'accrual', 'breadth', 'capital', 'heartbeat', 'log_entry', 'settings', 'quoted_market', 'capital_held'];

/** Adds the audit table and its triggers to the database behind `adminUrl`. */
export async function installWriteAudit(adminUrl: string): Promise<void> {
  await query(adminUrl, `
    create table public.write_audit (at timestamptz not null default clock_timestamp(), tbl text not null, op text not null, app text not null);
    create function public.audit_write() returns trigger language plpgsql security definer set search_path = '' as $$
    begin
      insert into public.write_audit (tbl, op, app) values (tg_table_name, tg_op, current_setting('application_name'));
      return null;
    end $$;
    ${AUDITED.map((t) => `create trigger audit_write after insert or update or delete on stats.${t} for each statement execute function public.audit_write();`).join('\n')}`);
}

/** Empties the data tables and the audit, for the next test. */
export async function resetAudited(stack: { db: { adminUrl: string } }): Promise<void> {
  await resetData(stack);
  await query(stack.db.adminUrl, 'truncate public.write_audit');
}

/** The sessions holding the writer lock: their backend and application_name. */
export const lockHolders = (adminUrl: string) => query<{ pid: number; app: string }>(adminUrl, `select l.pid, a.application_name as app
  from pg_locks l join pg_stat_activity a on a.pid = l.pid
  where l.locktype = 'advisory' and l.classid = $1 and l.objid = $2 and l.objsubid = 2 and l.granted`, [...WRITER_LOCK_KEY]);
