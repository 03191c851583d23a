// Direct database access for tests: a superuser client, helpers that run inside a transaction
// that is always rolled back, so tests never see each other's rows, and the counting and emptying of
// the `stats` tables (named by contract/tables.ts).
import pg from 'pg';
import { inject } from 'vitest';
import { DATA_TABLES, STATS_TABLES, TABLE_NAMES, type StatsTableName } from '../../contract/tables.ts';

pg.types.setTypeParser(1082, (value) => value); // date stays 'YYYY-MM-DD'

export async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  // A server that goes away (the failover tests kill one) ends an idle connection with an 'error'
  // event, which unheard would crash the test run; a query under way still fails with its own error.
  client.on('error', () => {});
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function query<T = Record<string, unknown>>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  return withClient(url, async (client) => (await client.query(text, values)).rows as T[]);
}

/** How many rows each of `tables` holds (those matching `where`, e.g. 'is_demo'). */
export async function rowCounts<T extends StatsTableName>(url: string, tables: readonly T[] = TABLE_NAMES as T[], where = 'true'): Promise<Record<T, number>> {
  const [row] = await query<Record<T, number>>(url, `select ${tables.map((t) => `(select count(*)::int from stats.${t} where ${where}) as ${t}`).join(', ')}`);
  return row!;
}

/** The sum of rowCounts. */
export const totalRows = async (...args: Parameters<typeof rowCounts>): Promise<number> =>
  Object.values<number>(await rowCounts(...args)).reduce((sum, n) => sum + n, 0);

/**
 * Empties every data table and the recorded source, so one stack serves several independent tests.
 * The log refuses a TRUNCATE from every role; only a superuser that switches triggers off (as a
 * replica applying changes does) can empty it, which is what a fresh test database is.
 */
export async function resetData(stack: { db: { adminUrl: string } }): Promise<void> {
  const kept = DATA_TABLES.filter((t) => !STATS_TABLES[t].appendOnly).map((t) => `stats.${t}`);
  const appendOnly = DATA_TABLES.filter((t) => STATS_TABLES[t].appendOnly).map((t) => `stats.${t}`);
  await query(stack.db.adminUrl, `truncate ${kept.join(', ')};
    set session_replication_role = replica; truncate ${appendOnly.join(', ')}; set session_replication_role = origin;
    update stats.settings set data_source = null`);
}

/** Runs `fn` in a transaction on the shared stack's database as superuser, then rolls it back. */
export async function inRollback<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  return withClient(inject('stack').adminUrl, async (client) => {
    await client.query('begin');
    try {
      return await fn(client);
    } finally {
      await client.query('rollback');
    }
  });
}
