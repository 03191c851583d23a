// An audit starts in the log, before anyone knows which nights it opens (commit and reveal): the
// auditor picks a nonce, gives the owner only its SHA-256 with a checkpoint already cosigned and how
// many nights to draw, and the owner logs an opening entry naming them. The auditor reveals the nonce
// once a cosigned checkpoint holds that entry, and the draw (./sample.ts) is made from the nonce and the
// named checkpoint's root. So every audit ever started is witnessed, and nobody learns a draw before
// its audit is in the log. The entry, in RFC 8785 JSON:
//   {"auditor":"<vkey>","checkpoint":<size>,"kind":"audit","nonce_sha256":"<64 hex>","sample":<K>}
// or, for nights the owner names instead of a draw, "nights":["YYYY-MM-DD",…] in place of "sample".
import { createHash } from 'node:crypto';
import { isCalendarDate } from '../dates.ts';
import { canonicalJson } from './canonical-json.ts';

/** An auditor's nonce: 32 to 128 letters, digits, dots, colons, underscores or hyphens, so at least 128 random bits fit (32 hex digits). */
export const AUDIT_NONCE = /^[A-Za-z0-9._:-]{32,128}$/;
export const NONCE_SHA256 = /^[0-9a-f]{64}$/;

/** The hash the auditor hands the owner: lowercase hex of SHA-256 over the nonce's UTF-8 bytes. */
export const nonceSha256 = (nonce: string): string => createHash('sha256').update(nonce, 'utf8').digest('hex');

export interface AuditOpening {
  auditor: string;
  checkpoint: number;
  nonce_sha256: string;
  /** How many nights to draw; absent when the owner names the nights. */
  sample?: number;
  /** The nights the owner names; absent for a draw. */
  nights?: string[];
}

/** The opening's log entry text. */
export function openingEntry(o: AuditOpening): string {
  const problem = openingProblem({ ...o, kind: 'audit' });
  if (problem) throw new Error(problem);
  return canonicalJson({ kind: 'audit', ...o, ...(o.nights ? { nights: [...o.nights].sort() } : {}) });
}

/** What is wrong with a parsed log entry as an opening, or undefined when it is one. */
export function openingProblem(value: Record<string, unknown>): string | undefined {
  const keys = Object.keys(value).sort().join(',');
  const chosen = 'sample' in value ? 'sample' : 'nights';
  if (keys !== ['auditor', 'checkpoint', 'kind', chosen, 'nonce_sha256'].sort().join(',')) return `an audit opening has the keys auditor, checkpoint, kind, nonce_sha256 and sample or nights, not ${keys}`;
  if (value.kind !== 'audit') return 'an audit opening is of kind "audit"';
  if (typeof value.auditor !== 'string' || !/^[^+\s]+\+[0-9a-f]{8}\+[A-Za-z0-9+/]+=*$/.test(value.auditor)) return "an audit opening's auditor is a note verifier key";
  if (!Number.isSafeInteger(value.checkpoint) || (value.checkpoint as number) < 1) return "an audit opening's checkpoint is a tree size of at least 1";
  if (typeof value.nonce_sha256 !== 'string' || !NONCE_SHA256.test(value.nonce_sha256)) return "an audit opening's nonce_sha256 is 64 lowercase hex digits";
  if (chosen === 'sample' && (!Number.isSafeInteger(value.sample) || (value.sample as number) < 1)) return "an audit opening's sample is a number of nights of at least 1";
  if (chosen === 'nights') {
    const nights = value.nights;
    if (!Array.isArray(nights) || nights.length === 0 || !nights.every((d) => typeof d === 'string' && isCalendarDate(d)) || new Set(nights).size !== nights.length) {
      return "an audit opening's nights are distinct dates YYYY-MM-DD";
    }
  }
  return undefined;
}

/** The opening a log entry is, or undefined when it is another kind of entry. */
export function readOpening(entry: Record<string, unknown>): AuditOpening | undefined {
  if (entry.kind !== 'audit' || openingProblem(entry)) return undefined;
  const { auditor, checkpoint, nonce_sha256, sample, nights } = entry as unknown as AuditOpening;
  return { auditor, checkpoint, nonce_sha256, ...(sample !== undefined ? { sample } : { nights }) };
}
