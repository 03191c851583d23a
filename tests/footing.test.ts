// Real-sized data at real precision: 1,010 nights whose payouts, costs and capital have six decimals,
// as Polymarket's amounts do. Every published USD value is in cents, every published sum is the sum of
// the published values it covers, and the verifier, which adds the nights up itself, passes on it,
// before and after a correction.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, todayUtc } from '../contract/dates.ts';
import { API_PATHS, SITE_PATHS } from '../contract/paths.ts';
import { startTestStack, type TestStack } from './support/stack.ts';
import { verify } from './support/verifier.ts';
import { cliEnv, runCli, until } from './support/writer.ts';

const NIGHTS = 1010;
const today = todayUtc();
let stack: TestStack;
let dir: string;

/** Amounts with six decimals from a deterministic generator, so a failure can be replayed. */
function micros(seed: number) {
  let state = seed;
  return (low: number, high: number) => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return Math.round((low + (state / 2 ** 31) * (high - low)) * 1e6) / 1e6;
  };
}

/** Sums a list of published USD values exactly, in integer cents. */
const centsOf = (values: number[]) => values.reduce((sum, v) => sum + Math.round(v * 100), 0);

/** Every number under a key that names a USD amount, with the key's path, anywhere in a JSON value. */
function usdValues(value: unknown, at = ''): [string, number][] {
  if (Array.isArray(value)) return value.flatMap((v, i) => usdValues(v, `${at}[${i}]`));
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, v]) =>
      typeof v === 'number' && /(^|_)usd$/.test(key) ? [[`${at}.${key}`, v] as [string, number]] : usdValues(v, `${at}.${key}`));
  }
  return [];
}

async function getJson(url: string, headers: Record<string, string> = {}): Promise<any> {
  const res = await fetch(url, { headers });
  expect(res.status, url).toBe(200);
  return res.json();
}

beforeAll(async () => {
  stack = await startTestStack();
  dir = mkdtempSync(path.join(tmpdir(), 'footing-'));
  const amount = micros(7);
  const events: object[] = [];
  for (let i = NIGHTS; i >= 1; i--) {
    const date = addDays(today, -i);
    events.push({ type: 'payout', date, usd: amount(5, 95) });
    if (i % 3 !== 0) events.push({ type: 'trading_cost', date, usd: amount(-4, 12) });
    if (i % 2 === 0) events.push({ type: 'capital', at: `${date}T12:00:00Z`, cash_usd: amount(4000, 9000), inventory_usd: amount(0, 2500), positions: 4 });
  }
  events.push({ type: 'accrual', at: new Date().toISOString(), usd: amount(1, 40), markets: 9 });
  const run = await runCli(['import', '-'], cliEnv(stack), events.map((e) => JSON.stringify(e)).join('\n') + '\n');
  expect(run.code, run.stderr).toBe(0);
}, 300_000);

afterAll(async () => {
  await stack?.destroy();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('published figures on sub-cent data', () => {
  it('total_usd and every running total are the sums of the published nights', async () => {
    const { nights } = await getJson(stack.cfg.siteUrl + SITE_PATHS.SITE_HISTORY) as { nights: { usd: number; total_usd: number }[] };
    const stats = await getJson(stack.cfg.siteUrl + SITE_PATHS.SITE_STATS);
    expect(nights).toHaveLength(NIGHTS);
    let cents = 0;
    for (const night of nights) {
      cents += Math.round(night.usd * 100);
      expect(Math.round(night.total_usd * 100)).toBe(cents);
    }
    expect(Math.round(stats.total_usd * 100)).toBe(cents);
  });

  it("the returns add up the window's published nights, and net is their difference", async () => {
    const { nights } = await getJson(stack.cfg.siteUrl + SITE_PATHS.SITE_HISTORY) as { nights: { date: string; usd: number; trading_cost_usd: number | null }[] };
    const { returns } = await getJson(stack.cfg.siteUrl + SITE_PATHS.SITE_STATS);
    const window = nights.filter((n) => n.date >= returns.from_date && n.date <= returns.to_date);
    expect(window).toHaveLength(returns.window_days);
    const rewards = centsOf(window.map((n) => n.usd));
    const costs = centsOf(window.flatMap((n) => (n.trading_cost_usd === null ? [] : [n.trading_cost_usd])));
    expect(Math.round(returns.rewards_usd * 100)).toBe(rewards);
    expect(Math.round(returns.trading_costs_usd * 100)).toBe(costs);
    expect(Math.round(returns.net_usd * 100)).toBe(rewards - costs);
    expect(returns.rewards_vs_costs).toBe(Math.round((rewards / costs) * 100) / 100);
  });

  it('no answer of either host, and no log entry, carries a USD value past cents', async () => {
    const key = { apikey: stack.cfg.ANON_KEY };
    const answers: [string, unknown][] = [
      ['/api/stats', await getJson(stack.cfg.siteUrl + SITE_PATHS.SITE_STATS)],
      ['/api/history', await getJson(stack.cfg.siteUrl + SITE_PATHS.SITE_HISTORY)],
      ['landing_stats', await getJson(stack.cfg.apiUrl + API_PATHS.STATS, key)],
      ['landing_history', await getJson(stack.cfg.apiUrl + API_PATHS.HISTORY, key)],
    ];
    const log = await getJson(stack.cfg.apiUrl + API_PATHS.LOG, key) as { entries: unknown[] };
    expect(log.entries.length).toBeGreaterThan(NIGHTS - 10);
    answers.push(['landing_log entries', log.entries.map((e) => (typeof e === 'string' ? JSON.parse(e) : e))]);
    for (const [name, body] of answers) {
      const values = usdValues(body);
      expect(values.length, name).toBeGreaterThan(0);
      for (const [at, v] of values) expect(Math.round(v * 100) / 100, `${name}${at}`).toBe(v);
    }
    const csv = await (await fetch(stack.cfg.siteUrl + SITE_PATHS.SITE_HISTORY_CSV)).text();
    const [header, ...rows] = csv.trim().split('\r\n');
    const usdColumns = header!.split(',').flatMap((name, i) => (name.endsWith('usd') ? [i] : []));
    for (const row of rows) for (const i of usdColumns) expect(row.split(',')[i]!, row).toMatch(/^(-?\d+(\.\d{1,2})?)?$/);
  });
});

describe('the verifier on real-sized data', () => {
  it('passes on the import, then after a correction of a final night', async () => {
    const state = path.join(dir, 'state.json');
    const first = await verify('--site', stack.cfg.siteUrl, '--state', state);
    expect(first.code, first.stdout + first.stderr).toBe(0);

    const corrected = addDays(today, -500);
    const run = await runCli(['import', '-'], cliEnv(stack), `${JSON.stringify({ type: 'payout', date: corrected, usd: 12.345678 })}\n`);
    expect(run.code, run.stderr).toBe(0);
    await until('the correction served', async () => {
      const { nights } = await getJson(stack.cfg.siteUrl + SITE_PATHS.SITE_HISTORY) as { nights: { date: string; usd: number }[] };
      return nights.find((n) => n.date === corrected)?.usd === 12.35;
    });
    const second = await verify('--site', stack.cfg.siteUrl, '--state', state);
    expect(second.code, second.stdout + second.stderr).toBe(0);
  }, 180_000);
});
