// The Polymarket source end to end: the writer CLI against a local fake of the CLOB and Data API
// (tests/writer/fake-polymarket.ts), a real database, and landing_stats read back through the API host.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { polymarketFromEnv } from '../../scripts/writer/config.ts';
import { runCycle } from '../../scripts/writer/cycle.ts';
import { openWriterDb } from '../../scripts/writer/db.ts';
import { createLogger } from '../../scripts/writer/log.ts';
import { PolymarketSource } from '../../scripts/writer/polymarket/source.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { FakePolymarket, type FakeAccount } from './fake-polymarket.ts';
import { addDays, cliEnv, landingStats, landingStatsViaApi, query, resetData, runCli, startCli, todayUtc, type CliRun } from './helpers.ts';

const T = todayUtc();
const at = (date: string, hhmmss: string) => Date.parse(`${date}T${hhmmss}Z`) / 1000;
const cid = (n: number) => '0x' + `c0de${n}`.padEnd(64, '7');
const PUSD = '0xC011a7E12a19f7B1f670d46F03B03f3342E82DFB';
const OTHER_ASSET = '0x69308FB512518e39F9b16112fA8d994F4e2Bf8bB';
const MIDNIGHT = (date: string) => Date.parse(`${date}T00:00:00Z`);

function makeAccount(): FakeAccount {
  return {
    apiKey: '5f3e2c1a-9b8d-4e7f-a6c5-3d2e1f0a9b8c',
    secret: Buffer.from('fake-secret-for-the-writer-tests!').toString('base64').replace(/\+/g, '-').replace(/\//g, '_'),
    passphrase: 'd3adb33fcafe0123456789abcdef0123456789abcdef0123456789abcdef0123',
    address: '0x1234abcd1234abcd1234abcd1234abcd1234abcd',
    funder: '0x9f8e7d6c9f8e7d6c9f8e7d6c9f8e7d6c9f8e7d6c',
    totals: new Map([
      // activity day T-2, paid as the payout dated T-1: two assets, epoch-ms dates, numeric strings
      [addDays(T, -2), [
        { date: MIDNIGHT(addDays(T, -2)), asset_address: PUSD, earnings: '30.5', asset_rate: 1 },
        { date: MIDNIGHT(addDays(T, -2)), asset_address: OTHER_ASSET, earnings: 2, asset_rate: '3.51', sponsored: true },
      ]],
      [addDays(T, -1), [{ date: `${addDays(T, -1)}T00:00:00Z`, asset_address: PUSD, earnings: 41.25, asset_rate: 1 }]],
      [T, [{ date: T, asset_address: PUSD, earnings: '12.345678', asset_rate: '1' }]],
      [addDays(T, -4), [{ date: addDays(T, -4), asset_address: PUSD, earnings: 5, asset_rate: 1 }]],
    ]),
    earnings: new Map([[T, [
      { condition_id: cid(1), asset_address: PUSD, earnings: 3, asset_rate: 1 },
      { condition_id: cid(2), asset_address: PUSD, earnings: 0, asset_rate: 1 },
      { condition_id: cid(3), asset_address: OTHER_ASSET, earnings: '1.0', asset_rate: 3.51 },
      { condition_id: cid(1), asset_address: OTHER_ASSET, earnings: '0.5', asset_rate: 3.51 },
      { condition_id: cid(4), asset_address: PUSD, earnings: '2.3', asset_rate: 1 },
      { condition_id: cid(5), asset_address: PUSD, earnings: '0', asset_rate: 1 },
    ]]]),
    orders: [{ id: '0x' + 'a1'.repeat(32), market: cid(1) }, { id: '0x' + 'a2'.repeat(32), market: cid(6) }, { id: '0x' + 'a3'.repeat(32), market: cid(7) }],
    trades: [{ id: 'trade-1', market: cid(8), maker_orders: [{ order_id: '0x' + 'a4'.repeat(32), maker_address: '0x9f8e7d6c9f8e7d6c9f8e7d6c9f8e7d6c9f8e7d6c' }] }],
    balance: '1234567890',
    value: [{ user: '0x9f8e7d6c9f8e7d6c9f8e7d6c9f8e7d6c9f8e7d6c', value: 2345.5 }],
    positions: [
      ...Array.from({ length: 500 }, (_, i) => ({ conditionId: cid(100 + i), size: 5, currentValue: 2 })),
      ...Array.from({ length: 20 }, (_, i) => ({ conditionId: cid(700 + i), size: 2, currentValue: 1 })),
      ...Array.from({ length: 10 }, (_, i) => ({ conditionId: cid(800 + i), size: 0.4, currentValue: 0.1 })),
    ],
    activity: [
      { type: 'REWARD', usdcSize: 37.52, timestamp: at(addDays(T, -1), '00:01:30'), conditionId: '' },
      { type: 'MAKER_REBATE', usdcSize: 1.5, timestamp: at(addDays(T, -1), '10:00:00'), conditionId: cid(1) },
      { type: 'YIELD', usdcSize: 0.48, timestamp: at(addDays(T, -1), '12:00:00') },
      { type: 'DEPOSIT', usdcSize: 100, timestamp: at(addDays(T, -1), '13:00:00') },
      { type: 'WITHDRAWAL', usdcSize: 20, timestamp: at(addDays(T, -1), '14:00:00') },
      { type: 'TRADE', usdcSize: 55, timestamp: at(addDays(T, -1), '15:00:00'), conditionId: cid(1) },
      { type: 'MERGE', usdcSize: 10, timestamp: at(addDays(T, -1), '16:00:00'), conditionId: cid(3) },
      { type: 'REWARD', usdcSize: 41.25, timestamp: at(T, '00:01:00') },
    ],
  };
}

let stack: TestStack;
let fake: FakePolymarket;
const runs: CliRun[] = [];
let env: Record<string, string | undefined>;

async function writer(args: string[]): Promise<CliRun> {
  const run = await runCli(args, env);
  runs.push(run);
  return run;
}

/** Capital snapshots the writer took around the last two midnights (the inputs of the trading-cost formula). */
async function insertBoundarySnapshots() {
  await query(stack.db.adminUrl, `insert into stats.capital (observed_at, cash_usd, inventory_usd, positions) values
    ($1, 4000, 1000, 3), ($2, 9000, 1000, 9), ($3, 9100, 950, 9)`, [
    new Date(MIDNIGHT(addDays(T, -1)) - 2 * 3600_000), // outside the 30-minute tolerance: ignored
    new Date(MIDNIGHT(addDays(T, -1)) - 60_000),
    new Date(MIDNIGHT(T) - 120_000),
  ]);
}

beforeAll(async () => {
  stack = await startTestStack();
  fake = await new FakePolymarket(makeAccount()).start();
  const a = fake.account;
  env = cliEnv(stack, {
    WRITER_SOURCE: 'polymarket', CLOB_API_KEY: a.apiKey, CLOB_SECRET: a.secret, CLOB_PASSPHRASE: a.passphrase,
    POLY_ADDRESS: a.address, FUNDER_ADDRESS: a.funder, SIGNATURE_TYPE: '1', CLOB_HOST: fake.url, DATA_API_HOST: fake.url,
    POLYMARKET_TIMEOUT_MS: '400', POLYMARKET_RETRY_BASE_MS: '20', POLYMARKET_RETRIES: '3', WRITER_LOG_LEVEL: 'debug',
  });
});
afterAll(async () => {
  await fake?.stop();
  await stack?.destroy();
});

describe('the writer against the fake Polymarket', () => {
  it('fills the database through 429, 425, 401, 5xx and a timeout, and landing_stats shows the figures', async () => {
    await insertBoundarySnapshots();
    fake.fail('/rewards/user/total', { status: 429, body: '<html><body><h1>429 Too Many Requests</h1>cloudflare</body></html>', headers: { 'retry-after': '1' } });
    fake.fail('/balance-allowance', { status: 425, body: '{"error":"service not ready"}' });
    fake.fail('/data/orders', { status: 401, body: '{"error":"Unauthorized/Invalid api key"}' });
    fake.fail('/value', { status: 0, delayMs: 1500 });
    fake.fail('/positions', { status: 500, body: `{"error":"internal error for user ${fake.account.funder}"}` });

    const run = await writer(['once']);
    expect(run.code, run.stdout + run.stderr).toBe(0);

    const stats = await landingStatsViaApi(stack);
    expect(stats).toMatchObject({
      data_source: 'polymarket',
      daily: [{ date: addDays(T, -1), usd: 37.52 }, { date: T, usd: 41.25 }],
      last_night_usd: 41.25,
      last_night_date: T,
      total_usd: 78.77,
      best_day_usd: 41.25,
      accrued_today_usd: 12.35,
      accrued_today_markets: 3, // c1, c3, c4 earn today; c2 and c5 earn 0
      markets_quoted_24h: 6, // earning c1 c3 c4, open orders c1 c6 c7, a fill in c8
      capital: { cash_usd: 1234.57, inventory_usd: 2345.5, positions: 520, at_stake_usd: 3580.07 },
    });
    // Equity 10000 → 10050 with 39.50 income, 100 deposited and 20 withdrawn: trading P&L −69.50.
    expect(stats.returns.trading_costs_usd).toBe(69.5);
    expect((await query(stack.db.adminUrl, 'select date, usd::text from stats.trading_cost'))).toEqual([{ date: T, usd: '69.5' }]);

    // Retry-After was honoured: the retry of the 429 came at least a second later.
    const totals = fake.hits('/rewards/user/total');
    expect(totals[0]!.status).toBe(429);
    expect(totals[1]!.at - totals[0]!.at).toBeGreaterThanOrEqual(990);
    expect(fake.hits('/balance-allowance').map((r) => r.status)).toEqual([425, 200]);
    expect(fake.hits('/data/orders').map((r) => r.status)).toEqual([401, 200, 200]);
    expect(fake.hits('/value').length).toBeGreaterThanOrEqual(2);
    expect(fake.hits('/positions').map((r) => r.status)).toEqual([500, 200, 200]);
    // Every signed call passed the fake's signature check (the only 401 was the scripted one).
    expect(fake.requests.filter((r) => r.status === 401)).toHaveLength(1);
    // Paging: three pages of today's earnings, from MA== to the end marker.
    expect(fake.hits('/rewards/user').filter((r) => r.query.date === T).slice(0, 3).map((r) => r.query.next_cursor)).toEqual(['MA==', 'Mg==', 'NA==']);
    for (const r of [...totals, ...fake.hits('/rewards/user')]) expect(r.query).toMatchObject({ signature_type: '1', maker_address: fake.account.funder });
    expect(run.lines.filter((l) => l.msg === 'polymarket call retried').length).toBeGreaterThanOrEqual(5);
  }, 60_000);

  it('records a revised earlier night as a correction and leaves the rest unchanged', async () => {
    const before = await query<{ date: string; updated_at: Date }>(stack.db.adminUrl, 'select date, updated_at from stats.payout order by date');
    fake.account.totals.set(addDays(T, -2), [{ date: addDays(T, -2), asset_address: PUSD, earnings: '38', asset_rate: 1 }]);
    const run = await writer(['once']);
    expect(run.code, run.stdout).toBe(0);
    expect(await query(stack.db.adminUrl, 'select date, old_usd::text, new_usd::text from stats.payout_correction'))
      .toEqual([{ date: addDays(T, -1), old_usd: '37.52', new_usd: '38' }]);
    const after = await query<{ date: string; updated_at: Date }>(stack.db.adminUrl, 'select date, updated_at from stats.payout order by date');
    expect(after[1]).toEqual(before[1]); // tonight's payout did not change, nor did its updated_at
    expect(after[0]!.updated_at.getTime()).toBeGreaterThan(before[0]!.updated_at.getTime());
    expect(await query(stack.db.adminUrl, 'select count(*)::int as n from stats.trading_cost')).toEqual([{ n: 1 }]);
    expect((await landingStats(stack)).daily).toEqual([{ date: addDays(T, -1), usd: 38 }, { date: T, usd: 41.25 }]);
  }, 30_000);

  it('keeps going when a source call fails for good: the other figures and the heartbeat are written, the exit code says 1', async () => {
    const count = async () => (await query<{ a: number; c: number; h: number }>(stack.db.adminUrl,
      'select (select count(*)::int from stats.accrual) as a, (select count(*)::int from stats.capital) as c, (select count(*)::int from stats.heartbeat) as h'))[0]!;
    const before = await count();
    fake.permanent.set('/value', { status: 503, body: '<html>upstream down</html>' });
    try {
      const run = await writer(['once']);
      expect(run.code).toBe(1);
      expect(run.lines.find((l) => l.msg === 'capital failed')?.error).toMatch(/GET \/value answered HTTP 503: HTML error page/);
      expect(run.lines.find((l) => l.msg === 'cycle done')).toMatchObject({ failed: ['capital'] });
    } finally {
      fake.permanent.delete('/value');
    }
    const after = await count();
    expect(after).toEqual({ a: before.a + 1, c: before.c, h: before.h + 1 });
  }, 30_000);

  it('asks for the right activity days around 00:00 UTC (payout date = activity day + 1)', async () => {
    const cfg = polymarketFromEnv({ ...env, CLOB_HOST: fake.url, DATA_API_HOST: fake.url });
    const db = openWriterDb(stack.db.urlFor('stats_writer'));
    const from = fake.requests.length;
    const justAfterMidnight = new Date(MIDNIGHT(T) + 30_000);
    try {
      await runCycle({ db, source: new PolymarketSource(cfg), log: createLogger({ write: () => {} }) }, justAfterMidnight);
      const asked = fake.requests.slice(from).filter((r) => r.path === '/rewards/user/total').map((r) => r.query.date);
      expect(asked).toEqual([T, addDays(T, -2), addDays(T, -1)]); // accrual of today; nights T-1 and T
      const [row] = await query<{ usd: string }>(stack.db.adminUrl, 'select usd::text from stats.accrual where observed_at = $1', [justAfterMidnight]);
      expect(row).toEqual({ usd: '12.345678' });
    } finally {
      await db.destroy();
    }
  }, 30_000);

  it('backfills settled nights one request each, with progress, and resumes without asking again', async () => {
    const since = addDays(T, -4);
    const from = fake.requests.length;
    const run = await writer(['backfill', '--since', since]);
    expect(run.code, run.stdout).toBe(0);
    const asked = fake.requests.slice(from).filter((r) => r.path === '/rewards/user/total').map((r) => r.query.date);
    expect(asked).toEqual([addDays(T, -5), addDays(T, -4), addDays(T, -3), addDays(T, -2), addDays(T, -1)]);
    expect(run.lines.find((l) => l.msg === 'backfill progress')).toMatchObject({ done: 5, of: 5 });
    expect(run.lines.find((l) => l.msg === 'backfill done')).toMatchObject({ nights: 5, written: 3, empty: 2, failed: 0 });
    expect(await query(stack.db.adminUrl, 'select date, usd::float8 as usd from stats.payout order by date'))
      .toEqual([{ date: addDays(T, -3), usd: 5 }, { date: addDays(T, -1), usd: 38 }, { date: T, usd: 41.25 }]);

    const again = fake.requests.length;
    expect((await writer(['backfill', '--since', since])).code).toBe(0);
    // The recorded older night is skipped; empty nights and the last two are asked again.
    expect(fake.requests.slice(again).filter((r) => r.path === '/rewards/user/total').map((r) => r.query.date))
      .toEqual([addDays(T, -5), addDays(T, -3), addDays(T, -2), addDays(T, -1)]);
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
    const mid = await query<{ a: number; b: number; p: number; h: number }>(stack.db.adminUrl,
      'select (select count(*)::int from stats.accrual) as a, (select count(*)::int from stats.breadth) as b, (select count(*)::int from stats.payout) as p, (select count(*)::int from stats.heartbeat) as h');
    expect(mid).toEqual([{ a: 1, b: 0, p: 0, h: 1 }]);

    for (let i = 0; i < 2; i++) expect((await writer(['once'])).code).toBe(0);
    expect(await query(stack.db.adminUrl, 'select date, usd::float8 as usd from stats.payout order by date'))
      .toEqual([{ date: addDays(T, -1), usd: 38 }, { date: T, usd: 41.25 }]);
    expect(await query(stack.db.adminUrl, 'select count(*)::int as n from stats.payout_correction')).toEqual([{ n: 0 }]);
    expect(await query(stack.db.adminUrl, 'select date, usd::float8 as usd from stats.trading_cost')).toEqual([{ date: T, usd: 69.5 }]);
    const counts = await query(stack.db.adminUrl, 'select (select count(*)::int from stats.accrual) as a, (select count(*)::int from stats.breadth) as b, (select count(*)::int from stats.heartbeat) as h');
    expect(counts).toEqual([{ a: 3, b: 2, h: 3 }]); // one observation per run, none twice
  }, 60_000);

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

  it('never lets addresses, credentials, condition ids or order ids reach the logs, the database or the API', async () => {
    const a = fake.account;
    const secrets = [a.address, a.funder, a.apiKey, a.secret, a.passphrase, ...a.orders.map((o) => o.id), a.trades[0]!.maker_orders[0]!.order_id,
      ...[...a.earnings.values()].flat().map((e) => e.condition_id), ...a.orders.map((o) => o.market), a.trades[0]!.market];
    const needles = secrets.flatMap((s) => [s, s.toLowerCase(), s.replace(/^0x/, '')]);
    const dump = await query<{ t: string }>(stack.db.adminUrl, `select concat_ws('|',
      (select json_agg(x)::text from stats.payout x), (select json_agg(x)::text from stats.payout_correction x),
      (select json_agg(x)::text from stats.accrual x), (select json_agg(x)::text from stats.breadth x),
      (select json_agg(x)::text from stats.capital x), (select json_agg(x)::text from stats.trading_cost x),
      (select json_agg(x)::text from stats.heartbeat x), (select json_agg(x)::text from stats.settings x)) as t`);
    const health = await fetch(`${stack.cfg.apiUrl}/rest/v1/rpc/landing_health`, { headers: { apikey: stack.cfg.ANON_KEY } }).then((r) => r.text());
    const everything = [
      ...runs.map((r) => r.stdout + r.stderr),
      dump[0]!.t,
      JSON.stringify(await landingStatsViaApi(stack)),
      health,
    ].join('\n');
    expect(runs.length).toBeGreaterThanOrEqual(7);
    // The fake's 500 body named the funder; the log kept the message and masked the address.
    expect(everything).toMatch(/internal error for user (0x)?\[redacted\]/);
    for (const needle of needles) expect(everything, `found ${needle}`).not.toContain(needle);
  });
});
