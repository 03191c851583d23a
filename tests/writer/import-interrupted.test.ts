// An NDJSON import cut short against a real database: a 100,000-event file killed midway leaves
// nothing, and a server gone silent ends the import with its outcome unknown; run again, each writes once.
import { createWriteStream } from 'node:fs';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { addDays, todayUtc } from '../../contract/dates.ts';
import type { StatsTableName } from '../../contract/tables.ts';
import { COMMAND_SILENCE_MS, type WriterDb } from '../../writer/db.ts';
import { query, resetData, totalRows } from '../support/db.ts';
import { countRows, lines, startImportStack, stopImportStack } from '../support/import-stack.ts';
import type { TestStack } from '../support/stack.ts';
import { cliEnv, runCli, startCli, until } from '../support/writer.ts';

let stack: TestStack;
let db: WriterDb;
let dir: string;
const today = todayUtc();
const count = (table: StatsTableName) => countRows(stack, table);

beforeAll(async () => ({ stack, db, dir } = await startImportStack()));
afterAll(() => stopImportStack({ stack, db, dir }));
beforeEach(() => resetData(stack));

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
