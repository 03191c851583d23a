// Draw rule v2 as the verifier computes it (verify/draw.ts), against the rule written out step by step
// in tests/verify/audit-log.ts (SHA-256 from node:crypto, the modulo taken a byte at a time) and against
// vectors written down once: the candidates a checkpoint's tree gives, and the nights drawn from them.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { drawCandidates, drawNights, nonceDigest, NONCE } from '../../verify/draw.ts';
import { readEntries } from '../../verify/entries.ts';
import { candidates, drawV2, night, nonceSha256, wallet } from './audit-log.ts';

const dates = (n: number) => Array.from({ length: n }, (_, i) => new Date(Date.UTC(2026, 0, 1 + i)).toISOString().slice(0, 10));
const NONCE_A = '0123456789abcdef0123456789abcdef';
const NONCE_B = 'fedcba9876543210fedcba9876543210';

describe('draw rule v2', () => {
  it('draws the nights written down for a known root and nonce', () => {
    const root = Buffer.alloc(32, 7);
    expect(drawNights(root, NONCE_A, dates(20), 5)).toEqual(['2026-01-03', '2026-01-13', '2026-01-16', '2026-01-18', '2026-01-19']);
    // The same checkpoint with another nonce draws otherwise.
    expect(drawNights(root, NONCE_B, dates(20), 5)).toEqual(['2026-01-01', '2026-01-02', '2026-01-07', '2026-01-10', '2026-01-18']);
  });

  it('agrees with the rule computed step by step, for any root, nonce and sample size', () => {
    for (let t = 0; t < 300; t++) {
      const root = randomBytes(32);
      const nonce = randomBytes(16 + (t % 40)).toString('hex').slice(0, 32 + (t % 97));
      const from = dates(1 + (t % 45));
      const k = 1 + ((t * 7) % 50);
      const drawn = drawNights(root, nonce, from, k);
      expect(drawn, `root ${root.toString('hex')} nonce ${nonce} n ${from.length} k ${k}`).toEqual(drawV2(root, nonce, from, k));
      expect(drawn).toHaveLength(Math.min(k, from.length));
      expect([...drawn].sort()).toEqual(drawn);
    }
  });

  it('draws every candidate when the sample is as large, and none from none; a sample is at least one night', () => {
    expect(drawNights(Buffer.alloc(32), NONCE_A, dates(4), 4)).toEqual(dates(4));
    expect(drawNights(Buffer.alloc(32), NONCE_A, dates(4), 9)).toEqual(dates(4));
    expect(drawNights(Buffer.alloc(32), NONCE_A, [], 3)).toEqual([]);
    expect(() => drawNights(Buffer.alloc(32), NONCE_A, dates(4), 0)).toThrow(RangeError);
  });

  it('hashes the nonce as the opening carries it, and reads a nonce as 32 to 128 of the allowed characters', () => {
    expect(nonceDigest(NONCE_A)).toBe(nonceSha256(NONCE_A));
    expect(nonceDigest('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    for (const good of [NONCE_A, 'a'.repeat(128), 'A.b_c:d-0123456789012345678901234']) expect(NONCE.test(good), good).toBe(true);
    for (const bad of ['a'.repeat(31), 'a'.repeat(129), `${NONCE_A} `, `${NONCE_A}+`, `${NONCE_A}/`]) expect(NONCE.test(bad), bad).toBe(false);
  });
});

describe('the candidates within a checkpoint', () => {
  const raw = [
    night('2025-12-30', 1, { transfers: false }),  // 0: before the first wallet entry
    wallet('a', null),                              // 1
    night('2025-12-31', 2),                         // 2
    night('2025-12-30', 3, { supersedes: 0, transfers: false }), // 3: a night first logged before the wallet entry
    night('2026-01-02', 4),                         // 4
    wallet('b', 1),                                 // 5
    night('2026-01-01', 5),                         // 6: logged after later dates, drawn in date order
    night('2026-01-03', 6),                         // 7: after the checkpoint of 7
  ];

  it('are the nights first logged after the first wallet entry of the checkpoint\'s tree, in date order', () => {
    const entries = readEntries(raw);
    expect(drawCandidates(entries, 7)).toEqual(['2025-12-31', '2026-01-01', '2026-01-02']);
    expect(drawCandidates(entries, 8)).toEqual(['2025-12-31', '2026-01-01', '2026-01-02', '2026-01-03']);
    // A checkpoint before the first wallet entry has none.
    expect(drawCandidates(entries, 1)).toEqual([]);
    for (const size of [1, 2, 4, 7, 8]) expect(drawCandidates(entries, size), `size ${size}`).toEqual(candidates(raw, size));
  });
});
