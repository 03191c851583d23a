// Checks a partition run's whole history (tests/support/partition-history.ts) against what the
// surviving primary holds at the end. checkHistory runs every check; each returns the violations it
// found, as sentences; none is a pass.
//   lost        every heartbeat and night a client saw acknowledged, at any time in the run, is on the
//               surviving primary (a write of unknown outcome may be there or not)
//   not a prefix  every checkpoint served to a reader, signed by a writer, cosigned by the witness or
//               stored on the survivor is a prefix of the survivor's log, shown by a consistency proof
//               (RFC 9162) from its size to the survivor's: no fork, no lost tail
//   overlap     no two writes on two different servers were both under way and both acknowledged:
//               the spans from each heartbeat's start to its acknowledgement, whatever the servers'
//               names and however often the primary moved (A, B, then A again)
//   unavailable every health answer was an HTTP 200 (a status it states), none an error, hung or late
//   shrank      no reader was served a checkpoint smaller than one it was served before
//   silent reader  every reader answered throughout: one that stopped is a failure, not a clean record
//   halted      the surviving log is not halted
// The history's times are one machine's clock, so they compare across processes.
import { base64 } from '../../contract/log-key.ts';
import { verifyConsistency } from '../../contract/tlog/consistency.ts';
import { buildTree } from '../../contract/tlog/merkle.ts';
import { decodeBase64 } from '../../contract/tlog/vkey.ts';
import type { HeartbeatAck, History } from './partition-history.ts';

/** What the surviving primary holds at the end, read in one snapshot. */
export interface Survivor {
  /** When it was read (epoch ms, just before the snapshot): whatever was acknowledged before is in it. */
  readAt: number;
  heartbeats: { writer: string; at: string }[];
  payouts: Map<string, number>;
  /** The log's entries in order, each leaf's bytes as text. */
  entries: string[];
  /** The checkpoints it stores. */
  checkpoints: { size: number; root: string }[];
  /** Why its log is halted, if it is. */
  halted: string | null;
}

export type Check = 'lost' | 'not a prefix' | 'overlap' | 'unavailable' | 'shrank' | 'silent reader' | 'halted';

export interface Failure { check: Check; found: string }

export interface CheckOptions {
  /** Readers that must answer throughout, besides every reader the history names. */
  readers?: string[];
  /** From when every reader must answer (epoch ms); by default from each one's first answer. */
  from?: number;
  /** Until when every reader must answer; by default until the survivor was read. */
  to?: number;
  /** The longest a reader may go without an answer (ms). */
  silentMs?: number;
  /** The longest a health answer may take (ms). */
  lateMs?: number;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Every check over the whole history. */
export async function checkHistory(history: History, survivor: Survivor, options: CheckOptions = {}): Promise<Failure[]> {
  const tag = (check: Check, found: string[]) => found.map((f) => ({ check, found: f }));
  return [
    ...tag('lost', lostWrites(history, survivor)),
    ...tag('not a prefix', await notPrefixes(history, survivor)),
    ...tag('overlap', overlaps(history)),
    ...tag('unavailable', unavailable(history, options.lateMs)),
    ...tag('shrank', shrank(history)),
    ...tag('silent reader', silentReaders(history, { ...options, to: options.to ?? survivor.readAt })),
    ...tag('halted', survivor.halted === null ? [] : [`the surviving log is halted: ${survivor.halted}`]),
  ];
}

/** Acknowledged writes, from the whole run up to the survivor's reading, missing on the survivor. */
export function lostWrites(history: History, survivor: Survivor): string[] {
  const lost: string[] = [];
  const beats = new Set(survivor.heartbeats.map((h) => `${h.writer} ${iso(Date.parse(h.at))}`));
  for (const ack of history.acks.filter((a) => a.ackedAt < survivor.readAt)) {
    if (!beats.has(`${ack.writer} ${iso(Date.parse(ack.at))}`)) {
      lost.push(`heartbeat ${ack.at} of ${ack.writer}, acknowledged on ${ack.server} at ${iso(ack.ackedAt)}, is not on the surviving primary`);
    }
  }
  for (const night of history.nights.filter((n) => n.outcome === 'ok' && n.endedAt < survivor.readAt)) {
    const stored = survivor.payouts.get(night.date);
    if (stored !== night.usd) {
      lost.push(`night ${night.date} (${night.usd} USD), imported by ${night.importer} and acknowledged at ${iso(night.endedAt)}, is ${stored === undefined ? 'missing' : `${stored} USD`} on the surviving primary`);
    }
  }
  return lost;
}

/**
 * Checkpoints served, signed, cosigned or stored before the survivor was read that are not a prefix of
 * its log: beyond its size, or with a root the consistency proof from the survivor's tree does not
 * lead to. Each names who had it, and when first.
 */
export async function notPrefixes(history: History, survivor: Survivor): Promise<string[]> {
  const claims = new Map<string, { size: number; root: string; who: Map<string, number> }>();
  const claim = (size: number, root: string, who: string, at: number) => {
    const key = `${size} ${root}`;
    const c = claims.get(key) ?? { size, root, who: new Map<string, number>() };
    claims.set(key, c);
    if (!c.who.has(who)) c.who.set(who, at);
  };
  for (const read of history.reads) {
    if (read.at + read.ms >= survivor.readAt) continue;
    for (const c of read.checkpoints ?? []) claim(c.size, c.root, `served to ${read.reader} (${read.what})`, read.at);
  }
  for (const s of history.signed.filter((e) => e.at < survivor.readAt)) claim(s.size, s.root, `signed by ${s.by}`, s.at);
  for (const c of history.cosigned.filter((e) => e.at < survivor.readAt)) claim(c.size, c.root, `cosigned by ${c.by}`, c.at);
  for (const c of survivor.checkpoints) claim(c.size, c.root, 'stored on the surviving primary', survivor.readAt);
  const utf8 = new TextEncoder();
  const tree = await buildTree(survivor.entries.map((e) => utf8.encode(e)));
  const head = await tree.root();
  const found: string[] = [];
  for (const c of [...claims.values()].sort((a, b) => a.size - b.size)) {
    const who = [...c.who].sort((a, b) => a[1] - b[1]).map(([w, at]) => (w.startsWith('stored') ? w : `${w} at ${iso(at)}`)).join(', ');
    const root = decodeBase64(c.root);
    const what = `the checkpoint of ${c.size} entries with root ${c.root} (${who})`;
    if (!Number.isSafeInteger(c.size) || c.size < 0 || root?.length !== 32) found.push(`${what} is not a checkpoint`);
    else if (c.size > tree.size) found.push(`${what} is not a prefix of the surviving log: it holds ${tree.size} entries (root ${base64(head)})`);
    else if (!(await verifyConsistency(c.size, tree.size, root, head, await tree.consistencyProof(c.size)))) {
      found.push(`${what} is not a prefix of the surviving log of ${tree.size} entries: the consistency proof leads to ${base64(await tree.root(c.size))}`);
    }
  }
  return found;
}

const describeAck = (a: HeartbeatAck) => `${a.writer}'s heartbeat ${a.at} on ${a.server} (begun ${iso(a.began)}, acknowledged ${iso(a.ackedAt)})`;

/**
 * Pairs of acknowledged heartbeats on two different servers whose spans (from the heartbeat's start
 * to its acknowledgement) overlap: both servers took writes at one moment. Given per pair of servers:
 * the first such pair, and how many more.
 */
export function overlaps(history: History): string[] {
  const acks = history.acks.filter((a) => a.server !== 'unknown').sort((a, b) => a.began - b.began);
  const byServers = new Map<string, { first: [HeartbeatAck, HeartbeatAck]; more: number }>();
  for (let i = 0; i < acks.length; i++) {
    const x = acks[i]!;
    // Sorted by start: every later heartbeat that began before x was acknowledged overlaps it.
    for (let j = i + 1; j < acks.length && acks[j]!.began <= x.ackedAt; j++) {
      const y = acks[j]!;
      if (y.server === x.server) continue;
      const key = [x.server, y.server].sort().join(' ');
      const seen = byServers.get(key);
      if (seen) seen.more++;
      else byServers.set(key, { first: [x, y], more: 0 });
    }
  }
  return [...byServers.values()].map(({ first: [x, y], more }) =>
    `${describeAck(x)} and ${describeAck(y)} were both under way and both acknowledged: two primaries took writes at once${more ? ` (and ${more} more such pairs)` : ''}`);
}

/** Health answers that were not an HTTP 200 within `lateMs`, by reader. */
export function unavailable(history: History, lateMs = 5000): string[] {
  const bad = history.reads.filter((r) => (r.what === 'site_health' || r.what === 'api_health') && (r.status !== 200 || r.ms > lateMs));
  const byReader = new Map<string, typeof bad>();
  for (const r of bad) byReader.set(`${r.reader} ${r.what}`, [...(byReader.get(`${r.reader} ${r.what}`) ?? []), r]);
  return [...byReader].map(([who, reads]) =>
    `${who}: ${reads.length} answers not a 200 within ${lateMs} ms (${[...new Set(reads.map((r) => String(r.status)))].join(', ')}), first at ${iso(reads[0]!.at)}`);
}

/** Readers of /log/checkpoint that were served a smaller checkpoint after a larger one. */
export function shrank(history: History): string[] {
  const found: string[] = [];
  const largest = new Map<string, { size: number; at: number }>();
  for (const read of [...history.reads].filter((r) => r.what === 'checkpoint' && r.checkpoints).sort((a, b) => a.at - b.at)) {
    const size = read.checkpoints![0]!.size;
    const before = largest.get(read.reader);
    if (before && size < before.size) found.push(`${read.reader} was served size ${size} at ${iso(read.at)} after size ${before.size} at ${iso(before.at)}`);
    else if (!before || size > before.size) largest.set(read.reader, { size, at: read.at });
  }
  return found;
}

/**
 * Readers that went more than `silentMs` without an answer (a reader asks every 250 ms and gives up
 * on an answer after 5 s): between two answers, after its last one until `to`, or from `from` to its
 * first. A reader named in `readers` that never answered is one too.
 */
export function silentReaders(history: History, { readers = [], from, to, silentMs = 15_000 }: CheckOptions & { to: number }): string[] {
  const heard = new Map<string, number[]>(readers.map((r) => [r, []]));
  for (const r of history.reads) heard.set(r.reader, [...(heard.get(r.reader) ?? []), r.at + r.ms]);
  const found: string[] = [];
  for (const [reader, times] of heard) {
    if (!times.length) {
      found.push(`${reader} answered nothing in the whole run`);
      continue;
    }
    const points = [...(from === undefined ? [] : [from]), ...times.sort((a, b) => a - b).filter((t) => t <= to), to];
    for (let i = 1; i < points.length; i++) {
      const [a, b] = [points[i - 1]!, points[i]!];
      if (b - a > silentMs) found.push(`${reader} gave no answer for ${((b - a) / 1000).toFixed(1)} s, from ${iso(a)} to ${iso(b)}${i === points.length - 1 ? ' (the end of the run)' : ''}: a reader must answer throughout`);
    }
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
