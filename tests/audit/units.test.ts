// The pieces every side of an audit shares: the commitments and their payload, and the sample drawn
// from a checkpoint's root (the vault of openings: openings-sealed.test.ts).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../contract/audit/canonical-json.ts';
import { nightCommitment, nightPayload, payloadProblem, walletCommitment } from '../../contract/audit/commitment.ts';
import { countsAsReward, parsePayers } from '../../contract/audit/payers.ts';
import { drawNights, sampleCandidates } from '../../contract/audit/sample.ts';
import { drawNights as verifyDrawNights } from '../../verify/draw.ts';
import { SHIPPED_PAYERS } from '../../audit/check.ts';

const A = '0x00000000000000000000000000000000000000aa';
const B = '0x00000000000000000000000000000000000000bb';
const tx = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

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

  it('read a payer row that requires an event, human-readable or a JSON ABI item, and refuse a malformed one naming the row', () => {
    const base = { chain_id: 137, token: A, payer: B, from: '2026-01-01', until: null, source: 'x' };
    const list = (event: unknown) => JSON.stringify([base, { ...base, event }]);
    const human = 'event DistributedRewards(address indexed user, uint256 amount)';
    const item = { type: 'event', name: 'DistributedRewards', anonymous: false, inputs: [
      { indexed: true, internalType: 'address', name: 'user', type: 'address' }, { indexed: false, internalType: 'uint256', name: 'amount', type: 'uint256' }] };
    const [plain, requiring] = parsePayers(list({ abi: human, recipient: 'user', amount: 'amount' }), 'p.json');
    expect(plain?.event).toBeUndefined();
    expect(requiring).toMatchObject({ row: 2, event: { recipient: 'user', amount: 'amount', abi: { type: 'event', name: 'DistributedRewards' } } });
    expect(parsePayers(list({ abi: item, recipient: 'user' }), 'p.json')[1]?.event).toEqual({ recipient: 'user', abi: requiring?.event?.abi });
    const refused: [unknown, RegExp][] = [
      ['DistributedRewards(address,uint256)', /row 2 of p.json: event is not an object/],
      [{ abi: 'DistributedRewards(address,uint256)', recipient: 'user' }, /row 2 of p.json: event.abi is not an event viem can decode/],
      [{ abi: 'function distributeRewards(address user, uint256 amount)', recipient: 'user' }, /row 2 of p.json: event.abi is not an event/],
      [{ abi: 'event DistributedRewards(adress indexed user, uint256 amount)', recipient: 'user' }, /row 2 of p.json: event.abi is not an event/],
      [{ abi: { ...item, anonymous: true }, recipient: 'user' }, /row 2 of p.json: event.abi is not an event/],
      [{ abi: { ...item, type: 'function' }, recipient: 'user' }, /row 2 of p.json: event.abi is not an event/],
      [{ abi: human }, /row 2 of p.json: event.recipient does not name an address argument of DistributedRewards/],
      [{ abi: human, recipient: 'amount' }, /row 2 of p.json: event.recipient does not name an address argument/],
      [{ abi: human, recipient: 'user', amount: 'user' }, /row 2 of p.json: event.amount does not name an unsigned integer argument of DistributedRewards/],
    ];
    for (const [event, why] of refused) expect(() => parsePayers(list(event), 'p.json'), JSON.stringify(event)).toThrow(why);
  });

  it('ships a payer list in that format, every row citing where its address was found', () => {
    const rows = parsePayers(readFileSync(SHIPPED_PAYERS, 'utf8'), SHIPPED_PAYERS);
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect(r.source).toMatch(/^https:\/\//);
    // pUSD, the collateral since 2026-04-28, is paid by a listed payer on a night after the switch.
    expect(rows.some((r) => r.token === '0xc011a7e12a19f7b1f670d46f03b03f3342e82dfb' && countsAsReward(rows, 137, r.token, r.payer, '2026-09-01'))).toBe(true);
  });
});

describe('the sample', () => {
  const dates = Array.from({ length: 30 }, (_, i) => `2026-01-${String(i + 1).padStart(2, '0')}`);

  it('is the same for the same root and nonce, another for another root or nonce, and never repeats a night', () => {
    const root = createHash('sha256').update('root one').digest();
    const nonce = 'a'.repeat(32);
    const drawn = drawNights(root, nonce, dates, 5);
    expect(drawn).toHaveLength(5);
    expect(new Set(drawn).size).toBe(5);
    expect(drawn).toEqual([...drawn].sort());
    expect(drawNights(root, nonce, dates, 5)).toEqual(drawn);
    expect(drawNights(createHash('sha256').update('root two').digest(), nonce, dates, 5)).not.toEqual(drawn);
    expect(drawNights(root, 'b'.repeat(32), dates, 5)).not.toEqual(drawn);
    expect(drawNights(root, nonce, dates, 99)).toEqual(dates);
  });

  it('is the draw the standalone verifier recomputes, on the same inputs', () => {
    for (let i = 0; i < 200; i++) {
      const root = createHash('sha256').update(`root ${i}`).digest();
      const nonce = createHash('sha256').update(`nonce ${i}`).digest('hex');
      const candidates = dates.slice(0, 1 + (i % dates.length));
      const k = 1 + (i % 7);
      expect(drawNights(root, nonce, candidates, k)).toEqual(verifyDrawNights(root, nonce, candidates, k));
    }
  });

  it('draws from the nights whose first entry follows the first wallet entry', () => {
    const entries = [
      { index: 0, date: '2026-01-01' }, { index: 1, date: null, kind: 'wallet' }, { index: 2, date: '2026-01-02' },
      { index: 3, date: '2026-01-01' }, { index: 4, date: '2026-01-03' },
    ];
    expect(sampleCandidates(entries)).toEqual(['2026-01-02', '2026-01-03']);
    expect(sampleCandidates(entries.filter((e) => e.date !== null))).toEqual([]);
  });
});
