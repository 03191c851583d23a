// The pieces every side of an audit shares: the commitments and their payload, the vault of openings
// (random salts, or salts derived from a key, which agree across vaults with that key; a wallet
// switch is always a new commitment), and the sample drawn from a checkpoint's root.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../contract/audit/canonical-json.ts';
import { nightCommitment, nightPayload, payloadProblem, walletCommitment } from '../../contract/audit/commitment.ts';
import { countsAsReward, parsePayers } from '../../contract/audit/payers.ts';
import { drawNights, sampleCandidates } from '../../contract/audit/sample.ts';
import { SHIPPED_PAYERS } from '../../audit/check.ts';
import { FileVault, saltKeyOf } from '../../contract/audit/transfer-vault.ts';

const A = '0x00000000000000000000000000000000000000aa';
const B = '0x00000000000000000000000000000000000000bb';
const tx = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const dir = () => mkdtempSync(path.join(tmpdir(), 'vault-'));
const key = saltKeyOf(Buffer.alloc(48, 3).toString('base64url'));

describe('the commitments', () => {
  it('hash the domain, the salt and the RFC 8785 payload, with transfers in one order', () => {
    const salt = Buffer.alloc(32, 9);
    const wc = walletCommitment(salt, A);
    const p = nightPayload('2026-03-02', A.toUpperCase().replace('0X', '0x'), wc, [{ tx: tx(2), amount: 5n }, { tx: tx(1), amount: 7n }]);
    expect(p.transfers.map((t) => t.tx)).toEqual([tx(1), tx(2)]);
    expect(p.wallet).toBe(A);
    const expected = createHash('sha256').update('public-stats reward-transfers v1\n').update(salt).update(canonicalJson(p)).digest('base64');
    expect(nightCommitment(salt, p)).toBe(expected);
    expect(canonicalJson(p)).toBe(`{"date":"2026-03-02","transfers":[{"amount":"7","tx":"${tx(1)}"},{"amount":"5","tx":"${tx(2)}"}],"v":1,"wallet":"${A}","wallet_commitment":"${wc}"}`);
    expect(nightCommitment(Buffer.alloc(32, 8), p)).not.toBe(expected);
    expect(() => nightCommitment(Buffer.alloc(16), p)).toThrow(/32 bytes/);
    expect(payloadProblem(p)).toBeUndefined();
    expect(payloadProblem({ ...p, extra: 1 })).toMatch(/keys/);
    expect(payloadProblem({ ...p, transfers: [{ tx: tx(1), amount: 7 }] })).toMatch(/transfer 1/);
  });

  it('read a payer list and apply its dates: from counts, until does not', () => {
    const rows = parsePayers(JSON.stringify([{ chain_id: 137, token: A, payer: B, from: '2026-01-01', until: '2026-02-01', source: 'x' }]), 'p.json');
    expect(countsAsReward(rows, 137, A.toUpperCase().replace('0X', '0x'), B, '2026-01-01')).toBe(true);
    expect(countsAsReward(rows, 137, A, B, '2026-02-01')).toBe(false);
    expect(countsAsReward(rows, 1, A, B, '2026-01-15')).toBe(false);
    expect(() => parsePayers('[{"chain_id":137}]', 'p.json')).toThrow(/row 1 of p.json: token/);
  });

  it('ships a payer list in that format, every row citing where its address was found', () => {
    const rows = parsePayers(readFileSync(SHIPPED_PAYERS, 'utf8'), SHIPPED_PAYERS);
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect(r.source).toMatch(/^https:\/\//);
    // pUSD, the collateral since 2026-04-28, is paid by a listed payer on a night after the switch.
    expect(rows.some((r) => r.token === '0xc011a7e12a19f7b1f670d46f03b03f3342e82dfb' && countsAsReward(rows, 137, r.token, r.payer, '2026-09-01'))).toBe(true);
  });
});

describe('the vault of openings', () => {
  it('keeps them owner-only and, with one key, gives two writers the same commitments', () => {
    const [one, two] = [new FileVault(dir(), key), new FileVault(dir(), key)];
    const w1 = one.wallet(A, undefined, 0, () => false);
    // The standby opens the commitment in force by deriving its salt again.
    const w2 = two.wallet(A, w1.commitment, 1, (c) => c === w1.commitment);
    expect(w2.commitment).toBe(w1.commitment);
    const transfers = [{ tx: tx(1), amount: 1_234_567n }];
    expect(two.night('2026-03-02', w2, transfers).commitment).toBe(one.night('2026-03-02', w1, transfers).commitment);
    expect(one.night('2026-03-02', w1, [{ tx: tx(1), amount: 1_234_568n }]).commitment).not.toBe(one.night('2026-03-02', w1, transfers).commitment);
    expect(statSync((one as unknown as { dir: string }).dir).mode & 0o777).toBe(0o700);
  });

  it('makes a switch of wallet, and a switch back, a new commitment each time', () => {
    const vault = new FileVault(dir(), key);
    const seen: string[] = [];
    const commit = (address: string) => {
      const w = vault.wallet(address, seen.at(-1), seen.length, (c) => seen.includes(c));
      if (w.commitment !== seen.at(-1)) seen.push(w.commitment);
      return w;
    };
    commit(A);
    commit(A);
    commit(B);
    commit(A);
    expect(seen).toHaveLength(3);
    expect(new Set(seen).size).toBe(3);
    expect(vault.openWallet(seen[2]!)?.wallet).toBe(A);
  });

  it('without a key, salts are random and still reused for a payload committed before', () => {
    const vault = new FileVault(dir());
    const w = vault.wallet(A, undefined, 0, () => false);
    const transfers = [{ tx: tx(3), amount: 10n }];
    expect(vault.night('2026-03-03', w, transfers).commitment).toBe(vault.night('2026-03-03', w, transfers).commitment);
    expect(new FileVault(dir()).wallet(A, undefined, 0, () => false).commitment).not.toBe(w.commitment);
  });
});

describe('the sample', () => {
  const dates = Array.from({ length: 30 }, (_, i) => `2026-01-${String(i + 1).padStart(2, '0')}`);

  it('is the same for the same root, another for another root, and never repeats a night', () => {
    const root = createHash('sha256').update('root one').digest();
    const drawn = drawNights(root, dates, 5);
    expect(drawn).toHaveLength(5);
    expect(new Set(drawn).size).toBe(5);
    expect(drawn).toEqual([...drawn].sort());
    expect(drawNights(root, dates, 5)).toEqual(drawn);
    expect(drawNights(createHash('sha256').update('root two').digest(), dates, 5)).not.toEqual(drawn);
    expect(drawNights(root, dates, 99)).toEqual(dates);
  });

  it('draws from the nights whose first entry follows the first wallet entry', () => {
    const entries = [
      { index: 0, date: '2026-01-01' }, { index: 1, date: null }, { index: 2, date: '2026-01-02' },
      { index: 3, date: '2026-01-01' }, { index: 4, date: '2026-01-03' },
    ];
    expect(sampleCandidates(entries)).toEqual(['2026-01-02', '2026-01-03']);
    expect(sampleCandidates(entries.filter((e) => e.date !== null))).toEqual([]);
  });
});
