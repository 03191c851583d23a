// The Merkle tree of RFC 6962 (https://www.rfc-editor.org/rfc/rfc6962#section-2.1) and the proofs
// of RFC 9162 (https://www.rfc-editor.org/rfc/rfc9162#section-2.1.3).
import { sha256 } from './encoding.ts';

export const HASH_SIZE = 32;

export const leafHash = (entry: Uint8Array): Buffer => sha256(Buffer.of(0x00), entry);
const nodeHash = (left: Uint8Array, right: Uint8Array): Buffer => sha256(Buffer.of(0x01), left, right);

/** levels[k][j] = MTH of the complete subtree of leaves [j·2^k, (j+1)·2^k). */
export function subtreeLevels(leaves: Buffer[]): Buffer[][] {
  const levels = [leaves];
  for (let below = leaves; below.length >= 2;) {
    const above: Buffer[] = [];
    for (let j = 0; j + 1 < below.length; j += 2) above.push(nodeHash(below[j]!, below[j + 1]!));
    levels.push(above);
    below = above;
  }
  return levels;
}

/** MTH(D[lo:hi]) of RFC 6962 §2.1, splitting at the largest power of two below the width. */
export function treeHash(levels: Buffer[][], lo: number, hi: number): Buffer {
  const n = hi - lo;
  if (n === 0) return sha256();
  if ((n & (n - 1)) === 0) return levels[Math.log2(n)]![lo / n]!;
  let k = 1;
  while (k * 2 < n) k *= 2;
  return nodeHash(treeHash(levels, lo, lo + k), treeHash(levels, lo + k, hi));
}

/** RFC 6962 §2.1.2: PROOF(m, D[n]), the consistency proof from the tree's first m leaves to its first n. */
export function consistencyProof(levels: Buffer[][], m: number, n: number): Buffer[] {
  const subproof = (lo: number, hi: number, k: number, whole: boolean): Buffer[] => {
    if (k === hi - lo) return whole ? [] : [treeHash(levels, lo, hi)];
    let split = 1;
    while (split * 2 < hi - lo) split *= 2;
    return k <= split
      ? [...subproof(lo, lo + split, k, whole), treeHash(levels, lo + split, hi)]
      : [...subproof(lo + split, hi, k - split, false), treeHash(levels, lo, lo + split)];
  };
  return m === 0 || m >= n ? [] : subproof(0, n, m, true);
}

/** RFC 9162 §2.1.4.2: whether the proof shows the tree of size m and root first is a prefix of the one of size n and root second. */
export function verifyConsistency(m: number, n: number, first: Buffer, second: Buffer, proof: Buffer[]): boolean {
  if (m > n) return false;
  if (m === n) return proof.length === 0 && first.equals(second);
  if (m === 0) return proof.length === 0;
  const path = (m & (m - 1)) === 0 ? [first, ...proof] : proof;
  if (!proof.length) return false;
  let fn = m - 1;
  let sn = n - 1;
  while (fn & 1) { fn >>= 1; sn >>= 1; }
  let fr = path[0]!;
  let sr = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn & 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while (!(fn & 1) && fn !== 0) { fn >>= 1; sn >>= 1; }
    } else {
      sr = nodeHash(sr, c);
    }
    fn >>= 1;
    sn >>= 1;
  }
  return sn === 0 && fr.equals(first) && sr.equals(second);
}

/** RFC 9162 §2.1.3.2: whether the inclusion proof puts the leaf at the index of the tree of that size and root. */
export function verifyInclusion(index: number, size: number, leaf: Buffer, proof: Buffer[], root: Buffer): boolean {
  if (index >= size) return false;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn & 1 || fn === sn) {
      r = nodeHash(p, r);
      while (!(fn & 1) && fn !== 0) { fn >>= 1; sn >>= 1; }
    } else {
      r = nodeHash(r, p);
    }
    fn >>= 1;
    sn >>= 1;
  }
  return sn === 0 && r.equals(root);
}
