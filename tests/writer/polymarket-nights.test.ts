// The writer's nights against a local fake of Polymarket (fake-polymarket.ts) and a real database: the
// days it asks for, what an empty or null answer means, corrections, the backfill, and `check`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, midnightMs } from '../../contract/dates.ts';
import type { Env } from '../../config/settings.ts';
import { runCycle } from '../../writer/cycle.ts';
import { openWriterDb } from '../../writer/db.ts';
import { query } from '../support/db.ts';
import { earning, fakeAccount, PUSD } from '../support/fake-polymarket-account.ts';
import { FakePolymarket, writerEnv } from '../support/fake-polymarket.ts';
import { at, dayUsd, insertBoundarySnapshots as insertSnapshots, polymarketSource, publishedAndLogged, round2, runWriter, startPolymarketWorld, stopPolymarketWorld, T } from '../support/polymarket-writer.ts';
import type { TestStack } from '../support/stack.ts';
import { runCli, type CliRun } from '../support/writer.ts';

let stack: TestStack;
let fake: FakePolymarket;
let env: Env;
const runs: CliRun[] = [];
const writer = (args: string[], extra: Record<string, string> = {}) => runWriter(runs, env, args, extra);
const source = (extra: Record<string, string> = {}) => polymarketSource(env, extra);
const insertBoundarySnapshots = () => insertSnapshots(stack);

beforeAll(async () => {
  ({ stack, fake, env } = await startPolymarketWorld());
  // The two nights a first cycle publishes, which the corrections and `check` below start from.
  await insertBoundarySnapshots();
  const first = await writer(['once']);
  expect(first.code, first.stdout + first.stderr).toBe(0);
});
afterAll(() => stopPolymarketWorld({ stack, fake }));

describe('the writer against the documented Polymarket', () => {
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

  it('never lets addresses, credentials, condition ids or order ids reach the logs, the database or the API (backfills, checks, corrections)', async () => {
    const { everything, needles } = await publishedAndLogged(stack, fake.account, runs);
    expect(runs.length).toBeGreaterThanOrEqual(6);
    for (const needle of needles) expect(everything.toLowerCase(), `found ${needle}`).not.toContain(needle);
  });
});
