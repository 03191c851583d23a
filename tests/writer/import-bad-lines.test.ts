// The NDJSON import of bad input against a real database: every kind of bad line names its line and
// reason and writes nothing, through the CLI too, and an input without events leaves the demo data.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { addDays, todayUtc } from '../../contract/dates.ts';
import { DATA_TABLES, type StatsTableName } from '../../contract/tables.ts';
import { seedDemoIfEmpty } from '../../writer/demo.ts';
import type { WriterDb } from '../../writer/db.ts';
import { importEvents } from '../../writer/import.ts';
import { query, resetData, rowCounts } from '../support/db.ts';
import { countRows, importText as importInto, lines, log, startImportStack, stopImportStack } from '../support/import-stack.ts';
import type { TestStack } from '../support/stack.ts';
import { cliEnv, landingStats, runCli } from '../support/writer.ts';

let stack: TestStack;
let db: WriterDb;
let dir: string;
const today = todayUtc();
const importText = (text: string) => importInto(db, text);
const count = (table: StatsTableName) => countRows(stack, table);

beforeAll(async () => ({ stack, db, dir } = await startImportStack()));
afterAll(() => stopImportStack({ stack, db, dir }));
beforeEach(() => resetData(stack));

describe('import of bad lines', () => {
  const valid = [{ type: 'payout', date: addDays(today, -1), usd: 1 }, { type: 'heartbeat', at: '2026-01-01T00:00:00Z' }];
  const tomorrow = addDays(today, 1);
  const cases: [string, string, RegExp][] = [
    ['invalid JSON', '{"type":"payout",', /^line 3: not valid JSON/],
    ['not an object', '[1,2]', /^line 3: must be a JSON object/],
    ['unknown type', '{"type":"payment","date":"2026-01-01","usd":1}', /^line 3: type: must be one of payout, accrual/],
    ['missing field', '{"type":"payout","date":"2026-01-01"}', /^line 3: usd: .*expected number/],
    ['number as a string', '{"type":"payout","date":"2026-01-01","usd":"12"}', /^line 3: usd: .*expected number, received string/],
    ['negative payout', '{"type":"payout","date":"2026-01-01","usd":-1}', /^line 3: usd: must be 0 or more/],
    ['infinite amount', '{"type":"trading_cost","date":"2026-01-01","usd":1e400}', /^line 3: usd: /],
    ['impossible date', '{"type":"payout","date":"2026-02-30","usd":1}', /^line 3: date: must be a calendar date/],
    ['impossible month', '{"type":"payout","date":"2026-13-01","usd":1}', /^line 3: date: must be a calendar date YYYY-MM-DD/],
    ['future payout date', `{"type":"payout","date":"${tomorrow}","usd":1}`, /^line 3: date: .* lies after today/],
    ['timestamp without zone', '{"type":"accrual","at":"2026-01-01T00:00:00","usd":1,"markets":1}', /^line 3: at: must be an ISO 8601 timestamp with a time zone/],
    ['future observation', `{"type":"heartbeat","at":"${tomorrow}T12:00:00Z"}`, /^line 3: at: .* lies in the future/],
    ['fractional count', '{"type":"accrual","at":"2026-01-01T00:00:00Z","usd":1,"markets":1.5}', /^line 3: markets: must be a whole number/],
    ['negative count', '{"type":"capital","at":"2026-01-01T00:00:00Z","cash_usd":1,"inventory_usd":1,"positions":-1}', /^line 3: positions: must be 0 or more/],
    ['count beyond int4', '{"type":"breadth","at":"2026-01-01T00:00:00Z","markets_quoted_24h":3000000000}', /^line 3: markets_quoted_24h: /],
    ['negative cash', '{"type":"capital","at":"2026-01-01T00:00:00Z","cash_usd":-5,"inventory_usd":1,"positions":1}', /^line 3: cash_usd: must be 0 or more/],
    ['year 0000', '{"type":"payout","date":"0000-01-01","usd":1}', /^line 3: date: 0000-01-01 lies before 2020-01-01 \(IMPORT_EARLIEST_YEAR\)$/],
    ['a date in 1900', '{"type":"trading_cost","date":"1900-06-01","usd":1}', /^line 3: date: 1900-06-01 lies before 2020-01-01/],
    ['a timestamp before the earliest year', '{"type":"heartbeat","at":"2019-12-31T23:59:59Z"}', /^line 3: at: 2019-12-31T23:59:59.000Z lies before 2020-01-01/],
    ['a payout of 1e20', '{"type":"payout","date":"2026-01-01","usd":1e20}', /^line 3: usd: must lie within ±1e\+11 USD$/],
    ['a trading gain beyond the ceiling', '{"type":"trading_cost","date":"2026-01-01","usd":-2e11}', /^line 3: usd: must lie within ±1e\+11 USD$/],
    ['more digits than a double keeps', '{"type":"payout","date":"2026-01-01","usd":1.23456789012345678}', /^line 3: usd: 1.23456789012345678 has more significant digits than can be kept exactly/],
    ['a 17-digit amount that rounds', '{"type":"capital","at":"2026-01-01T00:00:00Z","cash_usd":1,"inventory_usd":0.12345678901234567,"positions":1}', /^line 3: inventory_usd: 0.12345678901234567 has more significant digits/],
    ['a cent fraction lost to rounding', '{"type":"trading_cost","date":"2026-01-01","usd":1000000.00000000001}', /^line 3: usd: 1000000.00000000001 has more significant digits/],
    ['unknown field (e.g. a per-market id)', '{"type":"payout","date":"2026-01-01","usd":1,"condition_id":"abc"}', /^line 3: condition_id: unknown field/],
  ];

  it.each(cases)('%s: names the line and the reason, and writes nothing', async (_name, bad, message) => {
    await expect(importText(lines(...valid) + bad + '\n' + lines(...valid))).rejects.toThrow(message);
    expect(await rowCounts(stack.db.adminUrl, DATA_TABLES)).toEqual(Object.fromEntries(DATA_TABLES.map((t) => [t, 0])));
    expect((await query(stack.db.adminUrl, 'select data_source from stats.settings'))[0]).toEqual({ data_source: null });
  });

  it('keeps amounts written with as many digits as a double holds exactly, and honours IMPORT_EARLIEST_YEAR', async () => {
    await importText(lines({ type: 'payout', date: '2026-01-01', usd: 1234.5678901234 }, { type: 'payout', date: '2026-01-02', usd: 1e-7 }));
    expect(await query(stack.db.adminUrl, `select usd::text from stats.payout order by date`)).toEqual([{ usd: '1234.5678901234' }, { usd: '0.0000001' }]);
    await expect(importEvents(db, Readable.from([lines({ type: 'payout', date: '2021-05-01', usd: 1 })]), log, 2022)).rejects.toThrow(/date: 2021-05-01 lies before 2022-01-01/);
  });

  it('exits 1 from the CLI with the line number, and keeps the earlier data untouched', async () => {
    await importText(lines({ type: 'payout', date: addDays(today, -1), usd: 8 }));
    const file = path.join(dir, 'bad.ndjson');
    writeFileSync(file, lines({ type: 'payout', date: addDays(today, -1), usd: 9 }, { type: 'payout', date: addDays(today, -2), usd: 1 }) + '{"type":"payout","date":"2026-01-01","usd":-2}\n');
    const run = await runCli(['import', file], cliEnv(stack));
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/import failed, nothing was written: line 3: usd: must be 0 or more/);
    expect(await query(stack.db.adminUrl, 'select date, usd::text from stats.payout')).toEqual([{ date: addDays(today, -1), usd: '8' }]);
    expect(await count('payout_correction')).toBe(0);
  });

  it('writes nothing and keeps the demo data when the input holds no events', async () => {
    await seedDemoIfEmpty(stack.db.adminUrl);
    const result = await importText('\n\n');
    expect(result.events).toBe(0);
    expect((await landingStats(stack)).data_source).toBe('demo');
  });
});
