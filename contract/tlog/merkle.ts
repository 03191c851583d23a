// RFC 6962 Merkle trees (https://www.rfc-editor.org/rfc/rfc6962#section-2.1): leaf hashes
// SHA-256(0x00 || entry), node hashes SHA-256(0x01 || left || right), the tree hash of any prefix,
// and inclusion and consistency proofs in the RFC's order (RFC 9162 §2.1.3 and §2.1.4 state the same
// algorithms). Web Crypto only.
export type Hash = Uint8Array<ArrayBuffer>;

async function sha256(...parts: Uint8Array[]): Promise<Hash> {
  const joined = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) { joined.set(part, at); at += part.length; }
  return new Uint8Array(await crypto.subtle.digest('SHA-256', joined));
}

export const leafHash = (entry: Uint8Array): Promise<Hash> => sha256(Uint8Array.of(0), entry);
export const nodeHash = (left: Uint8Array, right: Uint8Array): Promise<Hash> => sha256(Uint8Array.of(1), left, right);

/** The largest power of two smaller than n (n > 1). */
function split(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

export interface Tree {
  size: number;
  /**
   * Hashes of the complete, aligned subtrees: level k holds the subtree hashes of 2^k leaves, the
   * i-th covering leaves [i·2^k, (i+1)·2^k). Level 0 is the leaf hashes.
   */
  levels: Hash[][];
  /** MTH(D[lo:hi]) of RFC 6962 §2.1. */
  hash(lo: number, hi: number): Promise<Hash>;
  /** The tree hash of the first `size` leaves (the empty tree's is SHA-256 of nothing). */
  root(size?: number): Promise<Hash>;
  /** PATH(index, D[size]) of RFC 6962 §2.1.1: the leaf's sibling first, the root's child last. */
  inclusionProof(index: number, size?: number): Promise<Hash[]>;
  /** PROOF(oldSize, D[size]) of RFC 6962 §2.1.2. */
  consistencyProof(oldSize: number, size?: number): Promise<Hash[]>;
}

export async function buildTree(entries: readonly Uint8Array[]): Promise<Tree> {
  const levels: Hash[][] = [await Promise.all(entries.map(leafHash))];
  for (let below = levels[0]!; below.length >= 2;) {
    const pairs = Array.from({ length: Math.floor(below.length / 2) }, (_, i) => nodeHash(below[2 * i]!, below[2 * i + 1]!));
    below = await Promise.all(pairs);
    levels.push(below);
  }
  const size = entries.length;

  const hash = async (lo: number, hi: number): Promise<Hash> => {
    const n = hi - lo;
    // An aligned power-of-two range is a stored subtree.
    if ((n & (n - 1)) === 0 && lo % n === 0) {
      const stored = levels[Math.log2(n)]?.[lo / n];
      if (stored) return stored;
    }
    if (n === 1) throw new RangeError(`leaf ${lo} is not in the tree`);
    const k = split(n);
    return nodeHash(await hash(lo, lo + k), await hash(lo + k, hi));
  };

  const path = async (m: number, lo: number, hi: number): Promise<Hash[]> => {
    if (hi - lo === 1) return [];
    const k = split(hi - lo);
    return m < lo + k ? [...(await path(m, lo, lo + k)), await hash(lo + k, hi)] : [...(await path(m, lo + k, hi)), await hash(lo, lo + k)];
  };

  const subproof = async (m: number, lo: number, hi: number, whole: boolean): Promise<Hash[]> => {
    const n = hi - lo;
    if (m === n) return whole ? [] : [await hash(lo, hi)];
    const k = split(n);
    return m <= k
      ? [...(await subproof(m, lo, lo + k, whole)), await hash(lo + k, hi)]
      : [...(await subproof(m - k, lo + k, hi, false)), await hash(lo, lo + k)];
  };

  const checkSize = (n: number) => {
    if (!Number.isInteger(n) || n < 0 || n > size) throw new RangeError(`tree size ${n} is not between 0 and ${size}`);
    return n;
  };

  return {
    size,
    levels,
    hash,
    root: async (n = size) => (checkSize(n) === 0 ? sha256() : hash(0, n)),
    async inclusionProof(index, n = size) {
      checkSize(n);
      if (!Number.isInteger(index) || index < 0 || index >= n) throw new RangeError(`entry ${index} is not in a tree of size ${n}`);
      return path(index, 0, n);
    },
    async consistencyProof(oldSize, n = size) {
      checkSize(n);
      if (!Number.isInteger(oldSize) || oldSize < 0 || oldSize > n) throw new RangeError(`tree size ${oldSize} is not between 0 and ${n}`);
      return oldSize === 0 || oldSize === n ? [] : subproof(oldSize, 0, n, true);
    },
  };
}
