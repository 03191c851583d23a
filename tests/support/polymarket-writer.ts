// The world the Polymarket writer tests share: an account of raw facts for the fake to serve, a stack
// of the file's own, the writer's CLI and source run against both, and the trading cost computed apart.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { addDays, midnightMs, todayUtc } from '../../contract/dates.ts';
import type { Env } from '../../config/settings.ts';
import { polymarketFromEnv } from '../../config/writer.ts';
import { createLogger } from '../../writer/log.ts';
import { SealedOpenings } from '../../writer/openings.ts';
import { PolymarketSource } from '../../writer/polymarket/source.ts';
import { TABLE_NAMES } from '../../contract/tables.ts';
import { query } from './db.ts';
import { activity, conditionId, earning, fakeAccount, openOrder, position, PUSD, trade, type FakeAccount } from './fake-polymarket-account.ts';
import { FakePolymarket, writerEnv } from './fake-polymarket.ts';
import { startTestStack, type TestStack } from './stack.ts';
import { cliEnv, landingStatsViaApi, runCli, type CliRun } from './writer.ts';

export const T = todayUtc();
export const at = (date: string, hhmmss: string) => Date.parse(`${date}T${hhmmss}Z`) / 1000;
export const nowS = () => Math.floor(Date.now() / 1000);
export const OTHER_ASSET = '0x69308FB512518e39F9b16112fA8d994F4e2Bf8bB';
export const round2 = (n: number) => Math.round(n * 100) / 100;
export const round6 = (n: number) => Math.round(n * 1e6) / 1e6;

/** Σ earnings × asset_rate of one activity day, native plus sponsored: the figure /rewards/user/total?sponsored=true gives. */
export const dayUsd = (a: FakeAccount, day: string) => a.earnings.filter((e) => e.day === day).reduce((s, e) => s + e.earnings * e.asset_rate, 0);

export function makeAccount(): FakeAccount {
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

/** Capital snapshots the writer took around the last two midnights (the inputs of the trading-cost formula). */
const SNAPSHOTS = { s0: { cash: 9000, inventory: 1000 }, s1: { cash: 9100, inventory: 950 } };
export async function insertBoundarySnapshots(stack: TestStack) {
  await query(stack.db.adminUrl, `insert into stats.capital (observed_at, cash_usd, inventory_usd, positions) values
    ($1, 4000, 1000, 3), ($2, $3, $4, 9), ($5, $6, $7, 9)`, [
    new Date(midnightMs(addDays(T, -1)) - 2 * 3600_000), // outside the 30-minute tolerance: ignored
    new Date(midnightMs(addDays(T, -1)) - 60_000), SNAPSHOTS.s0.cash, SNAPSHOTS.s0.inventory,
    new Date(midnightMs(T) - 120_000), SNAPSHOTS.s1.cash, SNAPSHOTS.s1.inventory,
  ]);
}

/** The trading cost of activity day T-1, computed here from the snapshots and the fake's activity rows, to 6 decimals. */
export function expectedCostOfYesterday(a: FakeAccount): number {
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

/** A stack of the file's own, a fake Polymarket serving makeAccount(), and the writer's environment for both. */
export interface PolymarketWorld { stack: TestStack; fake: FakePolymarket; env: Env }

export async function startPolymarketWorld(): Promise<PolymarketWorld> {
  const stack = await startTestStack();
  const fake = await new FakePolymarket(makeAccount()).start();
  const env = cliEnv(stack, {
    ...writerEnv(fake),
    POLYMARKET_TIMEOUT_MS: '400', POLYMARKET_RETRY_BASE_MS: '20', POLYMARKET_RETRIES: '3', POLYMARKET_RESTART_WAIT_SECONDS: '20',
    WRITER_LOG_LEVEL: 'debug',
  });
  return { stack, fake, env };
}

export async function stopPolymarketWorld({ stack, fake }: Partial<PolymarketWorld>) {
  await fake?.stop();
  await stack?.destroy();
}

/** Runs the writer CLI in `env` (and `extra`), and keeps the run in `runs`, whose output may never hold an identifier. */
export async function runWriter(runs: CliRun[], env: Env, args: string[], extra: Record<string, string> = {}): Promise<CliRun> {
  const run = await runCli(args, { ...env, ...extra });
  runs.push(run);
  return run;
}

/** The writer's Polymarket source in this process, in `env` (and `extra`), and the lines it logs. */
export function polymarketSource(env: Env, extra: Record<string, string> = {}) {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({ json: true, write: (l) => lines.push(JSON.parse(l) as Record<string, unknown>) });
  const openings = new SealedOpenings(env.OPENINGS_KEY, mkdtempSync(path.join(tmpdir(), 'reward-transfers-')), log);
  return { source: new PolymarketSource(polymarketFromEnv({ ...env, ...extra }), openings, log), log, lines };
}

/**
 * Everything the writer's runs printed, every table of the database, and what the API host answers,
 * in one text; and every identifier of the fake's account (addresses, credentials, condition, order
 * and trade ids, transaction hashes) in each spelling, none of which may ever be found in it.
 */
export async function publishedAndLogged(stack: TestStack, account: FakeAccount, runs: CliRun[]): Promise<{ everything: string; needles: string[] }> {
  const a = account;
  const secrets = [a.address, a.funder, a.apiKey, a.secret, a.passphrase, ...a.orders.map((o) => o.id), ...a.orders.map((o) => o.market),
    ...a.trades.flatMap((t) => [t.market, t.id, t.taker_order_id, ...t.maker_orders.map((m) => m.order_id)]),
    ...a.earnings.map((e) => e.condition_id), ...a.activity.map((r) => r.transaction_hash)];
  const needles = [...new Set(secrets.flatMap((s) => [s, s.toLowerCase(), s.replace(/^0x/, '').toLowerCase()]))];
  const dump = await query<{ t: string }>(stack.db.adminUrl,
    `select concat_ws('|', ${TABLE_NAMES.map((t) => `(select json_agg(x)::text from stats.${t} x)`).join(', ')}) as t`);
  const health = await fetch(`${stack.cfg.apiUrl}/rest/v1/rpc/landing_health`, { headers: { apikey: stack.cfg.ANON_KEY } }).then((r) => r.text());
  const everything = [...runs.map((r) => r.stdout + r.stderr), dump[0]!.t, JSON.stringify(await landingStatsViaApi(stack)), health].join('\n');
  return { everything, needles };
}
