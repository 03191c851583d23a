// Each night of the audit scenario (audit-scenario.ts) in the log and before the auditor: committed to
// its reward transfers with the openings kept private, and each night that does not match the chain
// failing `npm run audit check` with its reason.
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Address, Hash } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TABLE_NAMES } from '../../contract/tables.ts';
import { amountOf, auditTools, BAD, GOOD, IMPORTED, night, NONCE, startAuditScenario, stopAuditScenario, type AuditScenario } from '../support/audit-scenario.ts';
import { query } from '../support/db.ts';
import type { TestStack } from '../support/stack.ts';

let scenario: AuditScenario;
let stack: TestStack;
let wallet: Address;
let txs: Hash[];
const { audit, file, logged, signedControl, check } = auditTools(() => scenario);

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

  it('keeps the openings in a private folder under the data directory', () => {
    const vault = path.join(stack.cfg.dataDir, 'reward-transfers');
    expect(statSync(vault).mode & 0o777).toBe(0o700);
    for (const name of ['wallets.jsonl', 'nights.jsonl']) expect(statSync(path.join(vault, name)).mode & 0o777).toBe(0o600);
    expect(readFileSync(path.join(vault, 'nights.jsonl'), 'utf8')).toContain(txs[0]!.toLowerCase());
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
