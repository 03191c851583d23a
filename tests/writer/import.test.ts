// The NDJSON import against a real database: valid files, every kind of bad line,
// duplicates, re-import, corrections, the demo hand-over, a 100,000-event file and a server gone silent.
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { addDays, todayUtc } from '../../contract/dates.ts';
import { DATA_TABLES, DEMO_TABLES, type StatsTableName } from '../../contract/tables.ts';
import { seedDemoIfEmpty } from '../../writer/demo.ts';
import { COMMAND_SILENCE_MS, openWriterDb, type WriterDb } from '../../writer/db.ts';
import { EVENT_TYPES } from '../../writer/events.ts';
import { importEvents } from '../../writer/import.ts';
import { createLogger } from '../../writer/log.ts';
import { query, resetData, rowCounts, totalRows } from '../support/db.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { cliEnv, landingStats, landingStatsViaApi, runCli, startCli, until } from '../support/writer.ts';

let stack: TestStack;
let db: WriterDb;
let dir: string;
const logged: string[] = [];
const log = createLogger({ json: true, write: (l) => logged.push(l) });
const today = todayUtc();
const nowIso = () => new Date(Date.now() - 1000).toISOString();

const lines = (...events: object[]) => events.map((e) => JSON.stringify(e)).join('\n') + '\n';
const importText = (text: string) => importEvents(db, Readable.from([text]), log, 2020);
const count = async (table: StatsTableName) => (await rowCounts(stack.db.adminUrl, [table]))[table];

beforeAll(async () => {
  stack = await startTestStack();
  db = openWriterDb(stack.db.urlFor('stats_writer'));
  dir = mkdtempSync(path.join(tmpdir(), 'writer-import-'));
});
afterAll(async () => {
  await db?.destroy();
  await stack?.destroy();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  await resetData(stack);
  logged.length = 0;
});

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

describe('a file of 100,000 events', () => {
  const N = 100_000;
  const base = Date.parse('2025-06-01T00:00:00Z');

  async function writeBigFile(file: string) {
    const out = createWriteStream(file);
    for (let i = 0; i < N; i++) {
      const at = new Date(base + i * 60_000).toISOString();
      const event = i % 4 === 0 ? { type: 'accrual', at, usd: i / 100, markets: i % 50 }
        : i % 4 === 1 ? { type: 'breadth', at, markets_quoted_24h: i % 70 }
        : i % 4 === 2 ? { type: 'capital', at, cash_usd: 1000 + (i % 97), inventory_usd: i % 13, positions: i % 11 }
        : { type: 'heartbeat', at };
      if (!out.write(JSON.stringify(event) + '\n')) await new Promise<void>((r) => out.once('drain', () => r()));
    }
    await new Promise<void>((resolve) => out.end(resolve));
  }

  it('is one transaction: killed midway it leaves nothing, run again it writes every event once, with progress and flat memory', async () => {
    const file = path.join(dir, 'big.ndjson');
    await writeBigFile(file);
    const env = cliEnv(stack);

    // Killed after its first progress line: the open transaction dies with it.
    const first = startCli(['import', file], env);
    first.child.stdin!.end();
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => { if (first.stdout().includes('"import progress"')) { clearInterval(timer); resolve(); } }, 20);
    });
    first.child.kill('SIGKILL');
    await first.result;
    const total = () => totalRows(stack.db.adminUrl, ['accrual', 'breadth', 'capital', 'heartbeat']);
    expect(Number(await total())).toBe(0);

    const run = await runCli(['import', file], env);
    expect(run.code, run.stderr).toBe(0);
    expect(Number(await total())).toBe(N);
    const progress = run.lines.filter((l) => l.msg === 'import progress');
    expect(progress.map((p) => p.lines)).toEqual([10_000, 20_000, 30_000, 40_000, 50_000, 60_000, 70_000, 80_000, 90_000, 100_000]);
    // Streaming: once the heap has grown to its working size, memory stops growing with the input.
    // Holding the last 30,000 events would cost well over 10 MB (each parsed event is hundreds of bytes).
    const rss = progress.map((p) => p.rss_mb as number);
    expect(Math.max(...rss.slice(7)) - rss[6]!).toBeLessThan(10);
    expect(Math.max(...rss) - rss[0]!).toBeLessThan(80);
    expect(run.lines.find((l) => l.msg === 'import committed')).toMatchObject({ events: N });
  }, 120_000);
});

describe('a database server that goes silent', () => {
  /**
   * A TCP relay to the stack's Postgres that can stop passing bytes either way while it keeps every
   * connection open, as a network that drops packets without a word does (the relay's own TCP still
   * acknowledges what the client sends, so only the client's own deadline can end its wait).
   */
  async function silenceableRelay(upstreamPort: number) {
    let silent = false;
    const sockets: Socket[] = [];
    const server = createServer((client) => {
      const upstream = connect(upstreamPort, '127.0.0.1');
      sockets.push(client, upstream);
      client.on('data', (chunk) => { if (!silent) upstream.write(chunk); });
      upstream.on('data', (chunk) => { if (!silent) client.write(chunk); });
      for (const [a, b] of [[client, upstream], [upstream, client]] as const) {
        a.on('error', () => {});
        a.on('close', () => { if (!silent) b.destroy(); });
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      port: (server.address() as AddressInfo).port,
      connections: () => sockets.length / 2,
      silence: () => { silent = true; },
      close: () => { for (const s of sockets) s.destroy(); server.close(); },
    };
  }

  it('ends the import with its outcome unknown once the server has sent nothing for COMMAND_SILENCE_MS, and a second import writes the night once', async () => {
    const url = new URL(stack.db.urlFor('stats_writer'));
    const relay = await silenceableRelay(Number(url.port));
    try {
      url.port = String(relay.port);
      const night = { type: 'payout', date: addDays(today, -3), usd: 12.345678 };
      const run = startCli(['import', '-'], cliEnv(stack, { WRITER_DATABASE_URL: url.toString() }));
      // The import has begun its transaction (it reads its input inside it) before the network goes quiet.
      await until('the import to open its transaction', async () => (await query<{ n: number }>(stack.db.adminUrl,
        "select count(*)::int as n from pg_stat_activity where usename = 'stats_writer' and state like 'idle in transaction%'"))[0]!.n > 0);
      relay.silence();
      const silencedAt = Date.now();
      run.child.stdin!.end(lines(night));
      const result = await run.result;
      const waited = Date.now() - silencedAt;
      expect(result.code).toBe(1);
      expect(result.stdout).toContain(`import stopped: the database server sent nothing for ${COMMAND_SILENCE_MS / 1000} s`);
      expect(result.stdout).toContain('Whether it was written is unknown');
      expect(waited).toBeGreaterThanOrEqual(COMMAND_SILENCE_MS - 1_000);
      expect(waited).toBeLessThan(COMMAND_SILENCE_MS + 20_000);
      // The COMMIT never reached the server here; importing again is the advice, and writes the night.
      expect(await count('payout')).toBe(0);
      const again = await runCli(['import', '-'], cliEnv(stack), lines(night));
      expect(again.code, again.stdout).toBe(0);
      expect(await query(stack.db.adminUrl, 'select date, usd::text from stats.payout')).toEqual([{ date: night.date, usd: '12.345678' }]);
    } finally {
      relay.close();
    }
  }, COMMAND_SILENCE_MS + 90_000);
});
