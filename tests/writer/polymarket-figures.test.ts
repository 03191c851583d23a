// The writer's cycles against a local fake of Polymarket (fake-polymarket.ts) and a real database: every
// figure published, each computed here apart from the writer, through failing calls; and no identifier
// in any output. Later cases build on what the earlier ones published.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, midnightMs } from '../../contract/dates.ts';
import type { Env } from '../../config/settings.ts';
import { runCycle } from '../../writer/cycle.ts';
import { openWriterDb } from '../../writer/db.ts';
import { query } from '../support/db.ts';
import { activity, conditionId, openOrder } from '../support/fake-polymarket-account.ts';
import type { FakePolymarket } from '../support/fake-polymarket.ts';
import { at, dayUsd, expectedCostOfYesterday, insertBoundarySnapshots as insertSnapshots, polymarketSource, publishedAndLogged, round2, round6, runWriter, startPolymarketWorld, stopPolymarketWorld, T } from '../support/polymarket-writer.ts';
import type { TestStack } from '../support/stack.ts';
import { landingStats, landingStatsViaApi, type CliRun } from '../support/writer.ts';

let stack: TestStack;
let fake: FakePolymarket;
let env: Env;
const runs: CliRun[] = [];
const writer = (args: string[], extra: Record<string, string> = {}) => runWriter(runs, env, args, extra);
const source = (extra: Record<string, string> = {}) => polymarketSource(env, extra);
const insertBoundarySnapshots = () => insertSnapshots(stack);

beforeAll(async () => ({ stack, fake, env } = await startPolymarketWorld()));
afterAll(() => stopPolymarketWorld({ stack, fake }));

describe('the writer against the documented Polymarket', () => {
  it('publishes the figures an independent computation gives, through 429, 425, 401, 5xx and a timeout', async () => {
    await insertBoundarySnapshots();
    const a = fake.account;
    fake.fail('/rewards/user/total', { status: 429, body: '<html><body><h1>429 Too Many Requests</h1>cloudflare</body></html>', headers: { 'retry-after': '1' } });
    fake.fail('/balance-allowance', { status: 502, body: '<html>bad gateway</html>' });
    fake.fail('/data/trades', { status: 425, body: '{"error":"service not ready"}' });
    fake.fail('/data/orders', { status: 401, body: '{"error":"Unauthorized/Invalid api key"}' });
    fake.fail('/v2/value', { status: 0, delayMs: 1500 });
    fake.fail('/v2/positions', { status: 500, body: `{"error":"internal error for user ${a.funder}"}` });

    const run = await writer(['once']);
    expect(run.code, run.stdout + run.stderr).toBe(0);

    const nightYesterday = dayUsd(a, addDays(T, -2));
    const nightToday = dayUsd(a, addDays(T, -1));
    const todayRows = a.earnings.filter((e) => e.day === T && e.earnings > 0);
    // As /v2/value answers it: "rounded to 4 decimals" (https://docs.polymarket.com/api-reference/wallet/get-portfolio-value).
    const inventory = Math.round(a.positions.reduce((s, p) => s + p.current_value, 0) * 1e4) / 1e4;
    const cash = Number(a.chainBalance) / 1e6;
    const stats = await landingStatsViaApi(stack);
    expect(stats).toMatchObject({
      data_source: 'polymarket',
      daily: [{ date: addDays(T, -1), usd: round2(nightYesterday) }, { date: T, usd: round2(nightToday) }],
      last_night_usd: round2(nightToday),
      last_night_date: T,
      total_usd: round2(nightYesterday + nightToday),
      accrued_today_usd: round2(dayUsd(a, T)),
      accrued_today_markets: new Set(todayRows.map((e) => e.condition_id)).size, // 102 native over two pages + 2 sponsored-only
      markets_quoted_24h: 4, // open orders in c1 c6 c7, a maker fill in c8; not the taker fill, not the fill of 25 h ago
      capital: {
        cash_usd: round2(cash), inventory_usd: round2(inventory),
        positions: a.positions.filter((p) => p.current_size >= 1).length, at_stake_usd: round2(cash + inventory),
      },
    });
    expect(stats.accrued_today_markets).toBe(104);
    expect(await query(stack.db.adminUrl, 'select inventory_usd::float8 as inventory from stats.capital order by observed_at desc limit 1'))
      .toEqual([{ inventory: round6(inventory) }]);
    expect(stats.returns.trading_costs_usd).toBe(round2(expectedCostOfYesterday(a)));
    expect(await query(stack.db.adminUrl, 'select date, usd::float8 as usd from stats.trading_cost')).toEqual([{ date: T, usd: expectedCostOfYesterday(a) }]);

    // Retry-After was honoured: the retry of the 429 came at least a second later.
    const totals = fake.hits('/rewards/user/total');
    expect(totals[0]!.status).toBe(429);
    expect(totals[1]!.at - totals[0]!.at).toBeGreaterThanOrEqual(990);
    // The cached balance was refreshed before it was read.
    const balanceCalls = fake.requests.filter((r) => r.path.startsWith('/balance-allowance')).map((r) => `${r.path} ${r.status}`);
    expect(balanceCalls).toEqual(['/balance-allowance/update 200', '/balance-allowance 502', '/balance-allowance 200']);
    expect(fake.hits('/data/trades').map((r) => r.status)).toEqual([425, 200]);
    expect(fake.hits('/data/orders').map((r) => r.status)).toEqual([401, 200]);
    // 520 positions of a share or more, asked at the route's default page size (the fake's is 100): the first page after one retry, then five more.
    expect(fake.hits('/v2/positions').map((r) => r.status)).toEqual([500, 200, 200, 200, 200, 200, 200]);
    expect(fake.requests.filter((r) => r.status === 401)).toHaveLength(1);
    // Today's earnings were read to the end of both pages, once native and once sponsored-only.
    const today = fake.hits('/rewards/user').filter((r) => r.query.date === T).map((r) => `${r.query.sponsored ?? 'native'} ${r.query.next_cursor}`);
    expect(today).toEqual(['native MA==', 'native MTAw', 'true MA==']);
    for (const r of [...totals, ...fake.hits('/rewards/user')]) expect(r.query).toMatchObject({ signature_type: '1', maker_address: a.funder });
    // Deposits and withdrawals were asked for: without the flag the Data API never returns them.
    expect(fake.hits('/v2/activity').length).toBeGreaterThan(0);
    for (const r of fake.hits('/v2/activity')) expect(r).toMatchObject({ status: 200, query: { exclude_deposits_withdrawals: 'false', user: a.funder } });
  }, 60_000);

  it('holds back a capital reading that jumps with no transfer or trade, until readings agree', async () => {
    const { source: s, log, lines } = source();
    const db = openWriterDb(stack.db.urlFor('stats_writer'));
    const capitalRows = async () => (await query<{ n: number }>(stack.db.adminUrl, 'select count(*)::int as n from stats.capital'))[0]!.n;
    const rows = await capitalRows();
    const saved = fake.account.chainBalance;
    try {
      await new Promise((r) => setTimeout(r, 1100)); // past the second of the last snapshot, so no row is new by accident
      fake.account.chainBalance = 0n; // a stale "0" balance
      await runCycle({ db, source: s, log }, new Date());
      expect(await capitalRows()).toBe(rows);
      expect(lines.find((l) => l.msg === 'capital snapshot held back: it moved with no transfer or trade to explain it'))
        .toMatchObject({ cash_usd: 0, previous_cash_usd: Number(saved) / 1e6 });
      await runCycle({ db, source: s, log }, new Date());
      expect(await capitalRows()).toBe(rows);
      await runCycle({ db, source: s, log }, new Date());
      expect(await capitalRows()).toBe(rows + 1); // three readings in a row agree: it is real
    } finally {
      fake.account.chainBalance = saved;
      await db.destroy();
    }
  }, 60_000);

  it('counts the held-back readings in the database: three separate `once` runs (a cron-run writer) publish a real jump', async () => {
    // The last snapshot holds the stale 0 the previous case confirmed; the balance is back, a jump
    // with no transfer or trade since. Each `once` is a new process that remembers nothing itself.
    const capital = () => query<{ n: number; cash: number }>(stack.db.adminUrl,
      `select count(*)::int as n, (select cash_usd::float8 from stats.capital order by observed_at desc limit 1) as cash from stats.capital`).then((r) => r[0]!);
    const held = () => query<{ readings: number; cash: number }>(stack.db.adminUrl, 'select readings, cash_usd::float8 as cash from stats.capital_held');
    const before = await capital();
    expect(before.cash).toBe(0);
    const cash = Number(fake.account.chainBalance) / 1e6;
    for (const readings of [1, 2]) {
      const run = await writer(['once']);
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(run.lines.find((l) => l.msg === 'capital snapshot held back: it moved with no transfer or trade to explain it'))
        .toMatchObject({ cash_usd: cash, previous_cash_usd: 0, readings });
      expect(await capital()).toEqual(before);
      expect(await held()).toEqual([{ readings, cash }]);
    }
    const third = await writer(['once']);
    expect(third.code, third.stdout + third.stderr).toBe(0);
    expect(third.lines.find((l) => l.msg === 'capital jump confirmed by consecutive readings: published')).toMatchObject({ readings: 3 });
    expect(await capital()).toEqual({ n: before.n + 1, cash });
    expect(await held()).toEqual([]);
  }, 60_000);

  it('counts markets quoted in 24 h across separate runs, storing only keyed digests', async () => {
    const a = fake.account;
    const saved = a.orders;
    a.orders = [openOrder(conditionId(11), a)];
    try {
      const run = await writer(['once']);
      expect(run.code, run.stdout).toBe(0);
      // c1 c6 c7 c8 from the earlier run (remembered in the database), c11 now.
      expect((await landingStats(stack)).markets_quoted_24h).toBe(5);
      const digests = await query<{ d: string }>(stack.db.adminUrl, `select encode(digest, 'hex') as d from stats.quoted_market`);
      expect(digests).toHaveLength(5);
      const ids = [1, 6, 7, 8, 11].map((n) => conditionId(n).slice(2));
      for (const { d } of digests) for (const id of ids) expect(id).not.toContain(d);
    } finally {
      a.orders = saved;
    }
  }, 30_000);

  it('recomputes the last settled days as late activity is indexed, keeping the old value audited', async () => {
    const a = fake.account;
    const before = expectedCostOfYesterday(a);
    a.activity.push(activity({ type: 'DEPOSIT', usdc_size: 30, timestamp: at(addDays(T, -1), '18:00:00') }, a));
    const run = await writer(['once']);
    expect(run.code, run.stdout).toBe(0);
    const after = expectedCostOfYesterday(a);
    expect(after).toBeCloseTo(before + 30, 6); // 30 more of the equity's rise was money paid in, not trading
    expect(await query(stack.db.adminUrl, 'select date, old_usd::float8 as old, new_usd::float8 as new from stats.trading_cost_correction'))
      .toEqual([{ date: T, old: before, new: after }]);
  }, 30_000);

  it('leaves a day with an activity type it does not know unpublished, naming only the type', async () => {
    const a = fake.account;
    const row = activity({ type: 'PORTAL_CREDIT', usdc_size: 5, timestamp: at(addDays(T, -1), '19:00:00') }, a);
    a.activity.push(row);
    const corrections = await query(stack.db.adminUrl, 'select count(*)::int as n from stats.trading_cost_correction');
    try {
      const run = await writer(['once']);
      expect(run.lines.find((l) => l.msg === 'trading cost provisional: activity of unknown types')).toMatchObject({ types: ['PORTAL_CREDIT'] });
      expect(await query(stack.db.adminUrl, 'select count(*)::int as n from stats.trading_cost_correction')).toEqual(corrections);
    } finally {
      a.activity.splice(a.activity.indexOf(row), 1);
    }
  }, 30_000);

  it('counts tips as transfers (asked for by name: the feed leaves them out otherwise) and a migration as trading', async () => {
    const a = fake.account;
    const y = addDays(T, -1);
    const costs = () => query<{ n: number }>(stack.db.adminUrl, 'select count(*)::int as n from stats.trading_cost_correction').then((r) => r[0]!.n);
    const corrections = await costs();
    a.activity.push(
      activity({ type: 'TIP', usdc_size: 25, size: 25, side: 'IN', timestamp: at(y, '19:30:00') }, a),
      activity({ type: 'TIP', usdc_size: 5, size: 5, side: 'OUT', timestamp: at(y, '19:40:00') }, a),
      activity({ type: 'MIGRATION', usdc_size: 40, timestamp: at(y, '19:50:00'), condition_id: conditionId(1) }, a),
    );
    const from = fake.requests.length;
    const run = await writer(['once']);
    expect(run.code, run.stdout).toBe(0);
    const expected = expectedCostOfYesterday(a);
    expect(await query(stack.db.adminUrl, 'select usd::float8 as usd from stats.trading_cost where date = $1', [T])).toEqual([{ usd: expected }]);
    expect(await costs()).toBe(corrections + 1); // 20 more of the equity's rise was tipped in, not traded
    // The feed's `end` is inclusive: the window up to snapshot 1 ends a second before it.
    const asked = fake.requests.slice(from).filter((r) => r.path === '/v2/activity' && r.query.end === String((midnightMs(T) - 120_000) / 1000 - 1));
    expect(asked.map((r) => r.query.type ?? 'default')).toEqual(['default', 'TIP']);
  }, 30_000);

  it('leaves a day with a tip of unknown direction unpublished, naming TIP', async () => {
    const a = fake.account;
    const row = activity({ type: 'TIP', usdc_size: 3, size: 3, side: '', timestamp: at(addDays(T, -1), '19:55:00') }, a);
    a.activity.push(row);
    try {
      const run = await writer(['once']);
      expect(run.lines.find((l) => l.msg === 'trading cost provisional: activity of unknown types')).toMatchObject({ types: ['TIP'] });
    } finally {
      a.activity.splice(a.activity.indexOf(row), 1);
    }
  }, 30_000);

  it('rides out a matching-engine restart (425 for seconds) instead of failing the night', async () => {
    fake.restartFor(2500);
    const from = fake.requests.length;
    const run = await writer(['once']);
    expect(run.code, run.stdout).toBe(0);
    const orders = fake.requests.slice(from).filter((r) => r.path === '/data/orders').map((r) => r.status);
    expect(orders).toContain(425);
    expect(orders.at(-1)).toBe(200);
  }, 60_000);

  it('follows the activity feed\'s cursor through pages of 1000, rows sharing a second included, and the cost is unchanged', async () => {
    const a = fake.account;
    const expected = expectedCostOfYesterday(a);
    const base = at(addDays(T, -1), '20:00:00');
    const trades = Array.from({ length: 6200 }, (_, i) => activity({ type: 'TRADE', usdc_size: 1, side: 'BUY', timestamp: base + Math.floor(i / 3), condition_id: conditionId(1) }, a));
    a.activity.push(...trades);
    const from = fake.requests.length;
    try {
      const run = await writer(['once']);
      expect(run.code, run.stdout).toBe(0);
      const asked = fake.requests.slice(from).filter((r) => r.path === '/v2/activity');
      expect(asked.every((r) => r.status === 200)).toBe(true);
      // The day's default walk: more than 6200 rows, so at least seven pages, each after the first
      // following the cursor the one before it minted.
      const end = String((midnightMs(T) - 120_000) / 1000 - 1);
      const walk = asked.filter((r) => r.query.end === end && r.query.type === undefined);
      expect(walk.length).toBeGreaterThanOrEqual(7);
      expect(walk[0]!.query.cursor).toBeUndefined();
      expect(walk.slice(1).every((r) => typeof r.query.cursor === 'string')).toBe(true);
      expect(new Set(walk.map((r) => r.query.start))).toEqual(new Set([String((midnightMs(addDays(T, -1)) - 60_000) / 1000)]));
      expect(await query(stack.db.adminUrl, 'select usd::float8 as usd from stats.trading_cost where date = $1', [T])).toEqual([{ usd: expected }]);
    } finally {
      a.activity = a.activity.filter((r) => !trades.includes(r));
    }
  }, 60_000);

  it('keeps going when a source call fails for good: the other figures and the heartbeat are written, the exit code says 1', async () => {
    const count = async () => (await query<{ a: number; h: number }>(stack.db.adminUrl,
      'select (select count(*)::int from stats.accrual) as a, (select count(*)::int from stats.heartbeat) as h'))[0]!;
    const before = await count();
    fake.fail('/v2/value', ...Array.from({ length: 4 }, () => ({ status: 503, body: '<html>upstream down</html>' })));
    const run = await writer(['once']);
    expect(run.code).toBe(1);
    expect(run.lines.find((l) => l.msg === 'capital failed')?.error).toMatch(/GET \/v2\/value answered HTTP 503: HTML error page/);
    expect(run.lines.find((l) => l.msg === 'cycle done')).toMatchObject({ failed: ['capital'] });
    expect(await count()).toEqual({ a: before.a + 1, h: before.h + 1 });
  }, 30_000);

  it('never lets addresses, credentials, condition ids or order ids reach the logs, the database or the API', async () => {
    const { everything, needles } = await publishedAndLogged(stack, fake.account, runs);
    expect(runs.length).toBeGreaterThanOrEqual(12);
    // The fake's 500 body named the funder; the log kept the message and masked the address.
    expect(everything).toMatch(/internal error for user (0x)?\[redacted\]/);
    for (const needle of needles) expect(everything.toLowerCase(), `found ${needle}`).not.toContain(needle);
  });
});
