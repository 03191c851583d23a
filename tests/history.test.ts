// The whole track record end to end: 1,000 nights with costs and capital, imported through the
// writer CLI, come back night for night and identical through landing_history (API host),
// /api/history, /api/history.csv and MCP get_history, and match running totals and capital bases
// computed here, independently of the SQL. Then the range filter, the Atom feed and the badge.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, todayUtc } from '../contract/dates.ts';
import { API_PATHS, SITE_PATHS } from '../contract/paths.ts';
import { query, withClient } from './support/db.ts';
import { startTestStack, type TestStack } from './support/stack.ts';
import { cliEnv, runCli } from './support/writer.ts';

const NIGHTS = 1000;
let stack: TestStack;

interface Night { date: string; usd: number; total_usd: number; trading_cost_usd: number | null; at_stake_usd: number | null }
let expected: Night[];

/** Cents from a deterministic generator, so a failure can be replayed. */
function generator(seed: number) {
  let state = seed;
  return () => { state = (state * 1103515245 + 12345) % 2 ** 31; return state / 2 ** 31; };
}
const cents = (value: number) => Math.round(value * 100) / 100;

beforeAll(async () => {
  stack = await startTestStack();
  const random = generator(42);
  const today = todayUtc();
  const events: object[] = [];
  expected = [];
  let totalCents = 0;
  for (let i = NIGHTS; i >= 1; i--) {
    const date = addDays(today, -i);
    const usd = cents(10 + random() * 90);
    events.push({ type: 'payout', date, usd });
    totalCents += Math.round(usd * 100);
    // Two nights in three have a cost, some of them a gain (a negative cost).
    const cost = random() < 2 / 3 ? cents((random() - 0.2) * 30) : null;
    if (cost !== null) events.push({ type: 'trading_cost', date, usd: cost });
    // Half the days have capital snapshots, one to three; the day's base is its last one.
    let base: number | null = null;
    if (random() < 0.5) {
      const snapshots = 1 + Math.floor(random() * 3);
      for (let s = 0; s < snapshots; s++) {
        const cash = cents(5000 + random() * 3000);
        const inventory = cents(random() * 2000);
        events.push({ type: 'capital', at: `${date}T${String(6 + s * 6).padStart(2, '0')}:15:00Z`, cash_usd: cash, inventory_usd: inventory, positions: 3 });
        base = cents(cash + inventory);
      }
    }
    expected.push({ date, usd, total_usd: totalCents / 100, trading_cost_usd: cost, at_stake_usd: base });
  }
  const run = await runCli(['import', '-'], cliEnv(stack), events.map((e) => JSON.stringify(e)).join('\n') + '\n');
  expect(run.code, run.stderr).toBe(0);
}, 180_000);

afterAll(async () => { await stack?.destroy(); });

/** The figures alone: when each night was recorded, and where it stands in the log, are checked apart. */
type Served = Night & { updated_at?: string; log_index?: number | null; witnessed_at?: string | null; witnessed_on_time?: boolean | null };
const strip = (nights: Served[]) => nights.map(({ updated_at: _u, log_index: _l, witnessed_at: _w, witnessed_on_time: _o, ...night }) => night);

describe('the whole track record', () => {
  let viaApi: { nights: (Night & { updated_at: string })[]; since_date: string; updated_at: string; data_source: string; log_checkpoint: { size: number } | null };

  it('landing_history on the API host returns every night, oldest first, matching the independent computation', async () => {
    const res = await fetch(stack.cfg.apiUrl + API_PATHS.HISTORY, { headers: { apikey: stack.cfg.ANON_KEY, 'accept-encoding': 'identity' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('etag')).toMatch(/^"[0-9a-f]{32}"$/);
    expect(res.headers.get('cache-control')).toBe('public, max-age=60, stale-while-revalidate=30');
    viaApi = await res.json();
    expect(viaApi.nights).toHaveLength(NIGHTS);
    expect(viaApi.since_date).toBe(expected[0]!.date);
    expect(viaApi.data_source).toBe('import');
    expect(strip(viaApi.nights)).toEqual(expected);
    for (const night of viaApi.nights) expect(night.updated_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    // Imported at once, every night up to three days ago is final and in the log, in date order.
    expect(viaApi.nights.map((n) => (n as { log_index?: number | null }).log_index)).toEqual(viaApi.nights.map((n, i) => (n.date <= addDays(todayUtc(), -3) ? i : null)));
    // Without a witness policy no night is said to be witnessed, on time or late.
    expect(new Set(viaApi.nights.map((n) => `${(n as Served).witnessed_at}|${(n as Served).witnessed_on_time}`))).toEqual(new Set(['null|null']));
    expect(viaApi.log_checkpoint).toMatchObject({ size: viaApi.nights.filter((n) => n.date <= addDays(todayUtc(), -3)).length });
    // POST {} is the same call.
    const posted = await fetch(stack.cfg.apiUrl + API_PATHS.HISTORY, { method: 'POST', body: '{}', headers: { apikey: stack.cfg.ANON_KEY, 'content-type': 'application/json' } });
    expect(await posted.json()).toEqual(viaApi);
  }, 60_000);

  it('/api/history and MCP get_history give the same record; /api/history.csv the same rows', async () => {
    const site = await fetch(stack.cfg.siteUrl + SITE_PATHS.SITE_HISTORY);
    expect(site.headers.get('cache-control')).toBe('public, max-age=60, stale-while-revalidate=30');
    expect(await site.json()).toEqual(viaApi);

    const csv = await fetch(stack.cfg.siteUrl + SITE_PATHS.SITE_HISTORY_CSV);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present');
    const text = await csv.text();
    expect(text.endsWith('\r\n')).toBe(true);
    const [header, ...rows] = text.slice(0, -2).split('\r\n');
    expect(header).toBe('date,usd,total_usd,trading_cost_usd,at_stake_usd,updated_at,log_index,witnessed_at,witnessed_on_time');
    const number = (field: string) => (field === '' ? null : Number(field));
    expect(rows.map((row) => {
      const [date, usd, total, cost, base] = row.split(',');
      return { date, usd: number(usd!), total_usd: number(total!), trading_cost_usd: number(cost!), at_stake_usd: number(base!) };
    })).toEqual(expected);
    // Where each night stands in the log: an empty field until it is final.
    expect(rows.map((row) => number(row.split(',')[6]!))).toEqual(viaApi.nights.map((n) => (n as { log_index?: number | null }).log_index));

    const client = new Client({ name: 'history-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(stack.cfg.siteUrl + SITE_PATHS.MCP)));
    try {
      const result = await client.callTool({ name: 'get_history', arguments: {} });
      expect(result.isError ?? false).toBe(false);
      expect(result.structuredContent).toEqual(viaApi);
      const ranged = await client.callTool({ name: 'get_history', arguments: { from: expected[10]!.date, to: expected[19]!.date } });
      expect(strip((ranged.structuredContent as { nights: Night[] }).nights)).toEqual(expected.slice(10, 20));
      const bad = await client.callTool({ name: 'get_history', arguments: { from: '2026-02-30' } });
      expect(bad.isError).toBe(true);
    } finally {
      await client.close();
    }
  }, 60_000);

  it('from/to narrow the nights (inclusive); a bad date is a JSON 400', async () => {
    const from = expected[100]!.date;
    const to = expected[199]!.date;
    const ranged = await (await fetch(`${stack.cfg.siteUrl}${SITE_PATHS.SITE_HISTORY}?from=${from}&to=${to}`)).json();
    expect(strip(ranged.nights)).toEqual(expected.slice(100, 200));
    const csv = await (await fetch(`${stack.cfg.siteUrl}${SITE_PATHS.SITE_HISTORY_CSV}?from=${from}&to=${to}`)).text();
    expect(csv.trim().split('\r\n')).toHaveLength(101);
    for (const query of ['from=2026-13-01', 'to=yesterday', `from=${to}&to=${from}`]) {
      const res = await fetch(`${stack.cfg.siteUrl}${SITE_PATHS.SITE_HISTORY}?${query}`);
      expect(res.status, query).toBe(400);
      expect((await res.json()).message, query).toMatch(/from|to/);
    }
  });

  it('answers conditional GETs with 304 (site JSON and CSV)', async () => {
    for (const p of [SITE_PATHS.SITE_HISTORY, SITE_PATHS.SITE_HISTORY_CSV]) {
      const first = await fetch(stack.cfg.siteUrl + p);
      const etag = first.headers.get('etag')!;
      expect(etag, p).toBeTruthy();
      const again = await fetch(stack.cfg.siteUrl + p, { headers: { 'if-none-match': etag } });
      expect(again.status, p).toBe(304);
    }
  });
});

describe('the nights built when the data change', () => {
  const historyNow = async () => (await query<{ h: { nights: Night[] } }>(stack.db.adminUrl, 'select stats.history_at(now()) as h'))[0]!.h;

  it('equal the nights computed from the tables now, and a correction rebuilds them at commit', async () => {
    const [row] = await query<{ same: boolean }>(stack.db.adminUrl,
      `select (select (record -> 'nights')::jsonb from stats.history_snapshot) = stats.history_nights(now(), stats.since_date(current_date))::jsonb as same`);
    expect(row!.same).toBe(true);
    // Correct one old night through the writer: every running total from it on moves by the difference.
    const night = expected[500]!;
    const run = await runCli(['import', '-'], cliEnv(stack), `${JSON.stringify({ type: 'payout', date: night.date, usd: cents(night.usd + 1.25) })}\n`);
    expect(run.code, run.stderr).toBe(0);
    const corrected = strip((await historyNow()).nights);
    expect(corrected.slice(0, 500)).toEqual(expected.slice(0, 500));
    expect(corrected[500]).toEqual({ ...night, usd: cents(night.usd + 1.25), total_usd: cents(night.total_usd + 1.25) });
    expect(corrected.at(-1)!.total_usd).toBe(cents(expected.at(-1)!.total_usd + 1.25));
    // A session that wrote nothing reads the snapshot: what it holds is what is served.
    await withClient(stack.db.adminUrl, async (c) => {
      await c.query('begin');
      try {
        await c.query(`update stats.history_snapshot set record = json_build_object('nights', '[]'::json)`);
        await c.query('commit');
      } catch (error) {
        await c.query('rollback');
        throw error;
      }
    });
    expect((await historyNow()).nights).toEqual([]);
    // Without a snapshot (a TRUNCATE of a source table removes it) the nights are computed live.
    await query(stack.db.adminUrl, 'delete from stats.history_snapshot');
    expect(strip((await historyNow()).nights)).toEqual(corrected);
  });

  it('give the stats record, read from one row made at commit, exactly the answer the tables give for any clock', async () => {
    await withClient(stack.db.adminUrl, async (c) => {
      await c.query('begin');
      try {
        const instant = async (offset: string) => (await c.query(`select (clock_timestamp() + interval '${offset}')::text as t`)).rows[0].t as string;
        const read = async (at: string) => (await c.query('select stats.stats_at($1::timestamptz)::text as s', [at])).rows[0].s as string;
        // Without the snapshot (as after a TRUNCATE) every figure is worked out from the tables.
        const live = async (at: string) => {
          await c.query('savepoint live; delete from stats.stats_snapshot');
          try { return await read(at); } finally { await c.query('rollback to savepoint live'); }
        };
        // Now, and a day later (today's accrual is 0 then, and the breadth has expired): the same bytes.
        for (const offset of ['0 s', '25 hours']) {
          const at = await instant(offset);
          expect(await read(at), offset).toBe(await live(at));
        }
        expect(JSON.parse(await read(await instant('25 hours')))).toMatchObject({ accrued_today_usd: 0, markets_quoted_24h: 0 });
        // The snapshot is what is read: a changed total there shows in the record.
        const total = async (at: string) => Number(JSON.parse(await read(at)).total_usd);
        const before = await total(await instant('0 s'));
        await c.query('update stats.stats_snapshot set total_usd = total_usd + 1000');
        expect(await total(await instant('0 s'))).toBeCloseTo(before + 1000, 2);
        // A clock before the snapshot was made works the figures out itself.
        const earlier = await instant('-1 hour');
        expect(await read(earlier)).toBe(await live(earlier));
        // A breadth observed ahead of the clock counts from its time on, not before: the snapshot made
        // at commit (here: at once) answers until then, the tables after.
        await c.query(`insert into stats.breadth (observed_at, markets_quoted_24h) values (clock_timestamp() + interval '1 hour', 777)`);
        await c.query('set constraints all immediate');
        const soon = await instant('0 s');
        expect(JSON.parse(await read(soon)).markets_quoted_24h).not.toBe(777);
        const later = await instant('2 hours');
        expect(JSON.parse(await read(later)).markets_quoted_24h).toBe(777);
        for (const at of [soon, later]) expect(await read(at)).toBe(await live(at));
        // A correction this transaction makes counts in its own reading before its commit, the totals
        // (kept in the history snapshot) included.
        await c.query(`update stats.payout set usd = usd + 5 where date = (select max(date) from stats.payout where date <= current_date)`);
        const summed = await c.query(`select sum(usd)::float8 as s from stats.payout where date >= stats.since_date(current_date) and date <= current_date`);
        expect(await total(await instant('0 s'))).toBeCloseTo(summed.rows[0].s, 2);
      } finally {
        await c.query('rollback');
      }
    });
  });
});

describe('the Atom feed', () => {
  it('is well-formed Atom (RFC 4287): the last 60 nights, newest first, stable tag ids, conditional GET', async () => {
    const res = await fetch(stack.cfg.siteUrl + SITE_PATHS.FEED);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/atom+xml; charset=utf-8');
    const xml = await res.text();
    expect(XMLValidator.validate(xml)).toBe(true);
    const { feed } = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(xml);
    expect(feed.xmlns).toBe('http://www.w3.org/2005/Atom');
    // RFC 4287 §4.1.1: exactly one id, title and updated; an author (feed-level, so every entry has one).
    for (const element of ['id', 'title', 'updated']) expect(typeof feed[element], element).not.toBe('object');
    expect(feed.author.name).toBe('Public Stats Service');
    const entries = feed.entry as { id: string; title: string; updated: string; content: { '#text': string; type: string } }[];
    expect(entries).toHaveLength(60);
    const newest = expected.slice(-60).reverse();
    entries.forEach((entry, i) => {
      const host = new URL(stack.cfg.siteUrl).hostname;
      expect(entry.id).toBe(`tag:${host},${newest[i]!.date}:night`);
      expect(entry.updated).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
      expect(entry.content.type).toBe('text');
      expect(entry.content['#text']).toContain('gross reward income');
      expect(entry.content['#text']).toContain('not profit');
    });
    const again = await fetch(stack.cfg.siteUrl + SITE_PATHS.FEED, { headers: { 'if-none-match': res.headers.get('etag')! } });
    expect(again.status).toBe(304);
  });
});

describe('the badge', () => {
  it('states last night\'s payout as an accessible, cacheable SVG', async () => {
    const res = await fetch(stack.cfg.siteUrl + SITE_PATHS.BADGE);
    expect(res.headers.get('content-type')).toBe('image/svg+xml; charset=utf-8');
    const svg = await res.text();
    const last = expected.at(-1)!;
    expect(svg).toContain('role="img"');
    expect(svg).toMatch(/<title>last night: \$[\d,]+\.\d{2}/);
    expect(svg).toContain(`$${last.usd.toFixed(2)}`);
    expect(svg).not.toContain('demo');
    const again = await fetch(stack.cfg.siteUrl + SITE_PATHS.BADGE, { headers: { 'if-none-match': res.headers.get('etag')! } });
    expect(again.status).toBe(304);
  });
});
