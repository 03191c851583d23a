// The nights an audit draws, by rule v2, recomputed from the log alone: anyone who holds the
// checkpoint's tree and the nonce the auditor revealed draws the same nights.
//
// The candidates are the nights whose first entry in the checkpoint's tree comes after the tree's
// first wallet entry, in date order. Draw i (i = 0, 1, …, k−1) computes
// h_i = SHA-256("public-stats audit sample v2\n" || root (32 bytes) || N as UTF-8 || "\n" || i as
// 4 bytes big-endian), reads h_i as a big-endian integer, and swaps position i with position
// i + (h_i mod (n − i)) of the candidates (a partial Fisher–Yates shuffle); the first k positions are
// the sample, reported in date order. With k ≥ n every candidate is drawn.
import { sha256 } from '../log-reader/encoding.ts';
import { isNight, isWallet, type LogEntry } from './entries.ts';

const DOMAIN = Buffer.from('public-stats audit sample v2\n', 'utf8');

/** The auditor's nonce as text: 32 to 128 characters of letters, digits and . _ : - (at least 128 random bits). */
export const NONCE = /^[A-Za-z0-9._:-]{32,128}$/;

/** The nonce's digest as an audit's opening carries it: lowercase hex of SHA-256 of its UTF-8 bytes. */
export const nonceDigest = (nonce: string): string => sha256(Buffer.from(nonce, 'utf8')).toString('hex');

/** The nights a draw may pick within the checkpoint of `size` entries (the log in order, position = index). */
export function drawCandidates(entries: readonly LogEntry[], size: number): string[] {
  const tree = entries.slice(0, size);
  const wallet = tree.find(isWallet)?.index;
  if (wallet === undefined) return [];
  const first = new Map<string, number>();
  for (const entry of tree) if (isNight(entry) && !first.has(entry.date)) first.set(entry.date, entry.index);
  return [...first].filter(([, index]) => index > wallet).map(([date]) => date).sort();
}

/** Rule v2's sample of k nights from the candidates, in date order. */
export function drawNights(root: Uint8Array, nonce: string, candidates: readonly string[], k: number): string[] {
  if (!Number.isSafeInteger(k) || k < 1) throw new RangeError(`a sample is at least one night, not ${k}`);
  const order = [...candidates];
  const n = order.length;
  const counter = Buffer.alloc(4);
  for (let i = 0; i < Math.min(k, n); i++) {
    counter.writeUInt32BE(i);
    const h = sha256(DOMAIN, root, Buffer.from(`${nonce}\n`, 'utf8'), counter);
    const j = i + Number(BigInt(`0x${h.toString('hex')}`) % BigInt(n - i));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order.slice(0, Math.min(k, n)).sort();
}
