// The writer process against a local fake of Polymarket (fake-polymarket.ts) and a real database:
// killed mid-cycle and started again, and stopped by SIGTERM after a cycle and during a step.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Env } from '../../config/settings.ts';
import { query, resetData } from '../support/db.ts';
import type { FakePolymarket } from '../support/fake-polymarket.ts';
import { insertBoundarySnapshots as insertSnapshots, publishedAndLogged, runWriter, startPolymarketWorld, stopPolymarketWorld } from '../support/polymarket-writer.ts';
import type { TestStack } from '../support/stack.ts';
import { startCli, type CliRun } from '../support/writer.ts';

let stack: TestStack;
let fake: FakePolymarket;
let env: Env;
const runs: CliRun[] = [];
const writer = (args: string[], extra: Record<string, string> = {}) => runWriter(runs, env, args, extra);
const insertBoundarySnapshots = () => insertSnapshots(stack);

beforeAll(async () => ({ stack, fake, env } = await startPolymarketWorld()));
afterAll(() => stopPolymarketWorld({ stack, fake }));

describe('the writer against the documented Polymarket', () => {
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

  it('never lets addresses, credentials, condition ids or order ids reach the logs, the database or the API (killed and stopped runs)', async () => {
    const { everything, needles } = await publishedAndLogged(stack, fake.account, runs);
    expect(runs.length).toBeGreaterThanOrEqual(5);
    for (const needle of needles) expect(everything.toLowerCase(), `found ${needle}`).not.toContain(needle);
  });
});
