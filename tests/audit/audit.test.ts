// The audit end to end, as an owner and an auditor run it: reward transfers paid on a real chain
// (anvil, chain id 137), the fake Data API's REWARD rows carrying their transaction hashes, the
// writer's backfill committing each night in the log, then `npm run audit` disclosing a sample drawn
// from a checkpoint, checking it against the chain, attesting, publishing, and every reader seeing it.
// Each tampered case fails naming its night and its reason.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Address, Hash } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, todayUtc } from '../../contract/dates.ts';
import { TABLE_NAMES } from '../../contract/tables.ts';
import { ROOT_DIR } from '../../config/checkout.ts';
import type { Env } from '../../config/settings.ts';
import { startChain, type TestChain } from '../support/chain.ts';
import { query } from '../support/db.ts';
import { activity, earning, fakeAccount, FakePolymarket, writerEnv } from '../support/fake-polymarket.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { cliEnv, runCli, until } from '../support/writer.ts';

const AUDIT = (JSON.parse(readFileSync(path.join(ROOT_DIR, 'package.json'), 'utf8')) as { scripts: { audit: string } }).scripts.audit.split(' ').slice(1);
const VERIFY = (JSON.parse(readFileSync(path.join(ROOT_DIR, 'package.json'), 'utf8')) as { scripts: { verify: string } }).scripts.verify.split(' ').slice(1);

interface Run { code: number | null; stdout: string; stderr: string }

function node(args: string[], env: Env): Promise<Run> {
  const child = spawn(process.execPath, args, { cwd: ROOT_DIR, env: env as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
  child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

const today = todayUtc();
const night = (daysBack: number) => addDays(today, -daysBack);
const at = (date: string, hms = '00:00:05') => `${date}T${hms}Z`;
/** An amount with all six decimals, different for each night. */
const amountOf = (daysBack: number): bigint => 40_000_000n + BigInt(daysBack) * 1_234_567n;
const usd = (units: bigint) => Number(units) / 1e6;

let chain: TestChain;
let stack: TestStack;
let fake: FakePolymarket;
let env: Env;
let dir: string;
let wallet: Address;
let token: Address;
let distributor: Address;
const txs: Hash[] = [];
const NONCE = 'audit-2026-nonce-7f3a';

/** The good nights come first in the log, so a checkpoint taken after them draws only from them. */
const GOOD = Array.from({ length: 12 }, (_, i) => 26 - i); // T-26 … T-15
const ZERO = 20; // a night with no reward: a commitment to no transfer
const TWO = 18; // a night paid in two batches, the second by the sponsored rewards' payer at 00:15
const BAD = { cent: 14, otherWallet: 13, unlistedPayer: 12, otherToken: 11, failed: 10, dupA: 9, dupB: 8 } as const;
const IMPORTED = [30, 29]; // logged before commitments began

const audit = (args: string[]) => node([...AUDIT, ...args], env);
const file = (name: string) => path.join(dir, name);

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'audit-'));
  chain = await startChain({ start: at(night(40), '00:00:00') });
  const [, , otherKey, owner, stranger] = chain.accounts;
  void otherKey;
  token = await chain.deployToken();
  const otherToken = await chain.deployToken();
  distributor = await chain.deployDistributor();
  const sponsored = await chain.deployDistributor();
  const unlisted = await chain.deployDistributor();
  wallet = await chain.deployWallet1271(owner!.address);
  for (const d of [distributor, sponsored, unlisted]) await chain.mint(token, d, 10_000_000_000n);
  await chain.mint(otherToken, distributor, 10_000_000_000n);
  writeFileSync(file('payers.json'), JSON.stringify([
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

  stack = await startTestStack();
  fake = await new FakePolymarket(account).start();
  env = cliEnv(stack, { ...writerEnv(fake), ENV_FILE: '/dev/null' });
  const imported = IMPORTED.map((d) => JSON.stringify({ type: 'payout', date: night(d), usd: 12.5 })).join('\n');
  expect((await runCli(['import', '-'], cliEnv(stack, { ENV_FILE: '/dev/null' }), `${imported}\n`)).code).toBe(0);
  const backfill = await runCli(['backfill', '--since', night(Math.max(...GOOD))], env);
  expect(backfill.code, backfill.stdout + backfill.stderr).toBe(0);
}, 240_000);

afterAll(async () => {
  await fake?.stop();
  await stack?.destroy();
  await chain?.stop();
});

interface LoggedEntry { idx: number; date: string | null; entry: Record<string, unknown> }
const logged = async (): Promise<LoggedEntry[]> =>
  (await query<{ idx: string; date: string | null; entry: string }>(stack.db.adminUrl, `select idx, to_char(date, 'YYYY-MM-DD') as date, entry from stats.log_entry where not is_demo order by idx`))
    .map((r) => ({ idx: Number(r.idx), date: r.date, entry: JSON.parse(r.entry) as Record<string, unknown> }));

/** The checkpoint size right after the last good night: its tree holds no bad night to draw. */
async function goodCheckpoint(): Promise<number> {
  const entries = await logged();
  return entries.find((e) => e.date === night(Math.min(...GOOD)))!.idx + 1;
}

async function signedControl(signer = chain.accounts[3]!): Promise<string> {
  const message = await audit(['control-message', '--nonce', NONCE]);
  expect(message.code, message.stderr).toBe(0);
  return signer.signMessage({ message: message.stdout.replace(/\n$/, '') });
}

const check = (bundle: string, ...extra: string[]) =>
  audit(['check', bundle, '--rpc', chain.rpcUrl, '--site', stack.cfg.siteUrl, '--nonce', NONCE, '--payers', file('payers.json'), ...extra]);

describe('nights committed to their reward transfers', () => {
  it('logs the wallet once and a commitment with every night written since, never the wallet or a transaction', async () => {
    const entries = await logged();
    const wallets = entries.filter((e) => e.date === null);
    expect(wallets).toHaveLength(1);
    expect(wallets[0]!.entry).toMatchObject({ kind: 'wallet', replaces: null, wallet: expect.stringMatching(/^[A-Za-z0-9+/]{43}=$/) });
    for (const d of IMPORTED) expect(entries.find((e) => e.date === night(d))!.entry).not.toHaveProperty('transfers');
    for (const d of [...GOOD, ...Object.values(BAD)]) {
      const e = entries.filter((x) => x.date === night(d)).at(-1)!;
      expect(e.idx, night(d)).toBeGreaterThan(wallets[0]!.idx);
      expect(e.entry.transfers, night(d)).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    }
    const dump = await query<{ t: string }>(stack.db.adminUrl, `select concat_ws('|', ${TABLE_NAMES.map((t) => `(select json_agg(x)::text from stats.${t} x)`).join(', ')}) as t`);
    const stats = await fetch(new URL('/api/stats', stack.cfg.siteUrl)).then((r) => r.text());
    const everything = `${dump[0]!.t}\n${stats}`.toLowerCase();
    for (const needle of [wallet, ...txs]) expect(everything).not.toContain(needle.toLowerCase().slice(2));
  });

  it('keeps the openings in a private folder under the data directory', () => {
    const vault = path.join(stack.cfg.dataDir, 'reward-transfers');
    expect(statSync(vault).mode & 0o777).toBe(0o700);
    for (const name of ['wallets.jsonl', 'nights.jsonl']) expect(statSync(path.join(vault, name)).mode & 0o777).toBe(0o600);
    expect(readFileSync(path.join(vault, 'nights.jsonl'), 'utf8')).toContain(txs[0]!.toLowerCase());
  });
});

describe('an audit of a sample nobody chose', () => {
  let bundle: string;
  let size: number;

  it('prints the text the wallet signs, and nothing else', async () => {
    const message = await audit(['control-message', '--nonce', NONCE]);
    expect(message.code).toBe(0);
    expect(message.stdout.split('\n')).toEqual([
      'public-stats wallet control v1', expect.stringMatching(/^log \S+$/), expect.stringMatching(/^log-key \S+\+[0-9a-f]{8}\+\S+$/),
      `wallet ${wallet.toLowerCase()}`, `nonce ${NONCE}`, '',
    ]);
    expect((await audit(['control-message', '--nonce', 'short'])).code).toBe(1);
  });

  it('discloses the nights the checkpoint draws, and warns that the bundle names the wallet', async () => {
    size = await goodCheckpoint();
    bundle = file('sample.json');
    const run = await audit(['disclose', '--sample', '4', '--checkpoint', String(size), '--nonce', NONCE, '--signature', await signedControl(), '--out', bundle]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^wrote ${bundle}: 4 nights drawn from checkpoint ${size} `));
    expect(run.stderr).toMatch(/learns the wallet/);
    expect(statSync(bundle).mode & 0o777).toBe(0o600);
    const nights = (JSON.parse(readFileSync(bundle, 'utf8')) as { nights: { date: string }[] }).nights.map((n) => n.date);
    expect(nights).toHaveLength(4);
    for (const d of nights) expect(GOOD.map(night)).toContain(d);
  });

  it('checks every night against the log and the chain', async () => {
    const run = await check(bundle, '--state', file('auditor-state.json'), '--checkpoint', String(size));
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^checked 4 nights of \S+ against checkpoint \d+ and chain 137: 4 matched$/);
    expect(lines.slice(1)).toHaveLength(4);
    for (const line of lines.slice(1)) expect(line).toMatch(/^ok \d{4}-\d{2}-\d{2} entry \d+: \d transfers?, \d+\.\d{2} USD as published$/);
    expect(run.stdout.toLowerCase()).not.toContain(wallet.toLowerCase());
    for (const tx of txs) expect(run.stdout).not.toContain(tx);
  });

  it('attests, publishes, and every reader sees it', async () => {
    const keygen = await audit(['keygen', '--name', 'auditor.example', '--out', file('auditor.key')]);
    expect(keygen.code, keygen.stderr).toBe(0);
    const vkey = keygen.stdout.trim().split('\n').at(-1)!;
    expect(vkey).toMatch(/^auditor\.example\+[0-9a-f]{8}\+/);
    const attest = await audit(['attest', bundle, '--rpc', chain.rpcUrl, '--site', stack.cfg.siteUrl, '--nonce', NONCE, '--payers', file('payers.json'),
      '--key', file('auditor.key'), '--out', file('attestation.txt')]);
    expect(attest.code, attest.stdout + attest.stderr).toBe(0);
    const note = readFileSync(file('attestation.txt'), 'utf8');
    expect(note).toMatch(new RegExp(`^public-stats audit attestation v1\\norigin \\S+\\ncheckpoint ${size} \\S+\\nchain 137\\nnights [\\d,-]+\\nmatched 4\\ndate ${today}\\nauditor ${vkey.replace(/[+]/g, '\\+')}\\n\\n\u2014 auditor\\.example \\S+\\n$`));
    expect(note.toLowerCase()).not.toContain(wallet.toLowerCase().slice(2));

    const published = await audit(['publish', file('attestation.txt')]);
    expect(published.code, published.stderr).toBe(0);
    expect(published.stdout).toMatch(/^published the attestation by auditor\.example of \d{4}-\d{2}-\d{2}: 4 of 4 nights matched against checkpoint \d+\n$/);
    expect((await audit(['publish', file('attestation.txt')])).code).toBe(1);

    // Readers see it once the caches they share have turned over (the records' TTL and stale-while-revalidate).
    const read = async <T>(route: string, parse: (r: Response) => Promise<T>) => parse(await fetch(new URL(route, stack.cfg.siteUrl)));
    const audits = await until('the attestation at /log/audits', async () =>
      (await read('/log/audits', (r) => r.json() as Promise<{ audits: { note: string }[] }>)).audits.find((a) => a.note === note) && true, 60_000);
    expect(audits).toBe(true);
    const stats = await until('the audit in /api/stats', async () => (await read('/api/stats', (r) => r.json() as Promise<{ audit: Record<string, unknown> | null }>)).audit, 60_000);
    expect(stats).toMatchObject({ date: today, auditor: 'auditor.example', nights_checked: 4, nights_matched: 4, checkpoint_size: size });
    const page = await until('the audit on the page', async () => { const text = await read('/', (r) => r.text()); return text.includes('auditor.example') && text; }, 60_000);
    expect(page).toMatch(/4 of 4 nights/);

    const logKey = (await audit(['control-message', '--nonce', NONCE])).stdout.split('\n')[2]!.slice('log-key '.length);
    writeFileSync(file('trusting.policy'), `log ${logKey}\nauditor ${vkey}\nquorum none\n`);
    writeFileSync(file('other.policy'), `log ${logKey}\nquorum none\n`);
    const counted = await node([...VERIFY, '--site', stack.cfg.siteUrl, '--policy', file('trusting.policy')], env);
    expect(counted.code, counted.stdout + counted.stderr).toBe(0);
    expect(counted.stdout).toMatch(/audit by auditor\.example on \d{4}-\d{2}-\d{2}: 4 of 4 nights matched against checkpoint \d+/);
    const unlisted = await node([...VERIFY, '--site', stack.cfg.siteUrl, '--policy', file('other.policy')], env);
    expect(unlisted.code, unlisted.stdout + unlisted.stderr).toBe(0);
    expect(unlisted.stdout).toMatch(/attestation by auditor\.example \(key [^)]+\) is not by an auditor the policy lists: not counted/);
  }, 120_000);

  it('fails a bundle whose nights are not the ones the checkpoint draws', async () => {
    const sample = JSON.parse(readFileSync(bundle, 'utf8')) as { nights: { date: string }[] };
    const drawn = sample.nights.map((n) => n.date);
    const swapped = [...drawn.slice(1), GOOD.map(night).find((d) => !drawn.includes(d) && d !== night(ZERO))!].sort();
    const named = file('named.json');
    expect((await audit(['disclose', '--nights', swapped.join(','), '--nonce', NONCE, '--signature', await signedControl(), '--out', named])).code).toBe(0);
    const forged = { ...JSON.parse(readFileSync(named, 'utf8')) as object, sample: { k: 4, checkpoint: size } };
    writeFileSync(file('forged-sample.json'), JSON.stringify(forged));
    const run = await check(file('forged-sample.json'));
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(new RegExp(`FAIL the nights opened \\(${swapped.join(', ')}\\) are not the 4 that checkpoint ${size} draws \\(${drawn.join(', ')}\\)`));
  });

  it('fails a wrong salt, a night without a commitment, and a control signature by another key', async () => {
    const good = JSON.parse(readFileSync(bundle, 'utf8')) as { nights: { date: string; log_index: number; salt: string; payload: { date: string } }[]; control: { signature: string } };
    const [first, second] = good.nights;
    const entries = await logged();
    const old = entries.find((e) => e.date === night(IMPORTED[0]!))!;
    const tampered = {
      ...good,
      nights: [
        { ...first!, salt: Buffer.alloc(32, 7).toString('base64') },
        { ...second!, date: old.date, log_index: old.idx, payload: { ...second!.payload, date: old.date } },
        ...good.nights.slice(2),
      ],
    };
    writeFileSync(file('tampered.json'), JSON.stringify(tampered));
    const run = await check(file('tampered.json'));
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`FAIL ${first!.date} entry ${first!.log_index}: the salt and payload do not give the commitment in its entry`);
    expect(run.stdout).toMatch(new RegExp(`FAIL ${old.date} entry ${old.idx}: its entry carries no commitment to reward transfers`));

    const otherKey = { ...good, control: { ...good.control, signature: await signedControl(chain.accounts[2]) } };
    writeFileSync(file('other-key.json'), JSON.stringify(otherKey));
    const refused = await check(file('other-key.json'));
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('FAIL the control signature is not the wallet\'s: neither the address recovered from it (EOA) nor the wallet\'s EIP-1271 isValidSignature accepts it on chain 137');
    expect(refused.stdout).toMatch(/: 0 matched\n/);
    const attest = await audit(['attest', file('other-key.json'), '--rpc', chain.rpcUrl, '--site', stack.cfg.siteUrl, '--nonce', NONCE, '--payers', file('payers.json'),
      '--key', file('auditor.key'), '--out', file('refused.txt')]);
    expect(attest.code).toBe(1);
    expect(attest.stdout).toContain('no attestation written');
  });

  it('fails a log that forks from the auditor\'s earlier state', async () => {
    const state = JSON.parse(readFileSync(file('auditor-state.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(file('forked-state.json'), JSON.stringify({ ...state, root: Buffer.alloc(32, 1).toString('base64') }));
    const run = await check(bundle, '--state', file('forked-state.json'));
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/FAIL the site's log is a fork of the one in \S+forked-state\.json: checkpoint \d+ is not consistent with checkpoint \d+ seen on /);
  });
});

describe('nights that do not match the chain', () => {
  it('fails each night naming its reason', async () => {
    const out = file('bad.json');
    const dates = Object.values(BAD).map(night).sort();
    const disclosed = await audit(['disclose', '--nights', dates.join(','), '--nonce', NONCE, '--signature', await signedControl(), '--out', out]);
    expect(disclosed.code, disclosed.stderr).toBe(0);
    const run = await check(out);
    expect(run.code).toBe(1);
    const line = (d: number) => run.stdout.split('\n').find((l) => l.startsWith(`FAIL ${night(d)} `)) ?? `no line for ${night(d)}`;
    const paid = (units: bigint) => `${units / 1_000_000n}.${String((units % 1_000_000n + 5_000n) / 10_000n).padStart(2, '0')}`;
    expect(line(BAD.cent)).toMatch(new RegExp(`: the transfers add up to ${paid(amountOf(BAD.cent))} USD \\(${amountOf(BAD.cent)} base units\\), not the published ${paid(amountOf(BAD.cent) + 10_000n)} USD$`));
    expect(line(BAD.otherWallet)).toMatch(/: transfer 1 of 1: its reward Transfer of that amount pays another wallet$/);
    expect(line(BAD.unlistedPayer)).toMatch(/: transfer 1 of 1: its Transfer to the wallet comes from a sender the payer list does not name for \S+$/);
    expect(line(BAD.otherToken)).toMatch(/: transfer 1 of 1: its Transfer to the wallet is in a token the payer list does not name for \S+$/);
    expect(line(BAD.failed)).toMatch(/: transfer 1 of 1: its transaction failed on the chain \(status 0\)$/);
    expect(line(BAD.dupA)).toContain(`transfer 1 of 1: its transaction is claimed by nights ${night(BAD.dupA)} and ${night(BAD.dupB)}`);
    expect(line(BAD.dupB)).toContain(`transfer 1 of 1: its transaction is claimed by nights ${night(BAD.dupA)} and ${night(BAD.dupB)}`);
    expect(run.stdout).toMatch(/: 0 matched\n/);
  });
});
