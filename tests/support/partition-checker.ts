// Checks a partition test's history (tests/support/partition-history.ts) against what the database
// holds at the end. Each check returns the violations it found, as sentences; none is a pass.
//   lostWrites      every heartbeat and night a client saw acknowledged is on the surviving primary
//                   (a write of unknown outcome may be there or not)
//   forks           one root per size: across every reader, every checkpoint stored at the end and every
//                   checkpoint a witness cosigned, no two different checkpoints of one size
//   overlaps        no moment when two servers both acknowledged writes: every acknowledgement on the
//                   old primary came before the first write the new one acknowledged began
//   unavailable     every health answer was an HTTP 200 (a status it states), none an error, hung or late
//   shrank          no reader was served a checkpoint smaller than one it was served before
// The history's clocks are one machine's, so times compare across processes.
import type { History } from './partition-history.ts';

/** What the surviving primary holds at the end, and what the witnesses cosigned. */
export interface FinalState {
  heartbeats: { writer: string; at: string }[];
  payouts: Map<string, number>;
  checkpoints: { size: number; root: string }[];
  /** Checkpoints a witness cosigned (its state, and the cosignatures stored). */
  cosigned: { size: number; root: string }[];
}

/** Acknowledged writes missing at the end. */
export function lostWrites(history: History, final: FinalState): string[] {
  const lost: string[] = [];
  const beats = new Set(final.heartbeats.map((h) => `${h.writer} ${new Date(h.at).toISOString()}`));
  for (const ack of history.acks) {
    if (!beats.has(`${ack.writer} ${new Date(ack.at).toISOString()}`)) {
      lost.push(`heartbeat ${ack.at} of ${ack.writer}, acknowledged on ${ack.server} at ${new Date(ack.ackedAt).toISOString()}, is not on the surviving primary`);
    }
  }
  for (const night of history.nights.filter((n) => n.outcome === 'ok')) {
    const stored = final.payouts.get(night.date);
    if (stored !== night.usd) {
      lost.push(`night ${night.date} (${night.usd} USD), imported by ${night.importer} and acknowledged at ${new Date(night.endedAt).toISOString()}, is ${stored === undefined ? 'missing' : `${stored} USD`} on the surviving primary`);
    }
  }
  return lost;
}

/** Sizes for which two different roots were served, stored or cosigned, with who saw each. */
export function forks(history: History, final: FinalState): string[] {
  const seen = new Map<number, Map<string, Set<string>>>();
  const see = (size: number, root: string, by: string) => {
    const roots = seen.get(size) ?? new Map<string, Set<string>>();
    seen.set(size, roots);
    const who = roots.get(root) ?? new Set<string>();
    roots.set(root, who);
    who.add(by);
  };
  for (const read of history.reads) for (const c of read.checkpoints ?? []) see(c.size, c.root, `${read.reader} (${read.what})`);
  for (const c of final.checkpoints) see(c.size, c.root, 'the surviving primary');
  for (const c of final.cosigned) see(c.size, c.root, 'a witness');
  const found: string[] = [];
  for (const [size, roots] of [...seen].sort((a, b) => a[0] - b[0])) {
    if (roots.size > 1) found.push(`size ${size} has ${roots.size} roots: ${[...roots].map(([root, who]) => `${root} (${[...who].join(', ')})`).join(' vs ')}`);
  }
  return found;
}

/**
 * Acknowledgements on `oldPrimary` that came after the first write the new primary acknowledged had
 * begun (its heartbeat's own time): a moment when both sides took writes.
 */
export function overlaps(history: History, oldPrimary: string, newPrimary: string): string[] {
  const onNew = history.acks.filter((a) => a.server === newPrimary).sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  const firstNew = onNew[0];
  if (!firstNew) return [];
  const began = Date.parse(firstNew.at);
  return history.acks.filter((a) => a.server === oldPrimary && a.ackedAt >= began).map((a) =>
    `${a.writer}'s heartbeat ${a.at} was acknowledged on the old primary ${oldPrimary} at ${new Date(a.ackedAt).toISOString()}, after the new primary ${newPrimary} began its first acknowledged write (${firstNew.writer}'s heartbeat ${firstNew.at})`);
}

/** Health answers that were not an HTTP 200 within `lateMs`, by reader. */
export function unavailable(history: History, lateMs = 5000): string[] {
  const bad = history.reads.filter((r) => (r.what === 'site_health' || r.what === 'api_health') && (r.status !== 200 || r.ms > lateMs));
  const byReader = new Map<string, typeof bad>();
  for (const r of bad) byReader.set(`${r.reader} ${r.what}`, [...(byReader.get(`${r.reader} ${r.what}`) ?? []), r]);
  return [...byReader].map(([who, reads]) =>
    `${who}: ${reads.length} answers not a 200 within ${lateMs} ms (${[...new Set(reads.map((r) => String(r.status)))].join(', ')}), first at ${new Date(reads[0]!.at).toISOString()}`);
}

/** Readers of /log/checkpoint that were served a smaller checkpoint after a larger one. */
export function shrank(history: History): string[] {
  const found: string[] = [];
  const largest = new Map<string, { size: number; at: number }>();
  for (const read of [...history.reads].filter((r) => r.what === 'checkpoint' && r.checkpoints).sort((a, b) => a.at - b.at)) {
    const size = read.checkpoints![0]!.size;
    const before = largest.get(read.reader);
    if (before && size < before.size) found.push(`${read.reader} was served size ${size} at ${new Date(read.at).toISOString()} after size ${before.size} at ${new Date(before.at).toISOString()}`);
    else if (!before || size > before.size) largest.set(read.reader, { size, at: read.at });
  }
  return found;
}

/** How the health answers read, for the report: per reader and endpoint, the count of each (HTTP status, health status). */
export function healthSummary(history: History): string {
  const counts = new Map<string, number>();
  for (const r of history.reads.filter((r) => r.what === 'site_health' || r.what === 'api_health')) {
    const key = `${r.reader} ${r.what} ${r.status}${r.health ? ` ${r.health.status}` : ''}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].sort().map(([k, n]) => `${n} × ${k}`).join(', ');
}
