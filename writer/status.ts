// `status`: what the database holds and when each kind of data was last written, and the log's state. Counts and times only.
import { sql } from 'kysely';
import type { WriterDb } from './db.ts';
import { activeWriter } from './lock.ts';

export interface Status {
  data_source: string | null;
  /** The writer holding the writer lock now; null when none does. */
  active_writer: string | null;
  tables: Record<string, { rows: number; demo_rows: number; latest: string | null; last_written: string | null }>;
  corrections: number;
  /**
   * The transparency log: its entries, how many the latest checkpoint signs, and why the rest wait
   * (health's log.waiting: on a failover group running on one node, "written on one node, waiting for
   * a standby"), else null.
   */
  log: { entries: number; signed: number; waiting: string | null };
}

export async function readStatus(db: WriterDb): Promise<Status> {
  // data_source exactly as landing_stats reports it ("demo" is derived there, not stored).
  const source = await sql<{ data_source: string | null }>`select stats.stats_at(now()) ->> 'data_source' as data_source`.execute(db);
  // Dated tables: latest = the newest date, last_written = when a value last changed.
  const dated = async (table: 'stats.payout' | 'stats.trading_cost') => {
    const r = await db.selectFrom(table).select([
      sql<number>`count(*)::int`.as('rows'), sql<number>`count(*) filter (where is_demo)::int`.as('demo_rows'),
      sql<string | null>`max(date)::text`.as('latest'), sql<Date | null>`max(updated_at)`.as('last_written'),
    ]).executeTakeFirstOrThrow();
    return { rows: r.rows, demo_rows: r.demo_rows, latest: r.latest, last_written: r.last_written?.toISOString() ?? null };
  };
  const observed = async (table: 'stats.accrual' | 'stats.breadth' | 'stats.capital' | 'stats.heartbeat', column: 'observed_at' | 'at') => {
    const r = await db.selectFrom(table).select([
      sql<number>`count(*)::int`.as('rows'), sql<number>`count(*) filter (where is_demo)::int`.as('demo_rows'),
      sql<Date | null>`max(${sql.ref(column)})`.as('latest'),
    ]).executeTakeFirstOrThrow();
    const latest = r.latest?.toISOString() ?? null;
    return { rows: r.rows, demo_rows: r.demo_rows, latest, last_written: latest };
  };
  const corrections = await db.selectFrom('stats.payout_correction').select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow();
  const log = await sql<Status['log']>`select coalesce((select max(idx) + 1 from stats.log_entry), 0)::int as entries,
    coalesce((select max(size) from stats.log_checkpoint), 0)::int as signed, stats.health_at(now()) -> 'log' ->> 'waiting' as waiting`.execute(db);
  return {
    data_source: source.rows[0]?.data_source ?? null,
    active_writer: await activeWriter(db),
    tables: {
      payout: await dated('stats.payout'),
      trading_cost: await dated('stats.trading_cost'),
      accrual: await observed('stats.accrual', 'observed_at'),
      breadth: await observed('stats.breadth', 'observed_at'),
      capital: await observed('stats.capital', 'observed_at'),
      heartbeat: await observed('stats.heartbeat', 'at'),
    },
    corrections: corrections.n,
    log: log.rows[0]!,
  };
}

export function formatStatus(s: Status): string {
  const lines = [`data source: ${s.data_source ?? 'none (no data yet)'}`, `active writer: ${s.active_writer ?? 'none holds the writer lock'}`];
  for (const [name, t] of Object.entries(s.tables)) {
    lines.push(`${name.padEnd(13)} ${String(t.rows).padStart(7)} rows${t.demo_rows ? ` (${t.demo_rows} demo)` : ''}  latest ${t.latest ?? '-'}  last written ${t.last_written ?? '-'}`);
  }
  lines.push(`payout corrections: ${s.corrections}`);
  lines.push(`transparency log: ${s.log.entries} entries, ${s.log.signed} signed${s.log.waiting ? ` (${s.log.waiting})` : ''}`);
  return lines.join('\n');
}
