// The verifier's RFC 9162 proof checks (https://www.rfc-editor.org/rfc/rfc9162#section-2.1.3.2 and
// §2.1.4.2) against the proofs the service's own tree makes (which Go's sumdb/tlog checks in
// verifiable-log.test.ts and verifiable-tampering.test.ts), for every pair of sizes up to 40, powers
// of two and their neighbours included; the proofs the verifier makes itself for its evidence are the
// same; and each check fails on a changed hash, a wrong size or a proof cut short.
import { describe, expect, it } from 'vitest';
import { buildTree, type Tree } from '../../contract/tlog/merkle.ts';
import { consistencyProof, leafHash, subtreeLevels, verifyConsistency, verifyInclusion } from '../../log-reader/tree.ts';

const N = 40;
const entries = Array.from({ length: N }, (_, i) => Buffer.from(`night ${i}`));
const levels = subtreeLevels(entries.map(leafHash));
let tree: Tree;
const root = async (n: number) => Buffer.from(await tree.root(n));
const buffers = (hashes: Uint8Array[]) => hashes.map((h) => Buffer.from(h));
/** The hash with its first bit flipped. */
const flip = (hash: Buffer) => Buffer.concat([Buffer.of(hash[0]! ^ 0x80), hash.subarray(1)]);

describe('RFC 9162 proofs', () => {
  it('consistency: the service\'s proofs verify, the verifier\'s own are the same, and a changed one fails', async () => {
    tree = await buildTree(entries);
    for (let n = 1; n <= N; n++) {
      for (let m = 1; m <= n; m++) {
        const proof = buffers(m === n ? [] : await tree.consistencyProof(m, n));
        expect(consistencyProof(levels, m, n), `${m} → ${n}`).toEqual(proof);
        expect(verifyConsistency(m, n, await root(m), await root(n), proof), `${m} → ${n}`).toBe(true);
        expect(verifyConsistency(m, n, flip(await root(m)), await root(n), proof), `${m} → ${n}, another old root`).toBe(false);
        expect(verifyConsistency(m, n, await root(m), flip(await root(n)), proof), `${m} → ${n}, another new root`).toBe(false);
        if (proof.length) {
          expect(verifyConsistency(m, n, await root(m), await root(n), [...proof.slice(0, -1), flip(proof.at(-1)!)]), `${m} → ${n}, changed`).toBe(false);
          expect(verifyConsistency(m, n, await root(m), await root(n), proof.slice(1)), `${m} → ${n}, short`).toBe(false);
        }
      }
    }
    // From the empty tree anything is consistent, with an empty proof; nothing goes back.
    expect(verifyConsistency(0, 5, Buffer.alloc(32), await root(5), [])).toBe(true);
    expect(verifyConsistency(5, 4, await root(5), await root(4), [])).toBe(false);
  });

  it('inclusion: the service\'s proofs verify at their index only', async () => {
    tree = await buildTree(entries);
    for (let n = 1; n <= N; n++) {
      for (let i = 0; i < n; i++) {
        const proof = buffers(await tree.inclusionProof(i, n));
        expect(verifyInclusion(i, n, leafHash(entries[i]!), proof, await root(n)), `${i} in ${n}`).toBe(true);
        expect(verifyInclusion(i, n, flip(leafHash(entries[i]!)), proof, await root(n)), `${i} in ${n}, another entry`).toBe(false);
        if (n > 1) expect(verifyInclusion((i + 1) % n, n, leafHash(entries[i]!), proof, await root(n)), `${i} in ${n}, another index`).toBe(false);
      }
      expect(verifyInclusion(n, n, leafHash(entries[0]!), [], await root(n))).toBe(false);
    }
  });
});
