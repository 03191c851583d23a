// Production migrations are forward-only: each one applies on a database that holds data written
// under the previous one, and nothing written before is lost.
import { readdirSync } from 'node:fs';
import { runner } from 'node-pg-migrate';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { StatsTableName } from '../../contract/tables.ts';
import { migrate, MIGRATIONS_DIR } from '../../stack/migrations.ts';
import { withClient } from '../support/db.ts';

const { adminUrl } = inject('stack');
const scratchUrl = adminUrl.replace(/\/postgres$/, '/migration_chain');

// Rows for each table as soon as it exists (dates well in the past, so no trigger objects).
const FIXTURES: Partial<Record<StatsTableName, string>> = {
  payout: `insert into stats.payout (date, usd) values ('2026-01-01', 10.5), ('2026-01-02', 11.25)`,
  accrual: `insert into stats.accrual (observed_at, usd, markets) values ('2026-01-02T10:00:00Z', 3.5, 4)`,
  breadth: `insert into stats.breadth (observed_at, markets_quoted_24h) values ('2026-01-02T10:00:00Z', 9)`,
  capital: `insert into stats.capital (observed_at, cash_usd, inventory_usd, positions) values ('2026-01-02T10:00:00Z', 900, 100, 3)`,
  trading_cost: `insert into stats.trading_cost (date, usd) values ('2026-01-02', 1.5)`,
  heartbeat: `insert into stats.heartbeat (at) values ('2026-01-02T10:00:00Z')`,
};

async function tableRows(): Promise<Record<string, number>> {
  return withClient(scratchUrl, async (c) => {
    const tables = (await c.query(`select table_name from information_schema.tables where table_schema = 'stats' and table_type = 'BASE TABLE'`)).rows.map((r) => r.table_name as string);
    const counts: Record<string, number> = {};
    for (const t of tables) counts[t] = (await c.query(`select count(*)::int as n from stats.${t}`)).rows[0].n;
    return counts;
  });
}

beforeAll(() => withClient(adminUrl, (c) => c.query('create database migration_chain')));
afterAll(() => withClient(adminUrl, (c) => c.query('drop database if exists migration_chain with (force)')));

describe('migration chain', () => {
  it('applies every migration, one at a time, over data written under the previous ones', async () => {
    const files = readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql'));
    let before: Record<string, number> = {};
    for (const file of files.sort()) {
      const ran = await runner({
        databaseUrl: scratchUrl, dir: MIGRATIONS_DIR, direction: 'up', count: 1, migrationsSchema: 'pgmigrations',
        createMigrationsSchema: true, migrationsTable: 'pgmigrations', singleTransaction: true, log: () => {},
      });
      expect(ran.map((m) => `${m.name}.sql`)).toEqual([file]);
      const after = await tableRows();
      for (const [table, n] of Object.entries(before)) expect(after[table], `${table} after ${file}`).toBeGreaterThanOrEqual(n);
      await withClient(scratchUrl, async (c) => {
        for (const [table, sql] of Object.entries(FIXTURES)) if (after[table] === 0) await c.query(sql);
      });
      before = await tableRows();
    }
    const stats = await withClient(scratchUrl, async (c) => (await c.query(`select stats.stats_at('2026-01-02T12:00:00Z') as s`)).rows[0].s);
    expect(stats).toMatchObject({ last_night_usd: 11.25, total_usd: 21.75, accrued_today_usd: 3.5, markets_quoted_24h: 9, capital: { at_stake_usd: 1000 } });
  });

  it('recognises a database migrated under the earlier names (<epoch-ms>_<name>) as up to date', async () => {
    // The chain above left every migration applied; record them as an earlier release did.
    await withClient(scratchUrl, (c) => c.query(`
      update pgmigrations.pgmigrations set name = (extract(epoch from to_timestamp(left(name, 14), 'YYYYMMDDHH24MISS') at time zone 'UTC') * 1000)::bigint || substr(name, 15)`));
    const old = await withClient(scratchUrl, async (c) => (await c.query(`select name from pgmigrations.pgmigrations order by id`)).rows.map((r) => r.name as string));
    expect(old[0]).toMatch(/^\d{13}_stats_schema$/);
    await migrate(scratchUrl, () => {});
    const names = await withClient(scratchUrl, async (c) => (await c.query(`select name from pgmigrations.pgmigrations order by id`)).rows.map((r) => `${r.name as string}.sql`));
    expect(names).toEqual(readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql')).sort());
  });
});
