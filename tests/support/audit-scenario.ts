// The audit tests' scenario: reward transfers paid on a real chain (anvil, chain id 137), the fake Data
// API's REWARD rows carrying their transaction hashes, and the writer's backfill committing each night
// in the log; good nights first, then one of each kind that does not match the chain.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Address, Hash } from 'viem';
import { expect } from 'vitest';
import { newAuditorKey } from '../../contract/audit/attestation.ts';
import { nonceSha256 } from '../../contract/audit/opening.ts';
import { addDays, todayUtc } from '../../contract/dates.ts';
import { noteVerifierKey } from '../../contract/log-key.ts';
import { logOrigin } from '../../contract/paths.ts';
import { ROOT_DIR } from '../../config/checkout.ts';
import type { Env } from '../../config/settings.ts';
import { startChain, type TestChain } from './chain.ts';
import { query } from './db.ts';
import { activity, earning, fakeAccount } from './fake-polymarket-account.ts';
import { FakePolymarket, writerEnv } from './fake-polymarket.ts';
import { startTestStack, type TestStack } from './stack.ts';
import { startWitness, type Running } from './witness.ts';
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

/** An auditor's nonce: 32 hex digits, fresh for each audit. */
export const newNonce = (): string => Array.from({ length: 32 }, () => '0123456789abcdef'[Math.floor(Math.random() * 16)]).join('');

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
  /** The witness that cosigns the log, and the owner's policy (LOG_POLICY) naming it and the listed auditor. */
  witness: Running;
  policy: string;
  /** The auditor the policy lists: its key file (auditor.key in dir) and verifier key. */
  auditor: { keyFile: string; vkey: string };
}

/** With `bad: false` the log holds good nights only, so any checkpoint draws only good ones. */
export async function startAuditScenario({ bad = true } = {}): Promise<AuditScenario> {
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

  /** One night of each kind that does not match the chain. */
  async function payBadNights(): Promise<void> {
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
  }

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
  if (bad) await payBadNights();
  const stack = await startTestStack();
  const fake = await new FakePolymarket(account).start();
  // A witness trusting the log, and the owner's policy: the witness, its quorum, and the one auditor listed.
  const logVkey = await noteVerifierKey(logOrigin(stack.cfg, false), Buffer.from(stack.cfg.LOG_PUBLIC_KEY, 'base64url'));
  writeFileSync(path.join(dir, 'trust.policy'), `log ${logVkey}\nquorum none\n`);
  const witness = await startWitness({ key: path.join(dir, 'alpha.key'), name: 'witness.test/alpha', policy: path.join(dir, 'trust.policy'), state: path.join(dir, 'alpha-state') });
  const auditorKey = await newAuditorKey('auditor.example');
  const auditor = { keyFile: path.join(dir, 'auditor.key'), vkey: auditorKey.verifierKey };
  writeFileSync(auditor.keyFile, auditorKey.text, { mode: 0o600 });
  const policy = path.join(dir, 'log.policy');
  writeFileSync(policy, `log ${logVkey}\nwitness alpha ${witness.vkey} ${witness.url}\nquorum alpha\nauditor ${auditor.vkey}\n`);
  const env = cliEnv(stack, { ...writerEnv(fake), ENV_FILE: '/dev/null', LOG_POLICY: policy });
  const imported = IMPORTED.map((d) => JSON.stringify({ type: 'payout', date: night(d), usd: 12.5 })).join('\n');
  const importing = await runCli(['import', '-'], cliEnv(stack, { ENV_FILE: '/dev/null', LOG_POLICY: policy }), `${imported}\n`);
  expect(importing.code, importing.stdout + importing.stderr).toBe(0);
  const backfill = await runCli(['backfill', '--since', night(Math.max(...GOOD))], env);
  expect(backfill.code, backfill.stdout + backfill.stderr).toBe(0);
  return { chain, stack, fake, env, dir, wallet, txs, witness, policy, auditor };
}

export async function stopAuditScenario({ chain, stack, fake, witness }: Partial<AuditScenario>): Promise<void> {
  await witness?.stop();
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
  const signedSizes = async (): Promise<number[]> =>
    (await query<{ size: string }>(scenario().stack.db.adminUrl, 'select size from stats.log_checkpoint where not is_demo order by size')).map((r) => Number(r.size));

  /** The latest checkpoint the witness cosigned: the one an auditor names to the owner. */
  async function goodCheckpoint(): Promise<number> {
    const [row] = await query<{ size: string | null }>(scenario().stack.db.adminUrl, 'select max(size) as size from stats.log_witnessed');
    expect(row?.size, 'no checkpoint was cosigned').not.toBeNull();
    return Number(row!.size);
  }

  /** `writer sign`: signs the log's new entries (an opening, say) and asks the witness to cosign. */
  async function sign(): Promise<void> {
    const signed = await runCli(['sign'], scenario().env);
    expect(signed.code, signed.stdout + signed.stderr).toBe(0);
  }

  /** The owner opens an audit for the listed auditor (or `auditor`), and the writer signs it; returns the opening's run. */
  async function open(nonce: string, chosen: string[], auditor = scenario().auditor.vkey): Promise<Run> {
    const run = await audit(['open', '--auditor', auditor, '--nonce-sha256', nonceSha256(nonce), ...chosen]);
    if (run.code === 0) await sign();
    return run;
  }

  async function signedControl(nonce: string, signer = scenario().chain.accounts[3]!): Promise<string> {
    const message = await audit(['control-message', '--nonce', nonce]);
    expect(message.code, message.stderr).toBe(0);
    return signer.signMessage({ message: message.stdout.replace(/\n$/, '') });
  }

  /** The owner's bundle for the audit the nonce opened. */
  async function disclose(nonce: string, out: string): Promise<Run> {
    return audit(['disclose', '--nonce', nonce, '--signature', await signedControl(nonce), '--out', out]);
  }

  const checkArgs = (nonce: string) => ['--rpc', scenario().chain.rpcUrl, '--site', scenario().stack.cfg.siteUrl, '--nonce', nonce, '--payers', file('payers.json')];
  const check = (bundle: string, nonce: string, ...extra: string[]) => audit(['check', bundle, ...checkArgs(nonce), ...extra]);
  const attest = (bundle: string, nonce: string, out: string, ...extra: string[]) => audit(['attest', bundle, ...checkArgs(nonce), '--key', scenario().auditor.keyFile, '--out', out, ...extra]);

  return { audit, file, logged, signedSizes, goodCheckpoint, sign, open, signedControl, disclose, check, attest };
}
