// The NDJSON import of valid files against a real database: every kind of event through the CLI,
// stdin, re-import, corrections, duplicates inside a file and the demo hand-over.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { addDays, todayUtc } from '../../contract/dates.ts';
import { DEMO_TABLES, type StatsTableName } from '../../contract/tables.ts';
import { seedDemoIfEmpty } from '../../writer/demo.ts';
import type { WriterDb } from '../../writer/db.ts';
import { EVENT_TYPES } from '../../writer/events.ts';
import { query, resetData, totalRows } from '../support/db.ts';
import { countRows, importText as importInto, lines, startImportStack, stopImportStack } from '../support/import-stack.ts';
import type { TestStack } from '../support/stack.ts';
import { cliEnv, landingStats, landingStatsViaApi, runCli } from '../support/writer.ts';

let stack: TestStack;
let db: WriterDb;
let dir: string;
const today = todayUtc();
const nowIso = () => new Date(Date.now() - 1000).toISOString();
const importText = (text: string) => importInto(db, text);
const count = (table: StatsTableName) => countRows(stack, table);

beforeAll(async () => ({ stack, db, dir } = await startImportStack()));
afterAll(() => stopImportStack({ stack, db, dir }));
beforeEach(() => resetData(stack));

describe('import of valid events', () => {
  it('writes every kind of event from a file through the CLI, and landing_stats shows them', async () => {
    const at = nowIso();
    const file = path.join(dir, 'valid.ndjson');
    writeFileSync(file, lines(
      { type: 'payout', date: addDays(today, -1), usd: 40.004 },
      { type: 'payout', date: today, usd: 52.5 },
      { type: 'trading_cost', date: addDays(today, -1), usd: -3.25 },
      { type: 'trading_cost', date: today, usd: 10 },
      { type: 'accrual', at, usd: 12.345, markets: 7 },
      { type: 'breadth', at, markets_quoted_24h: 19 },
      { type: 'capital', at, cash_usd: 900, inventory_usd: 100.5, positions: 4 },
      { type: 'heartbeat', at },
    ) + '\n'); // a trailing blank line is allowed
    const run = await runCli(['import', file], cliEnv(stack));
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const committed = run.lines.find((l) => l.msg === 'import committed');
    expect(committed).toMatchObject({ events: 8, byType: { payout: 2, trading_cost: 2, accrual: 1, breadth: 1, capital: 1, heartbeat: 1 } });
    expect(Object.keys(committed!.byType as object).sort()).toEqual([...EVENT_TYPES].sort()); // every kind there is

    const stats = await landingStatsViaApi(stack);
    expect(stats.data_source).toBe('import');
    expect(stats.daily).toEqual([{ date: addDays(today, -1), usd: 40 }, { date: today, usd: 52.5 }]);
    expect(stats.last_night_usd).toBe(52.5);
    expect(stats.total_usd).toBe(92.5);
    expect(stats.accrued_today_usd).toBe(12.35);
    expect(stats.accrued_today_markets).toBe(7);
    expect(stats.markets_quoted_24h).toBe(19);
    expect(stats.capital).toMatchObject({ cash_usd: 900, inventory_usd: 100.5, positions: 4, at_stake_usd: 1000.5 });
    expect(stats.returns.trading_costs_usd).toBe(6.75);
    // Full precision is stored; rounding happens only in the output.
    expect((await query(stack.db.adminUrl, `select usd::text from stats.payout where date = $1`, [addDays(today, -1)]))[0]).toEqual({ usd: '40.004' });
  });

  it('reads stdin when the file is -', async () => {
    const run = await runCli(['import', '-'], cliEnv(stack), lines({ type: 'payout', date: today, usd: 3 }));
    expect(run.code, run.stderr).toBe(0);
    expect(await query(stack.db.adminUrl, 'select date, usd::float8 as usd from stats.payout')).toEqual([{ date: today, usd: 3 }]);
  });

  it('changes nothing when the same data is imported again', async () => {
    const text = lines(
      { type: 'payout', date: addDays(today, -2), usd: 10 },
      { type: 'payout', date: addDays(today, -1), usd: 20 },
      { type: 'trading_cost', date: addDays(today, -1), usd: 2 },
      { type: 'capital', at: '2026-01-05T00:00:00Z', cash_usd: 1, inventory_usd: 2, positions: 3 },
    );
    await importText(text);
    const before = await query(stack.db.adminUrl, `select date, usd::text, updated_at, recorded_at, xmin::text from stats.payout order by date`);
    const statsBefore = await landingStats(stack);
    await new Promise((r) => setTimeout(r, 20));
    await importText(text);
    // xmin unchanged: the upsert did not even write a new row version.
    expect(await query(stack.db.adminUrl, `select date, usd::text, updated_at, recorded_at, xmin::text from stats.payout order by date`)).toEqual(before);
    expect(await count('payout_correction')).toBe(0);
    const statsAfter = await landingStats(stack);
    expect(statsAfter.updated_at).toBe(statsBefore.updated_at);
    expect(statsAfter).toEqual(statsBefore);
  });

  it('records a changed payout as a correction and keeps the previous value', async () => {
    const date = addDays(today, -3);
    await importText(lines({ type: 'payout', date, usd: 30 }));
    const [first] = await query<{ updated_at: Date }>(stack.db.adminUrl, 'select updated_at from stats.payout');
    await new Promise((r) => setTimeout(r, 20));
    await importText(lines({ type: 'payout', date, usd: 31.5 }));
    const [second] = await query<{ usd: string; updated_at: Date }>(stack.db.adminUrl, 'select usd::text, updated_at from stats.payout');
    expect(second!.usd).toBe('31.5');
    expect(second!.updated_at.getTime()).toBeGreaterThan(first!.updated_at.getTime());
    expect(await query(stack.db.adminUrl, 'select date, old_usd::text, new_usd::text from stats.payout_correction'))
      .toEqual([{ date, old_usd: '30', new_usd: '31.5' }]);
  });

  it('handles duplicates inside one file: identical lines once, changed values as corrections in order', async () => {
    const date = addDays(today, -4);
    const result = await importText(lines(
      { type: 'payout', date, usd: 5 },
      { type: 'payout', date, usd: 5 },
      { type: 'accrual', at: '2026-03-01T10:00:00Z', usd: 1, markets: 1 },
      { type: 'accrual', at: '2026-03-01T10:00:00Z', usd: 1, markets: 1 },
      { type: 'payout', date, usd: 6 },
      { type: 'payout', date, usd: 7 },
    ));
    expect(result.events).toBe(6);
    expect(await query(stack.db.adminUrl, 'select usd::text from stats.payout')).toEqual([{ usd: '7' }]);
    expect(await count('accrual')).toBe(1);
    expect(await query(stack.db.adminUrl, 'select old_usd::text, new_usd::text from stats.payout_correction order by id'))
      .toEqual([{ old_usd: '5', new_usd: '6' }, { old_usd: '6', new_usd: '7' }]);
  });

  it('replaces demo data with the first import, in the same transaction', async () => {
    expect(await seedDemoIfEmpty(stack.db.adminUrl)).toBe(true);
    expect((await landingStats(stack)).data_source).toBe('demo');
    await importText(lines({ type: 'payout', date: addDays(today, -1), usd: 11 }));
    expect(await totalRows(stack.db.adminUrl, DEMO_TABLES, 'is_demo')).toBe(0);
    const stats = await landingStats(stack);
    expect(stats.data_source).toBe('import');
    expect(stats.daily).toEqual([{ date: addDays(today, -1), usd: 11 }]);
    expect(stats.capital).toBeNull();
  });
});
