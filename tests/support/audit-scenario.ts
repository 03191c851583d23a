// The audit tests' scenario: reward transfers paid on a real chain (anvil, chain id 137), the fake Data
// API's REWARD rows carrying their transaction hashes, and the writer's backfill committing each night
// in the log; good nights first, then one of each kind that does not match the chain.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Address, Hash } from 'viem';
import { expect } from 'vitest';
import { addDays, todayUtc } from '../../contract/dates.ts';
import { ROOT_DIR } from '../../config/checkout.ts';
import type { Env } from '../../config/settings.ts';
import { startChain, type TestChain } from './chain.ts';
import { query } from './db.ts';
import { activity, earning, fakeAccount } from './fake-polymarket-account.ts';
import { FakePolymarket, writerEnv } from './fake-polymarket.ts';
import { startTestStack, type TestStack } from './stack.ts';
import { cliEnv, runCli } from './writer.ts';

export const AUDIT = (JSON.parse(readFileSync(path.join(ROOT_DIR, 'package.json'), 'utf8')) as { scripts: { audit: string } }).scripts.audit.split(' ').slice(1);
export const VERIFY = (JSON.parse(readFileSync(path.join(ROOT_DIR, 'package.json'), 'utf8')) as { scripts: { verify: string } }).scripts.verify.split(' ').slice(1);

export interface Run { code: number | null; stdout: string; stderr: string }

export function node(args: string[], env: Env): Promise<Run> {
  const child = spawn(process.execPath, args, { cwd: ROOT_DIR, env: env as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
  child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

export const today = todayUtc();
export const night = (daysBack: number) => addDays(today, -daysBack);
const at = (date: string, hms = '00:00:05') => `${date}T${hms}Z`;
/** An amount with all six decimals, different for each night. */
export const amountOf = (daysBack: number): bigint => 40_000_000n + BigInt(daysBack) * 1_234_567n;
const usd = (units: bigint) => Number(units) / 1e6;

export const NONCE = 'audit-2026-nonce-7f3a';

/** The good nights come first in the log, so a checkpoint taken after them draws only from them. */
export const GOOD = Array.from({ length: 12 }, (_, i) => 26 - i); // T-26 … T-15
export const ZERO = 20; // a night with no reward: a commitment to no transfer
export const TWO = 18; // a night paid in two batches, the second by the sponsored rewards' payer at 00:15
export const BAD = { cent: 14, otherWallet: 13, unlistedPayer: 12, otherToken: 11, failed: 10, dupA: 9, dupB: 8 } as const;
export const IMPORTED = [30, 29]; // logged before commitments began

export interface AuditScenario {
  chain: TestChain;
  stack: TestStack;
  fake: FakePolymarket;
  /** The writer's environment, reading the fake; `npm run audit` runs in it too. */
  env: Env;
  /** A scratch folder, holding the payer list `payers.json`. */
  dir: string;
  /** The wallet the rewards are paid to: an EIP-1271 contract owned by chain.accounts[3]. */
  wallet: Address;
  /** The hashes of every reward transfer paid to the wallet. */
  txs: Hash[];
}

export async function startAuditScenario(): Promise<AuditScenario> {
  const txs: Hash[] = [];
  const dir = mkdtempSync(path.join(tmpdir(), 'audit-'));
  const chain = await startChain({ start: at(night(40), '00:00:00') });
  const [, , otherKey, owner, stranger] = chain.accounts;
  void otherKey;
  const token = await chain.deployToken();
  const otherToken = await chain.deployToken();
  const distributor = await chain.deployDistributor();
  const sponsored = await chain.deployDistributor();
  const unlisted = await chain.deployDistributor();
  const wallet = await chain.deployWallet1271(owner!.address);
  for (const d of [distributor, sponsored, unlisted]) await chain.mint(token, d, 10_000_000_000n);
  await chain.mint(otherToken, distributor, 10_000_000_000n);
  writeFileSync(path.join(dir, 'payers.json'), JSON.stringify([
    { chain_id: 137, token, payer: distributor, from: '2020-01-01', until: null, source: 'test: the main reward distributor' },
    { chain_id: 137, token, payer: sponsored, from: '2020-01-01', until: null, source: 'test: the sponsored rewards contract' },
  ]));

  const account = fakeAccount({ funder: wallet.toLowerCase(), address: owner!.address.toLowerCase(), signatureType: 2 });
  const reward = (tx: Hash, timestamp: bigint, units: bigint) =>
    account.activity.push(activity({ type: 'REWARD', timestamp: Number(timestamp), usdc_size: usd(units), transaction_hash: tx }, account));
  const earn = (daysBack: number, units: bigint) => account.earnings.push(earning(addDays(night(daysBack), -1), daysBack, usd(units)));

  for (const d of GOOD) {
    if (d === ZERO) continue;
    const paid = await chain.payAt(at(night(d)), token, distributor, [{ to: wallet, amount: amountOf(d) }]);
    reward(paid.hash, paid.timestamp, amountOf(d));
    txs.push(paid.hash);
    if (d === TWO) {
      const second = await chain.payAt(at(night(d), '00:15:00'), token, sponsored, [{ to: wallet, amount: 2_500_001n }]);
      reward(second.hash, second.timestamp, 2_500_001n);
      txs.push(second.hash);
      earn(d, amountOf(d) + 2_500_001n);
    } else earn(d, amountOf(d));
  }
  // One cent more published than paid.
  const cent = await chain.payAt(at(night(BAD.cent)), token, distributor, [{ to: wallet, amount: amountOf(BAD.cent) }]);
  reward(cent.hash, cent.timestamp, amountOf(BAD.cent));
  earn(BAD.cent, amountOf(BAD.cent) + 10_000n);
  // A REWARD row whose transaction paid someone else.
  const elsewhere = await chain.payAt(at(night(BAD.otherWallet)), token, distributor, [{ to: stranger!.address, amount: amountOf(BAD.otherWallet) }]);
  reward(elsewhere.hash, elsewhere.timestamp, amountOf(BAD.otherWallet));
  earn(BAD.otherWallet, amountOf(BAD.otherWallet));
  // Paid by a sender the payer list does not name, and in a token it does not name.
  const rogue = await chain.payAt(at(night(BAD.unlistedPayer)), token, unlisted, [{ to: wallet, amount: amountOf(BAD.unlistedPayer) }]);
  reward(rogue.hash, rogue.timestamp, amountOf(BAD.unlistedPayer));
  earn(BAD.unlistedPayer, amountOf(BAD.unlistedPayer));
  const foreign = await chain.payAt(at(night(BAD.otherToken)), otherToken, distributor, [{ to: wallet, amount: amountOf(BAD.otherToken) }]);
  reward(foreign.hash, foreign.timestamp, amountOf(BAD.otherToken));
  earn(BAD.otherToken, amountOf(BAD.otherToken));
  // A transaction that failed on the chain.
  const failed = await chain.failedPayAt(at(night(BAD.failed)), token, unlisted, [{ to: wallet, amount: 20_000_000_000n }]);
  reward(failed.hash, failed.timestamp, amountOf(BAD.failed));
  earn(BAD.failed, amountOf(BAD.failed));
  // One transaction claimed by two nights.
  const shared = await chain.payAt(at(night(BAD.dupA)), token, distributor, [{ to: wallet, amount: amountOf(BAD.dupA) }]);
  reward(shared.hash, shared.timestamp, amountOf(BAD.dupA));
  reward(shared.hash, shared.timestamp + 86_400n, amountOf(BAD.dupA));
  earn(BAD.dupA, amountOf(BAD.dupA));
  earn(BAD.dupB, amountOf(BAD.dupA));

  const stack = await startTestStack();
  const fake = await new FakePolymarket(account).start();
  const env = cliEnv(stack, { ...writerEnv(fake), ENV_FILE: '/dev/null' });
  const imported = IMPORTED.map((d) => JSON.stringify({ type: 'payout', date: night(d), usd: 12.5 })).join('\n');
  expect((await runCli(['import', '-'], cliEnv(stack, { ENV_FILE: '/dev/null' }), `${imported}\n`)).code).toBe(0);
  const backfill = await runCli(['backfill', '--since', night(Math.max(...GOOD))], env);
  expect(backfill.code, backfill.stdout + backfill.stderr).toBe(0);
  return { chain, stack, fake, env, dir, wallet, txs };
}

export async function stopAuditScenario({ chain, stack, fake }: Partial<AuditScenario>): Promise<void> {
  await fake?.stop();
  await stack?.destroy();
  await chain?.stop();
}

interface LoggedEntry { idx: number; date: string | null; entry: Record<string, unknown> }

/** `npm run audit` and what it reads, against the scenario `scenario()` gives once it has started. */
export function auditTools(scenario: () => AuditScenario) {
  const audit = (args: string[]) => node([...AUDIT, ...args], scenario().env);
  const file = (name: string) => path.join(scenario().dir, name);
  const logged = async (): Promise<LoggedEntry[]> =>
    (await query<{ idx: string; date: string | null; entry: string }>(scenario().stack.db.adminUrl, `select idx, to_char(date, 'YYYY-MM-DD') as date, entry from stats.log_entry where not is_demo order by idx`))
      .map((r) => ({ idx: Number(r.idx), date: r.date, entry: JSON.parse(r.entry) as Record<string, unknown> }));

  /** The checkpoint size right after the last good night: its tree holds no bad night to draw. */
  async function goodCheckpoint(): Promise<number> {
    const entries = await logged();
    return entries.find((e) => e.date === night(Math.min(...GOOD)))!.idx + 1;
  }

  async function signedControl(signer = scenario().chain.accounts[3]!): Promise<string> {
    const message = await audit(['control-message', '--nonce', NONCE]);
    expect(message.code, message.stderr).toBe(0);
    return signer.signMessage({ message: message.stdout.replace(/\n$/, '') });
  }

  const check = (bundle: string, ...extra: string[]) =>
    audit(['check', bundle, '--rpc', scenario().chain.rpcUrl, '--site', scenario().stack.cfg.siteUrl, '--nonce', NONCE, '--payers', file('payers.json'), ...extra]);

  return { audit, file, logged, goodCheckpoint, signedControl, check };
}
