// The Polymarket source end to end: the writer CLI (and its cycle) against a local fake of the CLOB,
// the Data API and a Polygon node built from the public API reference (fake-polymarket.ts), a real
// database, and landing_stats read back through the API host. Every expected figure is computed
// here from the fake's raw facts, independently of the writer.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, midnightMs, todayUtc } from '../../contract/dates.ts';
import { TABLE_NAMES } from '../../contract/tables.ts';
import { polymarketFromEnv } from '../../config/writer.ts';
import { runCycle } from '../../writer/cycle.ts';
import { openWriterDb } from '../../writer/db.ts';
import { createLogger } from '../../writer/log.ts';
import { PolymarketSource } from '../../writer/polymarket/source.ts';
import { FileVault } from '../../contract/audit/transfer-vault.ts';
import { query, resetData } from '../support/db.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { activity, conditionId, earning, fakeAccount, FakePolymarket, openOrder, position, PUSD, trade, writerEnv, type FakeAccount } from '../support/fake-polymarket.ts';
import { cliEnv, landingStats, landingStatsViaApi, runCli, startCli, type CliRun } from '../support/writer.ts';

const T = todayUtc();
const at = (date: string, hhmmss: string) => Date.parse(`${date}T${hhmmss}Z`) / 1000;
const nowS = () => Math.floor(Date.now() / 1000);
const OTHER_ASSET = '0x69308FB512518e39F9b16112fA8d994F4e2Bf8bB';
const round2 = (n: number) => Math.round(n * 100) / 100;
const round6 = (n: number) => Math.round(n * 1e6) / 1e6;

/** Σ earnings × asset_rate of one activity day, native plus sponsored: the figure /rewards/user/total?sponsored=true gives. */
const dayUsd = (a: FakeAccount, day: string) => a.earnings.filter((e) => e.day === day).reduce((s, e) => s + e.earnings * e.asset_rate, 0);

function makeAccount(): FakeAccount {
  // The CLOB's cache still says 0 (an open report): only a refresh makes it right.
  const a = fakeAccount({ chainBalance: 1_234_567_890n, cachedBalance: '0' });
  const e = (day: string, n: number, earnings: number, asset = PUSD, rate = 1, sponsored = false) => earning(day, n, earnings, { asset, rate, sponsored });
  a.earnings = [
    // Activity day T-2, paid as the payout dated T-1: native pUSD plus a sponsored reward in another asset.
    e(addDays(T, -2), 1, 30.5), e(addDays(T, -2), 2, 2, OTHER_ASSET, 3.51, true),
    // Activity day T-1 → payout T.
    e(addDays(T, -1), 1, 41.25),
    // Today, in progress: 105 native rows (two pages), three of them earning nothing, and two markets
    // that earn only a sponsored reward.
    ...Array.from({ length: 105 }, (_, i) => e(T, 100 + i, i < 3 ? 0 : 0.1)),
    e(T, 300, 1, OTHER_ASSET, 3.51, true), e(T, 301, 0.5, PUSD, 1, true),
    // Older nights for the backfill: one paid, one under the $1 minimum.
    e(addDays(T, -4), 1, 5), e(addDays(T, -6), 1, 0.4),
  ];
  a.orders = [openOrder(conditionId(1), a), openOrder(conditionId(6), a), openOrder(conditionId(7), a)];
  const hourAgo = nowS() - 3600;
  a.trades = [
    trade(conditionId(8), 'MAKER', hourAgo, a), // its resting order was filled: quoting
    trade(conditionId(9), 'TAKER', hourAgo, a), // it crossed the book: not quoting
    trade(conditionId(10), 'MAKER', nowS() - 25 * 3600, a), // quoted, but more than 24 h ago
  ];
  a.positions = [
    ...Array.from({ length: 500 }, (_, i) => position(1000 + i, 5, 2, a)),
    ...Array.from({ length: 20 }, (_, i) => position(2000 + i, 2, i === 0 ? 1.000007 : 1, a)), // a sub-cent mark, kept to 6 decimals
    ...Array.from({ length: 10 }, (_, i) => position(3000 + i, 0.4, 0.1, a)),
  ];
  const y = addDays(T, -1);
  a.activity = [
    activity({ type: 'REWARD', usdc_size: 37.52, timestamp: at(y, '00:01:30') }, a),
    // Sub-cent amounts (pUSD has 6 decimals): the cost must keep them, not round them to cents.
    activity({ type: 'MAKER_REBATE', usdc_size: 1.503217, timestamp: at(y, '10:00:00') }, a),
    activity({ type: 'TAKER_REBATE', usdc_size: 0.499997, timestamp: at(y, '10:30:00') }, a),
    activity({ type: 'YIELD', usdc_size: 0.480001, timestamp: at(y, '12:00:00') }, a),
    activity({ type: 'DEPOSIT', usdc_size: 100, timestamp: at(y, '13:00:00') }, a),
    activity({ type: 'WITHDRAWAL', usdc_size: 20, timestamp: at(y, '14:00:00') }, a),
    activity({ type: 'TRADE', usdc_size: 55, side: 'BUY', timestamp: at(y, '15:00:00'), condition_id: conditionId(1) }, a),
    activity({ type: 'MERGE', usdc_size: 10, timestamp: at(y, '16:00:00'), condition_id: conditionId(3) }, a),
    activity({ type: 'REWARD', usdc_size: 41.25, timestamp: at(T, '00:01:00') }, a),
    // A fill since the last midnight snapshot: the capital now differs from it for a reason.
    activity({ type: 'TRADE', usdc_size: 12, side: 'SELL', timestamp: nowS() - 120, condition_id: conditionId(1) }, a),
  ];
  return a;
}

let stack: TestStack;
let fake: FakePolymarket;
const runs: CliRun[] = [];
let env: Record<string, string | undefined>;

async function writer(args: string[], extra: Record<string, string> = {}): Promise<CliRun> {
  const run = await runCli(args, { ...env, ...extra });
  runs.push(run);
  return run;
}

/** Capital snapshots the writer took around the last two midnights (the inputs of the trading-cost formula). */
const SNAPSHOTS = { s0: { cash: 9000, inventory: 1000 }, s1: { cash: 9100, inventory: 950 } };
async function insertBoundarySnapshots() {
  await query(stack.db.adminUrl, `insert into stats.capital (observed_at, cash_usd, inventory_usd, positions) values
    ($1, 4000, 1000, 3), ($2, $3, $4, 9), ($5, $6, $7, 9)`, [
    new Date(midnightMs(addDays(T, -1)) - 2 * 3600_000), // outside the 30-minute tolerance: ignored
    new Date(midnightMs(addDays(T, -1)) - 60_000), SNAPSHOTS.s0.cash, SNAPSHOTS.s0.inventory,
    new Date(midnightMs(T) - 120_000), SNAPSHOTS.s1.cash, SNAPSHOTS.s1.inventory,
  ]);
}

/** The trading cost of activity day T-1, computed here from the snapshots and the fake's activity rows, to 6 decimals. */
function expectedCostOfYesterday(a: FakeAccount): number {
  const from = (midnightMs(addDays(T, -1)) - 60_000) / 1000;
  const to = (midnightMs(T) - 120_000) / 1000;
  const rows = a.activity.filter((r) => r.timestamp >= from && r.timestamp < to);
  const sum = (types: string[]) => rows.filter((r) => types.includes(r.type)).reduce((s, r) => s + Math.abs(r.usdc_size), 0);
  const income = sum(['REWARD', 'MAKER_REBATE', 'TAKER_REBATE', 'YIELD', 'REFERRAL_REWARD']);
  // A tip is a transfer between users: its `size`, in when `side` is IN, out when OUT (the activity
  // feed's reference), like a deposit or a withdrawal.
  const tips = (side: string) => rows.filter((r) => r.type === 'TIP' && r.side === side).reduce((s, r) => s + r.size, 0);
  const equity0 = SNAPSHOTS.s0.cash + SNAPSHOTS.s0.inventory;
  const equity1 = SNAPSHOTS.s1.cash + SNAPSHOTS.s1.inventory;
  return round6(-(equity1 - equity0 - income - sum(['DEPOSIT']) - tips('IN') + sum(['WITHDRAWAL']) + tips('OUT')));
}

function source(extra: Record<string, string> = {}) {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({ json: true, write: (l) => lines.push(JSON.parse(l) as Record<string, unknown>) });
  const vault = new FileVault(mkdtempSync(path.join(tmpdir(), 'reward-transfers-')));
  return { source: new PolymarketSource(polymarketFromEnv({ ...env, ...extra }), vault, log), log, lines };
}

beforeAll(async () => {
  stack = await startTestStack();
  fake = await new FakePolymarket(makeAccount()).start();
  env = cliEnv(stack, {
    ...writerEnv(fake),
    POLYMARKET_TIMEOUT_MS: '400', POLYMARKET_RETRY_BASE_MS: '20', POLYMARKET_RETRIES: '3', POLYMARKET_RESTART_WAIT_SECONDS: '20',
    WRITER_LOG_LEVEL: 'debug',
  });
});
afterAll(async () => {
  await fake?.stop();
  await stack?.destroy();
});

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

  it('reads an answer of null (the Data API\'s documented miss) as no rows, with a warning naming the route, and still refuses an answer that is no list', async () => {
    const { source: s, lines } = source();
    const day = addDays(T, -20);
    fake.fail('/rewards/user/total', { status: 200, body: 'null' });
    expect(await s.client.totalEarnings(T)).toBeNull();
    fake.fail('/rewards/user', { status: 200, body: '{"limit":100,"count":0,"next_cursor":"LTE=","data":null}' }, { status: 200, body: 'null' });
    expect(await s.client.earningMarkets(day)).toEqual(new Set());
    fake.fail('/v2/value', { status: 200, body: '{"data":null}' });
    expect(await s.client.data.inventoryUsd()).toBe(0);
    fake.fail('/v2/positions', { status: 200, body: '{"data":null,"pagination":{"limit":1000,"offset":0,"has_more":false,"next_cursor":null}}' });
    expect(await s.client.data.positionCount(1)).toBe(0);
    fake.fail('/v2/activity', { status: 200, body: '{"data":null,"pagination":{"limit":1000,"offset":0,"has_more":false,"next_cursor":null}}' });
    expect(await s.client.data.activity(at(day, '00:00:00'), at(day, '12:00:00'), ['REWARD'])).toEqual([]);
    expect(lines.filter((l) => l.msg === 'polymarket answered null: read as no rows').map((l) => l.route))
      .toEqual(['/rewards/user/total', '/rewards/user', '/rewards/user', '/v2/value', '/v2/positions', '/v2/activity']);
    // The v2 routes always wrap their payload: a bare null, or an object without `data`, is no answer.
    fake.fail('/v2/value', { status: 200, body: '{"error":"not an answer"}' }, { status: 200, body: 'null' });
    await expect(s.client.data.inventoryUsd()).rejects.toThrow('unexpected response from /v2/value: no data');
    await expect(s.client.data.inventoryUsd()).rejects.toThrow('unexpected response from /v2/value: no data');
    fake.fail('/v2/activity', { status: 200, body: '{"data":{"type":"REWARD"}}' });
    await expect(s.client.data.activity(at(day, '00:00:00'), at(day, '12:00:00'), ['REWARD'])).rejects.toThrow('unexpected response from /v2/activity: data is no list');
  }, 30_000);

  it('records a settled night without reward rows as 0 once its activity day is over, and leaves out only a night it could not read', async () => {
    const { source: s } = source({ POLYMARKET_RETRIES: '1' });
    // No earnings on T-3 (paid as the payout dated T-2): asked on that payout date, and later.
    expect(fake.account.earnings.some((e) => e.day === addDays(T, -3))).toBe(false);
    expect(await s.payout(addDays(T, -2), addDays(T, -2))).toBe(0);
    expect(await s.payout(addDays(T, -2), T)).toBe(0);
    // An answer of null is an answer without rows.
    fake.fail('/rewards/user/total', { status: 200, body: 'null' });
    expect(await s.payout(addDays(T, -2), T)).toBe(0);
    // A payout date still to come has no figure yet.
    expect(await s.payout(addDays(T, 1), T)).toBeNull();
    // A route that does not answer gives no figure: the night stays a gap.
    fake.fail('/rewards/user/total', ...Array.from({ length: 2 }, () => ({ status: 503, body: '<html>down</html>' })));
    await expect(s.payout(addDays(T, -2), T)).rejects.toThrow(/HTTP 503/);
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

  it('records a revised earlier night as a correction and leaves the rest unchanged', async () => {
    const before = await query<{ date: string; updated_at: Date }>(stack.db.adminUrl, 'select date, updated_at from stats.payout order by date');
    const a = fake.account;
    const revised = a.earnings.find((e) => e.day === addDays(T, -2) && e.asset_address === PUSD)!;
    const old = round2(dayUsd(a, addDays(T, -2)));
    revised.earnings += 0.48;
    const run = await writer(['once']);
    expect(run.code, run.stdout).toBe(0);
    expect(await query(stack.db.adminUrl, 'select date, old_usd::float8 as old, new_usd::float8 as new from stats.payout_correction'))
      .toEqual([{ date: addDays(T, -1), old, new: Math.round(dayUsd(a, addDays(T, -2)) * 1e6) / 1e6 }]);
    const after = await query<{ date: string; updated_at: Date }>(stack.db.adminUrl, 'select date, updated_at from stats.payout order by date');
    expect(after[1]).toEqual(before[1]); // tonight's payout did not change, nor did its updated_at
    expect(after[0]!.updated_at.getTime()).toBeGreaterThan(before[0]!.updated_at.getTime());
  }, 30_000);

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

  it('asks for the right activity days around 00:00 UTC (payout date = activity day + 1)', async () => {
    const { source: s, log } = source();
    const db = openWriterDb(stack.db.urlFor('stats_writer'));
    const from = fake.requests.length;
    const justAfterMidnight = new Date(midnightMs(T) + 30_000);
    try {
      await runCycle({ db, source: s, log }, justAfterMidnight);
      const asked = fake.requests.slice(from).filter((r) => r.path === '/rewards/user/total').map((r) => r.query.date);
      expect(asked).toEqual([T, addDays(T, -2), addDays(T, -1)]); // accrual of today; nights T-1 and T
      const [row] = await query<{ usd: number }>(stack.db.adminUrl, 'select usd::float8 as usd from stats.accrual where observed_at = $1', [justAfterMidnight]);
      expect(row!.usd).toBeCloseTo(dayUsd(fake.account, T), 6);
    } finally {
      await db.destroy();
    }
  }, 30_000);

  it('backfills settled nights one request each (a night under $1 pays 0), with progress, and resumes', async () => {
    const since = addDays(T, -6);
    const from = fake.requests.length;
    const run = await writer(['backfill', '--since', since]);
    expect(run.code, run.stdout).toBe(0);
    const asked = fake.requests.slice(from).filter((r) => r.path === '/rewards/user/total').map((r) => r.query.date);
    expect(asked).toEqual([-7, -6, -5, -4, -3, -2, -1].map((d) => addDays(T, d)));
    expect(run.lines.find((l) => l.msg === 'backfill done')).toMatchObject({ nights: 7, written: 7, empty: 0, failed: 0 });
    expect(run.lines.find((l) => l.msg === 'night under the minimum payout: published as 0')).toMatchObject({ date: addDays(T, -5), earnings_usd: 0.4 });
    const payouts = await query<{ date: string; usd: number }>(stack.db.adminUrl, 'select date, usd::float8 as usd from stats.payout where date <= $1 order by date', [addDays(T, -2)]);
    expect(payouts).toEqual([
      { date: addDays(T, -6), usd: 0 }, { date: addDays(T, -5), usd: 0 }, { date: addDays(T, -4), usd: 0 },
      { date: addDays(T, -3), usd: 5 }, { date: addDays(T, -2), usd: 0 },
    ]);
    const again = fake.requests.length;
    expect((await writer(['backfill', '--since', since])).code).toBe(0);
    expect(fake.requests.slice(again).filter((r) => r.path === '/rewards/user/total').map((r) => r.query.date))
      .toEqual([addDays(T, -2), addDays(T, -1)]); // only the last two nights are asked again
  }, 60_000);

  it('logs a night whose earnings and REWARD credits differ, with amounts only', async () => {
    // The credit of the payout dated T-1 (activity T-2) was 37.52, the earnings now give 38.
    const { source: s, lines } = source();
    await s.payout(addDays(T, -1), T);
    expect(lines.find((l) => l.msg === 'payout differs from the REWARD credits of its night'))
      .toMatchObject({ date: addDays(T, -1), payout_usd: 38, credited_usd: 37.52 });
  }, 30_000);

  it('`check` prints what would be published, writes nothing, and flags what looks wrong', async () => {
    const counts = () => query(stack.db.adminUrl, 'select (select count(*)::int from stats.accrual) as a, (select count(*)::int from stats.heartbeat) as h');
    const before = await counts();
    fake.account.stuckBalance = '2469135780'; // the CLOB doubles the balance; the chain is right
    const run = await writer(['check'], { POLYGON_RPC_URL: `${fake.url}/rpc` });
    delete fake.account.stuckBalance;
    expect(run.code, run.stderr).toBe(1);
    const report = JSON.parse(run.stdout.split('\n').find((l) => l.startsWith('{"nights"'))!);
    expect(report.capital).toMatchObject({ cash_usd: 1234.56789, clob_cash_usd: 2469.13578 });
    expect(report.accrued_today_markets).toBe(104);
    expect(report.nights.find((n: { date: string }) => n.date === addDays(T, -1))).toEqual({ date: addDays(T, -1), payout_usd: 38, credited_usd: 37.52 });
    expect(report.flags.join('\n')).toMatch(/the CLOB reports \$2469\.14 of cash, the chain \$1234\.57/);
    expect(report.flags.join('\n')).toMatch(new RegExp(`night ${addDays(T, -1)}: earnings give a payout of \\$38\\.00 but \\$37\\.52 was credited`));
    expect(await counts()).toEqual(before);
  }, 30_000);

  it('`check` says plainly when the rewards routes refuse a deposit wallet (signature type 3), and reads the rest', async () => {
    const wallet = fakeAccount({ signatureType: 3, chainBalance: 50_000_000n, cachedBalance: '50000000' });
    wallet.earnings = Array.from({ length: 16 }, (_, i) => earning(addDays(T, -1 - i), 1, 2));
    const deposit = await new FakePolymarket(wallet).start();
    try {
      const refused = await runCli(['check'], { ...env, ...writerEnv(deposit) });
      expect(refused.code, refused.stderr).toBe(1);
      const report = JSON.parse(refused.stdout.split('\n').find((l) => l.startsWith('{"nights"'))!);
      expect(report.flags.join('\n')).toMatch(/the rewards routes refused signature type 3, which their reference does not list: this account's rewards cannot be read/);
      expect(report.notes.join('\n')).toMatch(/SIGNATURE_TYPE 3 \(a deposit wallet\): Polymarket's rewards reference lists signature types 0, 1 and 2 only/);
      expect(report.nights).toEqual([]);
      expect(report.capital).toMatchObject({ cash_usd: 50 }); // the rest of the account was read
      // Every rewards call named the deposit wallet as maker_address.
      const rewardCalls = deposit.requests.filter((r) => r.path.startsWith('/rewards/'));
      expect(rewardCalls.length).toBeGreaterThan(0);
      for (const r of rewardCalls) expect(r.query).toMatchObject({ signature_type: '3', maker_address: wallet.funder });

      // Should the server accept the type, the figures are read, and only the note remains.
      deposit.rewardsSignatureTypes = [0, 1, 2, 3];
      const accepted = await runCli(['check'], { ...env, ...writerEnv(deposit) });
      const read = JSON.parse(accepted.stdout.split('\n').find((l) => l.startsWith('{"nights"'))!);
      expect(read.flags.join('\n')).not.toMatch(/refused/);
      expect(read.nights.filter((n: { payout_usd: number }) => n.payout_usd === 2)).toHaveLength(16);
      expect(read.notes).toHaveLength(1);
    } finally {
      await deposit.stop();
    }
  }, 60_000);

  it('killed mid-cycle and started again: nothing lost, nothing doubled', async () => {
    await resetData(stack);
    await insertBoundarySnapshots();
    const slowEnv = { ...env, POLYMARKET_TIMEOUT_MS: '10000' };
    fake.fail('/data/orders', { status: 0, delayMs: 8000 });
    const from = fake.requests.length;
    const run = startCli(['run'], slowEnv);
    run.child.stdin!.end();
    // Wait until the writer is inside the breadth call (accrual already written), then kill it.
    for (let i = 0; i < 300 && !fake.requests.slice(from).some((r) => r.path === '/data/orders'); i++) await new Promise((r) => setTimeout(r, 50));
    run.child.kill('SIGKILL');
    runs.push(await run.result);
    const mid = await query(stack.db.adminUrl,
      'select (select count(*)::int from stats.accrual) as a, (select count(*)::int from stats.breadth) as b, (select count(*)::int from stats.payout) as p, (select count(*)::int from stats.heartbeat) as h');
    expect(mid).toEqual([{ a: 1, b: 0, p: 0, h: 1 }]);

    for (let i = 0; i < 2; i++) expect((await writer(['once'])).code).toBe(0);
    expect(await query(stack.db.adminUrl, 'select count(*)::int as n from stats.payout')).toEqual([{ n: 2 }]);
    expect(await query(stack.db.adminUrl, 'select count(*)::int as n from stats.payout_correction')).toEqual([{ n: 0 }]);
    expect(await query(stack.db.adminUrl, 'select count(*)::int as n from stats.trading_cost_correction')).toEqual([{ n: 0 }]);
    const counts = await query(stack.db.adminUrl, 'select (select count(*)::int from stats.accrual) as a, (select count(*)::int from stats.breadth) as b, (select count(*)::int from stats.heartbeat) as h');
    expect(counts).toEqual([{ a: 3, b: 2, h: 3 }]); // one observation per run, none twice
  }, 60_000);

  it('`once` records tonight as 0 when Polymarket answers for yesterday without reward rows, and the night is in the history', async () => {
    const a = fake.account;
    const saved = a.earnings;
    a.earnings = saved.filter((e) => e.day !== addDays(T, -1)); // yesterday, paid as tonight's payout: nothing earned
    try {
      const run = await writer(['once']);
      expect(run.code, run.stdout).toBe(0);
      expect(await query(stack.db.adminUrl, 'select usd::float8 as usd from stats.payout where date = $1', [T])).toEqual([{ usd: 0 }]);
      const history = await query<{ h: { nights: { date: string; usd: number }[] } }>(stack.db.adminUrl, 'select stats.history_at(now()) as h');
      expect(history[0]!.h.nights.at(-1)).toMatchObject({ date: T, usd: 0 });
    } finally {
      a.earnings = saved;
    }
  }, 30_000);

  it('stops `run` cleanly on SIGTERM after its cycle', async () => {
    const run = startCli(['run'], env);
    run.child.stdin!.end();
    for (let i = 0; i < 300 && !run.stdout().includes('"cycle done"'); i++) await new Promise((r) => setTimeout(r, 50));
    run.child.kill('SIGTERM');
    const result = await run.result;
    runs.push(result);
    expect(result.code).toBe(0);
    expect(result.lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['writer running', 'cycle done', 'SIGTERM: stopping after the current step', 'writer stopped']));
  }, 30_000);

  it('stops `run` promptly on a SIGTERM that arrives during a step, not an interval later', async () => {
    // The accrual read hangs for 2 s, so the SIGTERM lands while the cycle is under way.
    fake.fail('/rewards/user/total', { status: 0, delayMs: 2000 });
    const run = startCli(['run'], env);
    run.child.stdin!.end();
    for (let i = 0; i < 300 && !run.stdout().includes('"writer running"'); i++) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 300));
    const signalled = Date.now();
    run.child.kill('SIGTERM');
    const result = await run.result;
    runs.push(result);
    expect(result.code).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(5000);
    expect(result.lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['SIGTERM: stopping after the current step', 'writer stopped']));
  }, 30_000);

  it('never lets addresses, credentials, condition ids or order ids reach the logs, the database or the API', async () => {
    const a = fake.account;
    const secrets = [a.address, a.funder, a.apiKey, a.secret, a.passphrase, ...a.orders.map((o) => o.id), ...a.orders.map((o) => o.market),
      ...a.trades.flatMap((t) => [t.market, t.id, t.taker_order_id, ...t.maker_orders.map((m) => m.order_id)]),
      ...a.earnings.map((e) => e.condition_id), ...a.activity.map((r) => r.transaction_hash)];
    const needles = [...new Set(secrets.flatMap((s) => [s, s.toLowerCase(), s.replace(/^0x/, '').toLowerCase()]))];
    const dump = await query<{ t: string }>(stack.db.adminUrl,
      `select concat_ws('|', ${TABLE_NAMES.map((t) => `(select json_agg(x)::text from stats.${t} x)`).join(', ')}) as t`);
    const health = await fetch(`${stack.cfg.apiUrl}/rest/v1/rpc/landing_health`, { headers: { apikey: stack.cfg.ANON_KEY } }).then((r) => r.text());
    const everything = [...runs.map((r) => r.stdout + r.stderr), dump[0]!.t, JSON.stringify(await landingStatsViaApi(stack)), health].join('\n');
    expect(runs.length).toBeGreaterThanOrEqual(12);
    // The fake's 500 body named the funder; the log kept the message and masked the address.
    expect(everything).toMatch(/internal error for user (0x)?\[redacted\]/);
    for (const needle of needles) expect(everything.toLowerCase(), `found ${needle}`).not.toContain(needle);
  });
});
