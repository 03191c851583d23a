// The openings of the commitments follow the database, sealed under OPENINGS_KEY. A writer that kept
// them in files (as writers once did) moves them in on its first start; a standby with a data
// directory of its own takes over and keeps the wallet in force (no wallet entry of its own), and
// `npm run audit -- disclose`, run with the standby's configuration, opens the first writer's nights;
// so does a database restored from a backup. The rows open nothing without the key, and nothing but
// their own commitment.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newAuditorKey } from '../../contract/audit/attestation.ts';
import { nightCommitment, nightPayload, walletCommitment } from '../../contract/audit/commitment.ts';
import { nonceSha256 } from '../../contract/audit/opening.ts';
import { OpeningsKey } from '../../contract/audit/transfer-vault.ts';
import { addDays, todayUtc } from '../../contract/dates.ts';
import { TABLE_NAMES } from '../../contract/tables.ts';
import type { Env } from '../../config/settings.ts';
import { databaseVault } from '../../audit/openings.ts';
import { dump, restore } from '../../stack/backup.ts';
import { AUDIT, node, type Run } from '../support/audit-scenario.ts';
import { query, withClient } from '../support/db.ts';
import { activity, earning, fakeAccount } from '../support/fake-polymarket-account.ts';
import { FakePolymarket, writerEnv } from '../support/fake-polymarket.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { cliEnv, runCli, startWriterRun, until, type WriterRun } from '../support/writer.ts';

const T = todayUtc();
const night = (daysBack: number) => addDays(T, -daysBack);
const units = (daysBack: number) => 30_000_000n + BigInt(daysBack) * 1_111_111n;
const LEGACY = 10; // committed by a writer that kept its openings in files
const BACKFILLED = [9, 8, 7, 6, 5, 4, 2, 1, 0];
const REPLACED = 'this writer cannot open the wallet commitment in force: committing the wallet anew (a wallet entry in the log)';

const account = fakeAccount();
const txs: string[] = [];
function reward(daysBack: number, amount: bigint, hms = '00:00:05'): void {
  const row = activity({ type: 'REWARD', timestamp: Date.parse(`${night(daysBack)}T${hms}Z`) / 1000, usdc_size: Number(amount) / 1e6, transaction_hash: `0x${randomBytes(32).toString('hex')}` }, account);
  account.activity.push(row);
  txs.push(row.transaction_hash);
}
for (const d of BACKFILLED) {
  reward(d, units(d));
  account.earnings.push(earning(addDays(night(d), -1), d, Number(units(d)) / 1e6));
}

let stack: TestStack;
let fake: FakePolymarket;
let dir: string;
let envA: Env;
let envB: Env;
const started: WriterRun[] = [];
const legacy = { wallet: '', night: '', salts: [] as string[] };

const audit = (args: string[], env: Env): Promise<Run> => node([...AUDIT, ...args], env);
const walletEntries = async () => (await query<{ entry: string }>(stack.db.adminUrl, `select entry from stats.log_entry where not is_demo and entry::jsonb ->> 'kind' = 'wallet' order by idx`)).map((r) => JSON.parse(r.entry) as Record<string, unknown>);
const walletRows = async () => (await query<{ commitment: string }>(stack.db.adminUrl, 'select commitment from stats.wallet_commitment order by recorded_at')).map((r) => r.commitment);
const nightCommitmentOf = async (daysBack: number) => (await query<{ commitment: string }>(stack.db.adminUrl, 'select commitment from stats.night_transfers where date = $1', [night(daysBack)]))[0]?.commitment;
const said = (lines: Record<string, unknown>[], msg: string) => lines.filter((l) => l.msg === msg);

/** Writes the files an earlier writer kept, and the rows it committed from them: the wallet in force and one night. */
async function legacyWriter(dataDir: string): Promise<void> {
  const folder = path.join(dataDir, 'reward-transfers');
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const [walletSalt, nightSalt] = [randomBytes(32), randomBytes(32)];
  legacy.wallet = walletCommitment(walletSalt, account.funder);
  const payload = nightPayload(night(LEGACY), account.funder, legacy.wallet, [{ tx: `0x${randomBytes(32).toString('hex')}`, amount: units(LEGACY) }]);
  legacy.night = nightCommitment(nightSalt, payload);
  legacy.salts = [walletSalt.toString('base64'), nightSalt.toString('base64')];
  txs.push(payload.transfers[0]!.tx);
  writeFileSync(path.join(folder, 'wallets.jsonl'), `${JSON.stringify({ wallet: account.funder, salt: legacy.salts[0], commitment: legacy.wallet, recorded_at: new Date().toISOString() })}\n`, { mode: 0o600 });
  writeFileSync(path.join(folder, 'nights.jsonl'), `${JSON.stringify({ date: night(LEGACY), salt: legacy.salts[1], payload, commitment: legacy.night })}\n{"damaged\n`, { mode: 0o600 });
  await withClient(stack.db.adminUrl, async (c) => {
    await c.query('insert into stats.wallet_commitment (commitment) values ($1)', [legacy.wallet]);
    await c.query('insert into stats.night_transfers (date, commitment) values ($1, $2)', [night(LEGACY), legacy.night]);
    await c.query('insert into stats.payout (date, usd) values ($1, $2)', [night(LEGACY), Number(units(LEGACY)) / 1e6]);
  });
}

beforeAll(async () => {
  stack = await startTestStack();
  fake = await new FakePolymarket(account).start();
  dir = mkdtempSync(path.join(tmpdir(), 'openings-'));
  const writers = (name: string) => cliEnv(stack, {
    ...writerEnv(fake), ENV_FILE: '/dev/null', DATA_DIR: path.join(dir, name), WRITER_INTERVAL_MINUTES: String(2 / 60), WRITER_HEARTBEAT_SECONDS: '1',
  });
  [envA, envB] = [writers('a'), writers('b')];
  await legacyWriter(envA.DATA_DIR!);
}, 120_000);

afterAll(async () => {
  for (const w of started) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
  await Promise.all(started.map((w) => w.result));
  await fake?.stop();
  await stack?.destroy();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the openings in the database', () => {
  it('are moved in from a writer\'s files on its first start, which keeps the wallet in force, and the files renamed once committed', async () => {
    const run = await runCli(['backfill', '--since', night(Math.max(...BACKFILLED))], envA);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const folder = path.join(envA.DATA_DIR!, 'reward-transfers');
    expect(said(run.lines, 'moved the openings kept in files into the database, sealed under OPENINGS_KEY (the files are renamed *.moved once this write has committed)'))
      .toEqual([expect.objectContaining({ dir: folder, wallets: 1, nights: 1 })]);
    expect(said(run.lines, 'an opening in the files cannot be moved into the database: it opens nothing')).toEqual([expect.objectContaining({ line: 2 })]);
    expect(said(run.lines, 'the openings the files held are all in the database: renamed the files *.moved (delete them once a backup holds the database)')).toHaveLength(1);
    expect(said(run.lines, REPLACED)).toEqual([]);
    for (const name of ['wallets.jsonl', 'nights.jsonl']) {
      expect(existsSync(path.join(folder, name))).toBe(false);
      expect(readFileSync(path.join(folder, `${name}.moved`), 'utf8')).toContain(name === 'wallets.jsonl' ? legacy.wallet : legacy.night);
    }
    expect(await walletRows()).toEqual([legacy.wallet]);
    expect(await walletEntries()).toEqual([{ kind: 'wallet', replaces: null, wallet: legacy.wallet }]);
    const vault = databaseVault(stack.db.adminUrl, envA.OPENINGS_KEY);
    expect((await vault.openNight(legacy.night))?.salt).toBe(legacy.salts[1]);
    for (const d of BACKFILLED) expect((await vault.openNight((await nightCommitmentOf(d))!))?.payload.wallet_commitment, night(d)).toBe(legacy.wallet);
  }, 120_000);

  it('are held by a standby with a data directory of its own: it takes over and adds no wallet entry', async () => {
    const a = startWriterRun('writer-a', envA);
    started.push(a);
    await until('the first writer to write', () => a.lines().find((l) => l.msg === 'cycle done'));
    const b = startWriterRun('writer-b', envB);
    started.push(b);
    await until('the standby to wait', () => b.lines().find((l) => l.msg === 'another writer holds the writer lock: waiting as standby'));
    a.child.kill('SIGKILL');
    await a.result;
    const before = await nightCommitmentOf(0);
    // Tonight gains a transfer after the first writer died: only the standby can commit it.
    reward(0, 1_500_000n, '00:20:00');
    await until('the standby to commit tonight anew', async () => (await nightCommitmentOf(0)) !== before && b.lines().some((l) => l.msg === 'holding the writer lock: this writer writes'), 60_000);
    b.child.kill('SIGTERM');
    await b.result;
    expect(said(b.lines(), REPLACED)).toEqual([]);
    expect(await walletRows()).toEqual([legacy.wallet]);
    expect(await walletEntries()).toHaveLength(1);
    const tonight = await databaseVault(stack.db.adminUrl, envB.OPENINGS_KEY).openNight((await nightCommitmentOf(0))!);
    expect(tonight?.payload).toMatchObject({ wallet_commitment: legacy.wallet, transfers: expect.arrayContaining([expect.objectContaining({ tx: txs.at(-1)!.toLowerCase() })]) });
    // The standby kept nothing on its own disk.
    expect(existsSync(path.join(envB.DATA_DIR!, 'reward-transfers'))).toBe(false);
  }, 120_000);
});

describe('a disclosure', () => {
  const nonce = randomBytes(16).toString('hex');
  const named = [night(LEGACY), night(9), night(5)];
  const disclose = (env: Env, out: string) => audit(['disclose', '--nonce', nonce, '--signature', `0x${'ab'.repeat(65)}`, '--out', path.join(dir, out)], env);
  const bundleOf = (out: string) => JSON.parse(readFileSync(path.join(dir, out), 'utf8')) as { sections: { wallet: { commitment: string; salt: string }; nights: { date: string; salt: string; payload: unknown }[] }[] };

  it('opens the first writer\'s nights from the standby\'s configuration', async () => {
    const [{ size }] = await query<{ size: string }>(stack.db.adminUrl, 'select max(size) as size from stats.log_checkpoint where not is_demo') as [{ size: string }];
    const auditor = await newAuditorKey('auditor.example');
    const opened = await audit(['open', '--auditor', auditor.verifierKey, '--nonce-sha256', nonceSha256(nonce), '--checkpoint', size, '--nights', named.join(',')], envB);
    expect(opened.code, opened.stderr).toBe(0);
    const signed = await runCli(['sign'], envB);
    expect(signed.code, signed.stdout + signed.stderr).toBe(0);
    const run = await disclose(envB, 'standby.json');
    expect(run.code, run.stderr).toBe(0);
    const bundle = bundleOf('standby.json');
    expect(bundle.sections).toHaveLength(1);
    expect(bundle.sections[0]!.wallet).toMatchObject({ commitment: legacy.wallet, salt: legacy.salts[0] });
    expect(bundle.sections[0]!.nights.map((n) => n.date)).toEqual(named);
    expect(bundle.sections[0]!.nights[0]!.salt).toBe(legacy.salts[1]);
  }, 120_000);

  it('opens the same nights from a database restored from a backup', async () => {
    const file = path.join(dir, 'stats.dump');
    dump(stack.db.adminUrl, file);
    expect(existsSync(`${file}.reward-transfers.json`)).toBe(false);
    await withClient(stack.db.adminUrl, (c) => c.query('create database restored'));
    const restored = stack.db.adminUrl.replace(/\/postgres$/, '/restored');
    await restore(restored, file);
    const run = await disclose({ ...envB, DATABASE_URL: restored }, 'restored.json');
    expect(run.code, run.stderr).toBe(0);
    expect(bundleOf('restored.json').sections).toEqual(bundleOf('standby.json').sections);
  }, 120_000);

  it('reads nothing from the database alone, refuses without the key or with another, and opens no row moved to another commitment', async () => {
    const everything = (await query<{ t: string }>(stack.db.adminUrl, `select concat_ws('|', ${TABLE_NAMES.map((t) => `(select json_agg(x)::text from stats.${t} x)`).join(', ')}) as t`))[0]!.t.toLowerCase();
    const salts = bundleOf('standby.json').sections.flatMap((s) => [s.wallet.salt, ...s.nights.map((n) => n.salt)]);
    for (const needle of [account.funder.slice(2), ...txs.map((t) => t.slice(2).toLowerCase()), ...salts.map((s) => Buffer.from(s, 'base64').toString('hex')), ...salts]) {
      expect(everything).not.toContain(needle.toLowerCase());
    }
    const without = await disclose({ ...envB, OPENINGS_KEY: '' }, 'without.json');
    expect(without.code).toBe(1);
    expect(without.stderr).toContain('OPENINGS_KEY is not set: the openings of the nights\' commitments are sealed under it in the database, so nothing can be disclosed without it.');
    const other = await disclose({ ...envB, OPENINGS_KEY: OpeningsKey.generate() }, 'other.json');
    expect(other.code).toBe(1);
    expect(other.stderr).toContain(`is sealed under another OPENINGS_KEY (key id ${OpeningsKey.parse(envB.OPENINGS_KEY!).id};`);

    // The writer may neither change nor remove an opening.
    await withClient(stack.db.urlFor('stats_writer'), async (c) => {
      for (const refused of ['update stats.transfer_opening set sealed = sealed', 'delete from stats.transfer_opening', 'truncate stats.transfer_opening']) {
        await expect(c.query(refused), refused).rejects.toThrow(/append-only|permission denied/);
      }
    });
    // Rows swapped by the database's owner: each opens nothing.
    const [n9, n5] = [await nightCommitmentOf(9), await nightCommitmentOf(5)];
    const swap = `set session_replication_role = replica;
      update stats.transfer_opening o set sealed = s.sealed from stats.transfer_opening s
        where (o.commitment, s.commitment) in (($1, $2), ($2, $1));
      set session_replication_role = origin`;
    await withClient(stack.db.adminUrl, (c) => c.query(swap.replaceAll('$1', `'${n9}'`).replaceAll('$2', `'${n5}'`)));
    const swapped = await disclose(envB, 'swapped.json');
    expect(swapped.code).toBe(1);
    expect(swapped.stderr).toMatch(/the opening of the night commitment \S+ does not authenticate under this OPENINGS_KEY: it was changed, or moved from another row, after it was sealed\./);
    expect(existsSync(path.join(dir, 'swapped.json'))).toBe(false);
  }, 120_000);
});

describe('a writer with another OPENINGS_KEY', () => {
  it('commits the wallet anew, says why, and seals what it commits under its own key', async () => {
    const key = OpeningsKey.generate();
    const run = await runCli(['once'], { ...envB, OPENINGS_KEY: key });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(said(run.lines, REPLACED)).toEqual([expect.objectContaining({ why: expect.stringContaining(`the opening of the wallet commitment ${legacy.wallet} is sealed under another OPENINGS_KEY`) })]);
    const wallets = await walletRows();
    expect(wallets).toHaveLength(2);
    expect(await walletEntries()).toEqual([expect.objectContaining({ wallet: legacy.wallet }), expect.objectContaining({ wallet: wallets[1], replaces: expect.any(Number) })]);
    expect((await databaseVault(stack.db.adminUrl, key).openWallet(wallets[1]!))?.wallet).toBe(account.funder);
    await expect(databaseVault(stack.db.adminUrl, envB.OPENINGS_KEY).openWallet(wallets[1]!)).rejects.toThrow(/sealed under another OPENINGS_KEY/);
  }, 120_000);
});
