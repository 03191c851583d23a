// The log as served, made from one landing_log record: its entries and tree, the latest checkpoint,
// every checkpoint ever signed and their listing, each night's latest entry and the audits' body.
import { datesMissing } from '../../contract/dates.ts';
import { base64 } from '../../contract/log-key.ts';
import { logPrefix } from '../../contract/paths.ts';
import type { AuditsRecord, LogRecord } from '../../contract/records.ts';
import { signerOf } from '../../contract/texts/witnessing.ts';
import { buildTree, type Tree } from '../../contract/tlog/merkle.ts';
import { strongEtag } from '../http.ts';

/** An entry is at most this long: bundles prefix each with a uint16. */
const MAX_ENTRY_BYTES = 0xffff;
/** A superseded checkpoint may still gain the cosignature of a round that was under way; after this, it never changes. */
const SETTLED_MS = 60_000;

interface Archived {
  size: number;
  /** The note with each witness's earliest cosignature. */
  text: string;
  settled: boolean;
}

export interface PublishedLog {
  origin: string;
  demo: boolean;
  entries: Uint8Array[];
  tree: Tree;
  /** The latest checkpoint with each witness's latest cosignature, and its strong validator. */
  checkpoint: string;
  checkpointEtag: string;
  verifierKey: string;
  policy: string | null;
  archive: Map<number, Archived>;
  /** The listing of the archive, as served. */
  listing: string;
  /** Each date's latest entry. */
  latest: Map<string, number>;
  /** Every published audit attestation of the log, as served, and its strong validator. */
  audits: string;
  auditsEtag: string;
  record: LogRecord;
}

const withLines = (note: string, lines: readonly string[]) => note + lines.map((line) => `${line}\n`).join('');

/** The audits as served: each attestation verbatim, with when it was published. */
export const auditsBody = (audits: LogRecord['audits']): string => `${JSON.stringify({ audits: audits.map(({ note, published_at, listed }) => ({ note, published_at, listed })) } satisfies AuditsRecord)}\n`;

/** The log as served, or undefined while nothing is signed. Throws when the entries do not give the checkpoint's root. */
export async function publishLog(record: LogRecord, siteUrl: string, now = Date.now()): Promise<PublishedLog | undefined> {
  const last = record.checkpoints.at(-1);
  if (!last) return undefined;
  const encoder = new TextEncoder();
  const entries = record.entries.map((entry) => encoder.encode(entry));
  const tooLong = entries.findIndex((entry) => entry.length > MAX_ENTRY_BYTES);
  if (tooLong >= 0) throw new Error(`log entry ${tooLong} is longer than an entry bundle can hold`);
  const tree = await buildTree(entries);
  if (tree.size !== last.size || base64(await tree.root()) !== last.root) throw new Error(`the log's ${tree.size} entries do not give the root of its checkpoint of ${last.size}`);
  const latest = new Map<string, number>();
  // Nights only: a wallet commitment's entry names no date.
  record.entries.forEach((entry, index) => {
    const { date } = JSON.parse(entry) as { date?: unknown };
    if (typeof date === 'string') latest.set(date, index);
  });
  const demo = record.demo === true;
  const origin = last.note.slice(0, last.note.indexOf('\n'));
  const checkpoint = withLines(last.note, record.cosignatures);
  const archive = new Map<number, Archived>();
  record.checkpoints.forEach((c, i) => {
    const next = record.checkpoints[i + 1];
    archive.set(c.size, { size: c.size, text: withLines(c.note, c.cosignatures), settled: next !== undefined && now - Date.parse(next.signed_at) > SETTLED_MS });
  });
  const prefix = siteUrl + logPrefix(demo);
  const listing = `${JSON.stringify({
    origin,
    vkey: record.vkey,
    policy: record.policy === null ? null : `${prefix}policy`,
    checkpoints: record.checkpoints.map((c) => ({
      size: c.size, root: c.root, signed_at: c.signed_at, quorum_at: c.quorum_at, witnesses: c.cosignatures.map(signerOf), url: `${prefix}checkpoint/${c.size}`,
    })),
  })}\n`;
  const audits = auditsBody(record.audits);
  return { origin, demo, entries, tree, checkpoint, checkpointEtag: await strongEtag(checkpoint), verifierKey: record.vkey ?? '', policy: record.policy, archive, listing, latest, audits, auditsEtag: await strongEtag(audits), record };
}

/** The dates between the first and the last night the log holds for which it holds nothing. */
export function logGaps(latest: ReadonlyMap<string, number>): string[] {
  const dates = [...latest.keys()].sort();
  return dates.length ? datesMissing(dates, dates[0]!, dates.at(-1)!) : [];
}
