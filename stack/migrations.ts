// The migration history (supabase/migrations) and the declared schema (sql/), and applying each:
// the history to bring a database up to date, the declared schema to build the database it should be.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { runner } from 'node-pg-migrate';
import { ROOT_DIR } from '../config/checkout.ts';
import { connectDatabase, SERVER_TIMEOUTS } from '../db-client/pg-connect.ts';
import type { Log } from './processes.ts';

/** The one migration history: plain SQL, applied by node-pg-migrate here and by the Supabase CLI for hosting. */
export const MIGRATIONS_DIR = path.join(ROOT_DIR, 'supabase', 'migrations');
/** The database as it should be, declared object by object; new migrations are diffed against it. */
export const DECLARED_DIR = path.join(ROOT_DIR, 'sql');

/**
 * Databases migrated before the history moved to supabase/migrations recorded each migration under
 * its old name, <epoch-ms>_<name>; the same migration is now <UTC YYYYMMDDHHMMSS>_<name>. Renamed in
 * place, so the runner sees them as applied.
 */
async function renameRecordedMigrations(client: pg.Client): Promise<void> {
  const table = (await client.query(`select to_regclass('pgmigrations.pgmigrations') as t`)).rows[0].t;
  if (!table) return;
  const { rows } = await client.query<{ id: number; name: string }>(`select id, name from pgmigrations.pgmigrations where name ~ '^[0-9]{13}_'`);
  for (const row of rows) {
    const [, ms, rest] = /^(\d{13})_(.+)$/.exec(row.name)!;
    const stamp = new Date(Number(ms)).toISOString().replace(/\D/g, '').slice(0, 14);
    await client.query(`update pgmigrations.pgmigrations set name = $1 where id = $2`, [`${stamp}_${rest}`, row.id]);
  }
}

export async function migrate(adminUrl: string, log: Log, dir = MIGRATIONS_DIR): Promise<void> {
  // One session on the server that takes writes (the URL may list several hosts), for both steps.
  const client = await connectDatabase(adminUrl, { applicationName: 'stats-migrate', timeouts: SERVER_TIMEOUTS });
  try {
    await renameRecordedMigrations(client);
    await runner({
      dbClient: client,
      dir,
      direction: 'up',
      migrationsSchema: 'pgmigrations',
      createMigrationsSchema: true,
      migrationsTable: 'pgmigrations',
      singleTransaction: true,
      checkOrder: true,
      log: () => {},
      logger: { debug: () => {}, info: (m: string) => { if (/Migrating|MIGRATION/.test(m)) log(m.trim()); }, warn: log, error: log },
    });
  } catch (error) {
    throw new Error(`A migration failed (${(error as Error).message}); nothing of it was applied. Fix the SQL under supabase/migrations and start again.`);
  } finally {
    await client.end();
  }
}

/** Applies the declared schema (every file of sql/, in name order) to an empty database, in one transaction. */
export async function applyDeclared(adminUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query('begin');
    for (const file of readdirSync(DECLARED_DIR).filter((f) => f.endsWith('.sql')).sort()) {
      await client.query(readFileSync(path.join(DECLARED_DIR, file), 'utf8')).catch((error: Error) => {
        throw new Error(`sql/${file}: ${error.message}`);
      });
    }
    await client.query('commit');
  } catch (error) {
    await client.query('rollback').catch(() => {});
    throw error;
  } finally {
    await client.end();
  }
}
