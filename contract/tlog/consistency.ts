// Checking Merkle proofs against tree heads, as RFC 9162 §2.1.3.2 (inclusion) and §2.1.4.2
// (consistency) state the algorithms (https://www.rfc-editor.org/rfc/rfc9162#section-2.1.4.2); the
// proofs are those of RFC 6962 §2.1 that contract/tlog/merkle.ts makes. Web Crypto only.
import { nodeHash } from './merkle.ts';
import { equalBytes } from './vkey.ts';

const isSize = (n: number) => Number.isSafeInteger(n) && n >= 0;

/**
 * Whether `proof` shows the tree of `newSize` leaves with root `newRoot` extends the tree of
 * `oldSize` leaves with root `oldRoot`. Equal sizes need an empty proof and equal roots; every tree
 * extends the empty one, with an empty proof (tlog-witness asks for none).
 */
export async function verifyConsistency(oldSize: number, newSize: number, oldRoot: Uint8Array, newRoot: Uint8Array, proof: readonly Uint8Array[]): Promise<boolean> {
  if (!isSize(oldSize) || !isSize(newSize) || oldSize > newSize) return false;
  if (oldSize === 0) return proof.length === 0;
  if (oldSize === newSize) return proof.length === 0 && equalBytes(oldRoot, newRoot);
  if (proof.length === 0) return false;
  // A power of two is a complete subtree, whose hash the proof leaves out.
  const old = BigInt(oldSize);
  const path = (old & (old - 1n)) === 0n ? [oldRoot, ...proof] : proof;
  let fn = old - 1n;
  let sn = BigInt(newSize - 1);
  while (fn & 1n) { fn >>= 1n; sn >>= 1n; }
  let fr: Uint8Array = path[0]!;
  let sr: Uint8Array = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0n) return false;
    if (fn & 1n || fn === sn) {
      fr = await nodeHash(c, fr);
      sr = await nodeHash(c, sr);
      while (!(fn & 1n) && fn !== 0n) { fn >>= 1n; sn >>= 1n; }
    } else {
      sr = await nodeHash(sr, c);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return sn === 0n && equalBytes(fr, oldRoot) && equalBytes(sr, newRoot);
}

/** Whether `proof` shows the leaf hash `leaf` at `index` in the tree of `size` leaves with root `root`. */
export async function verifyInclusion(index: number, size: number, leaf: Uint8Array, proof: readonly Uint8Array[], root: Uint8Array): Promise<boolean> {
  if (!isSize(index) || !isSize(size) || index >= size) return false;
  let fn = BigInt(index);
  let sn = BigInt(size - 1);
  let r = leaf;
  for (const p of proof) {
    if (sn === 0n) return false;
    if (fn & 1n || fn === sn) {
      r = await nodeHash(p, r);
      while (!(fn & 1n) && fn !== 0n) { fn >>= 1n; sn >>= 1n; }
    } else {
      r = await nodeHash(r, p);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return sn === 0n && equalBytes(r, root);
}
