// The nights an audit opens, drawn by a rule the owner cannot steer: from the root hash of a checkpoint
// the auditor names (a cosigned one, which the owner cannot change) and the auditor's nonce, which the
// owner learns only after the audit's opening is in the log (./opening.ts). No entry the owner writes
// after the opening changes the named checkpoint's root, so the draw cannot be ground, and every audit
// begun is in the log, so a draw cannot be shopped for in silence. The auditor could choose a nonce
// that draws chosen nights; that is an auditor's own judgement, which the attestation signs. Anyone
// recomputes the draw.
//
// Rule v2. The candidates are the nights whose first entry in the checkpoint's tree comes after the
// log's first wallet entry (every night written since commitments began), in date order. Draw i
// (i = 0, 1, …, k−1) computes h_i = SHA-256("public-stats audit sample v2\n" || root || nonce as UTF-8
// || "\n" || i as 4 bytes big-endian), reads h_i as a big-endian integer, and swaps position i with
// position i + (h_i mod (n − i)) of the candidate list (a partial Fisher–Yates shuffle); the first k
// positions are the sample, reported in date order. With k ≥ n every candidate is drawn.
import { createHash } from 'node:crypto';

export const SAMPLE_RULE = 'v2';
const SAMPLE_DOMAIN = 'public-stats audit sample v2\n';

export function drawNights(root: Uint8Array, nonce: string, candidates: readonly string[], k: number): string[] {
  if (!Number.isSafeInteger(k) || k < 1) throw new RangeError(`a sample is at least one night, not ${k}`);
  const order = [...candidates];
  const n = order.length;
  for (let i = 0; i < Math.min(k, n); i++) {
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(i);
    const h = createHash('sha256').update(SAMPLE_DOMAIN, 'utf8').update(root).update(`${nonce}\n`, 'utf8').update(counter).digest('hex');
    const j = i + Number(BigInt(`0x${h}`) % BigInt(n - i));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order.slice(0, Math.min(k, n)).sort();
}

/** The nights written since commitments began: dates whose first entry follows the first wallet entry, in date order. */
export function sampleCandidates(entries: readonly { index: number; date: string | null; kind?: string }[]): string[] {
  const firstWallet = entries.find((e) => e.kind === 'wallet')?.index;
  if (firstWallet === undefined) return [];
  const first = new Map<string, number>();
  for (const e of entries) if (e.date !== null && !first.has(e.date)) first.set(e.date, e.index);
  return [...first].filter(([, index]) => index > firstWallet).map(([date]) => date).sort();
}
