// Each night of the audit scenario (audit-scenario.ts) in the log and before the auditor: committed to
// its reward transfers with the openings kept private, and each night that does not match the chain
// failing `npm run audit check` with its reason.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Address, Hash } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TABLE_NAMES } from '../../contract/tables.ts';
import { databaseVault } from '../../audit/openings.ts';
import { newAuditorKey } from '../../contract/audit/attestation.ts';
import { amountOf, auditTools, BAD, GOOD, IMPORTED, newNonce, night, startAuditScenario, stopAuditScenario, today, type AuditScenario } from '../support/audit-scenario.ts';
import { until } from '../support/writer.ts';
import { query } from '../support/db.ts';
import type { TestStack } from '../support/stack.ts';

let scenario: AuditScenario;
let stack: TestStack;
let wallet: Address;
let txs: Hash[];
const { audit, file, logged, goodCheckpoint, open, disclose, check, attest } = auditTools(() => scenario);
const read = async <T>(route: string, parse: (r: Response) => Promise<T>) => parse(await fetch(new URL(route, scenario.stack.cfg.siteUrl)));

beforeAll(async () => {
  scenario = await startAuditScenario();
  ({ stack, wallet, txs } = scenario);
}, 240_000);
afterAll(() => stopAuditScenario(scenario ?? {}));

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

  it('keeps the openings in the database, sealed under OPENINGS_KEY, and none under the data directory', async () => {
    expect(existsSync(path.join(stack.cfg.dataDir, 'reward-transfers'))).toBe(false);
    const entries = await logged();
    const first = entries.find((e) => e.date === night(GOOD[0]!))!;
    const opened = await databaseVault(stack.db.adminUrl, scenario.env.OPENINGS_KEY).openNight(first.entry.transfers as string);
    expect(opened?.payload.transfers.map((t) => t.tx)).toContain(txs[0]!.toLowerCase());
  });
});

describe('nights that do not match the chain, named by the owner', () => {
  const nonce = newNonce();
  let size: number;

  it('fails each night naming its reason, and the attestation of the failure is published and shown as named', async () => {
    size = await goodCheckpoint();
    const dates = Object.values(BAD).map(night).sort();
    const opened = await open(nonce, ['--nights', dates.join(','), '--checkpoint', String(size)]);
    expect(opened.code, opened.stderr).toBe(0);
    const out = file('bad.json');
    const disclosed = await disclose(nonce, out);
    expect(disclosed.code, disclosed.stderr).toBe(0);
    expect(disclosed.stdout).toContain(`named by the owner, within checkpoint ${size}`);
    const run = await check(out, nonce);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^checked 7 nights \(named by the owner \(not drawn\), within checkpoint \d+\) of \S+, opened at entry \d+, against chain 137: fail$/m);
    const line = (d: number) => run.stdout.split('\n').find((l) => l.startsWith(`FAIL ${night(d)} `)) ?? `no line for ${night(d)}`;
    const paid = (units: bigint) => `${units / 1_000_000n}.${String((units % 1_000_000n + 5_000n) / 10_000n).padStart(2, '0')}`;
    expect(line(BAD.cent)).toMatch(new RegExp(`: the transfers add up to ${paid(amountOf(BAD.cent))} USD \\(${amountOf(BAD.cent)} base units\\), not the published ${paid(amountOf(BAD.cent) + 10_000n)} USD$`));
    expect(line(BAD.otherWallet)).toMatch(/: transfer 1 of 1: its reward Transfer of that amount pays another wallet$/);
    expect(line(BAD.unlistedPayer)).toMatch(/: transfer 1 of 1: its Transfer to the wallet comes from a sender the payer list does not name for \S+$/);
    expect(line(BAD.otherToken)).toMatch(/: transfer 1 of 1: its Transfer to the wallet is in a token the payer list does not name for \S+$/);
    expect(line(BAD.failed)).toMatch(/: transfer 1 of 1: its transaction failed on the chain \(status 0\)$/);
    expect(line(BAD.dupA)).toContain(`transfer 1 of 1: its transaction is claimed by nights ${night(BAD.dupA)} and ${night(BAD.dupB)}`);
    expect(line(BAD.dupB)).toContain(`transfer 1 of 1: its transaction is claimed by nights ${night(BAD.dupA)} and ${night(BAD.dupB)}`);

    // Every outcome is signed: a failing attestation, published and shown as it is.
    const note = file('failed.txt');
    const attested = await attest(out, nonce, note);
    expect(attested.code).toBe(1);
    expect(attested.stdout).toContain(`wrote the attestation by auditor.example to ${note}: fail`);
    const text = readFileSync(note, 'utf8');
    expect(text).toMatch(/\nchosen named\n/);
    expect(text).toMatch(/\nresult fail\n/);
    for (const d of dates) expect(text).toMatch(new RegExp(`\nnight ${d} \\d+ fail\n`));
    const published = await audit(['publish', note]);
    expect(published.code, published.stderr).toBe(0);
    expect(published.stdout).toMatch(/: fail, 0 of 7 nights named by the owner, within checkpoint \d+ matched/);
    const shown = await until('the failed audit in /api/stats', async () => {
      const a = (await read('/api/stats', (r) => r.json() as Promise<{ audit: Record<string, unknown> | null }>)).audit;
      return a?.result === 'fail' && a;
    }, 60_000);
    expect(shown).toMatchObject({ auditor: 'auditor.example', chosen: 'named', result: 'fail', nights_checked: 7, nights_matched: 0, date: today });
    const page = await until('the failed audit on the page', async () => { const t = await read('/', (r) => r.text()); return t.includes('FAILED') && t; }, 60_000);
    expect(page).toContain('0 of 7 nights named by the owner, not drawn at random matched');
  }, 180_000);

  it('keeps an attestation by an auditor the policy does not list out of the audit shown', async () => {
    const stranger = await newAuditorKey('self.example');
    writeFileSync(file('self.key'), stranger.text, { mode: 0o600 });
    const mine = newNonce();
    expect((await open(mine, ['--nights', night(GOOD[0]!), '--checkpoint', String(size)], stranger.verifierKey)).code).toBe(0);
    expect((await disclose(mine, file('self.json'))).code).toBe(0);
    const run = await audit(['attest', file('self.json'), '--rpc', scenario.chain.rpcUrl, '--site', scenario.stack.cfg.siteUrl, '--nonce', mine, '--payers', file('payers.json'),
      '--key', file('self.key'), '--out', file('self.txt')]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect((await audit(['publish', file('self.txt')])).code).toBe(0);
    const listed = await until('the self-made attestation under /log/audits', async () => {
      const { audits } = await read('/log/audits', (r) => r.json() as Promise<{ audits: { note: string; listed: boolean }[] }>);
      return audits.find((a) => a.note === readFileSync(file('self.txt'), 'utf8'));
    }, 60_000);
    expect(listed.listed).toBe(false);
    const stats = await read('/api/stats', (r) => r.json() as Promise<{ audit: { auditor: string } | null }>);
    expect(stats.audit?.auditor).toBe('auditor.example');
    // Another auditor's key cannot attest this audit: its opening names the listed auditor.
    const wrongKey = await audit(['attest', file('self.json'), '--rpc', scenario.chain.rpcUrl, '--site', scenario.stack.cfg.siteUrl, '--nonce', mine, '--payers', file('payers.json'),
      '--key', scenario.auditor.keyFile, '--out', file('wrong.txt')]);
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toContain(`names the auditor ${stranger.verifierKey}, not your key`);
  }, 180_000);
});
