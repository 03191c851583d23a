// Consistency and inclusion proofs made by contract/tlog/merkle.ts are accepted by the RFC 9162
// checks for every pair of sizes, and any change to a proof, a root or a size is refused.
import { describe, expect, it } from 'vitest';
import { verifyConsistency, verifyInclusion } from '../../../contract/tlog/consistency.ts';
import { buildTree, leafHash } from '../../../contract/tlog/merkle.ts';

const N = 33;
const entries = Array.from({ length: N }, (_, i) => new TextEncoder().encode(`entry ${i}`));
const flip = (hash: Uint8Array) => { const copy = new Uint8Array(hash); copy[0]! ^= 1; return copy; };

describe('consistency proofs', async () => {
  const tree = await buildTree(entries);
  const roots = await Promise.all(Array.from({ length: N + 1 }, (_, n) => tree.root(n)));

  it('accepts the proof between every pair of sizes up to 33', async () => {
    for (let n = 0; n <= N; n++) {
      for (let m = 0; m <= n; m++) {
        const proof = await tree.consistencyProof(m, n);
        expect(await verifyConsistency(m, n, roots[m]!, roots[n]!, proof), `${m} -> ${n}`).toBe(true);
      }
    }
  });

  it('refuses a proof with any hash changed, one dropped or one added, the wrong roots or the wrong old size', async () => {
    for (const [m, n] of [[1, 2], [3, 7], [4, 8], [5, 33], [16, 33], [32, 33], [7, 8]] as const) {
      const proof = await tree.consistencyProof(m, n);
      for (let i = 0; i < proof.length; i++) {
        expect(await verifyConsistency(m, n, roots[m]!, roots[n]!, proof.map((h, j) => (i === j ? flip(h) : h)))).toBe(false);
      }
      expect(await verifyConsistency(m, n, roots[m]!, roots[n]!, proof.slice(1))).toBe(false);
      expect(await verifyConsistency(m, n, roots[m]!, roots[n]!, proof.slice(0, -1))).toBe(false);
      expect(await verifyConsistency(m, n, roots[m]!, roots[n]!, [...proof, roots[0]!])).toBe(false);
      expect(await verifyConsistency(m, n, flip(roots[m]!), roots[n]!, proof)).toBe(false);
      expect(await verifyConsistency(m, n, roots[m]!, flip(roots[n]!), proof)).toBe(false);
      expect(await verifyConsistency(m + 1, n, roots[m]!, roots[n]!, proof)).toBe(false);
      expect(await verifyConsistency(m, n, roots[m]!, roots[n]!, [])).toBe(false);
    }
  });

  it('needs an empty proof from size 0 and between equal sizes, where the roots must agree', async () => {
    expect(await verifyConsistency(0, 5, roots[0]!, roots[5]!, [])).toBe(true);
    expect(await verifyConsistency(0, 5, roots[0]!, roots[5]!, [roots[1]!])).toBe(false);
    expect(await verifyConsistency(5, 5, roots[5]!, roots[5]!, [])).toBe(true);
    expect(await verifyConsistency(5, 5, roots[5]!, roots[6]!, [])).toBe(false);
    expect(await verifyConsistency(5, 5, roots[5]!, roots[5]!, [roots[5]!])).toBe(false);
    expect(await verifyConsistency(6, 5, roots[6]!, roots[5]!, [])).toBe(false);
    expect(await verifyConsistency(-1, 5, roots[0]!, roots[5]!, [])).toBe(false);
  });

  it('refuses the proof of a fork: a tree that changed an old entry', async () => {
    const fork = await buildTree(entries.map((e, i) => (i === 3 ? new TextEncoder().encode('rewritten') : e)));
    const proof = await fork.consistencyProof(10, 20);
    expect(await verifyConsistency(10, 20, await fork.root(10), await fork.root(20), proof)).toBe(true);
    expect(await verifyConsistency(10, 20, roots[10]!, await fork.root(20), proof)).toBe(false);
  });
});

describe('inclusion proofs', async () => {
  const tree = await buildTree(entries);

  it('accepts every entry in every tree that holds it, and refuses a wrong leaf, index or root', async () => {
    for (let n = 1; n <= N; n++) {
      const root = await tree.root(n);
      for (let i = 0; i < n; i++) {
        const proof = await tree.inclusionProof(i, n);
        const leaf = await leafHash(entries[i]!);
        expect(await verifyInclusion(i, n, leaf, proof, root), `${i} in ${n}`).toBe(true);
        expect(await verifyInclusion(i, n, flip(leaf), proof, root)).toBe(false);
        expect(await verifyInclusion(i, n, leaf, proof, flip(root))).toBe(false);
        if (n > 1) expect(await verifyInclusion((i + 1) % n, n, leaf, proof, root)).toBe(false);
      }
    }
    expect(await verifyInclusion(3, 3, await leafHash(entries[3]!), [], await tree.root(3))).toBe(false);
  });
});
