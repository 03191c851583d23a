// The disclosure bundle: what the owner hands one auditor to open chosen nights. It names the wallet,
// so whoever holds it can follow the account's whole public history on the chain.
import { readFileSync } from 'node:fs';
import { ADDRESS, DIGEST_BASE64, payloadProblem, readSalt, type NightPayload } from '../contract/audit/commitment.ts';
import { NONCE } from '../contract/audit/control.ts';
import { isCalendarDate } from '../contract/dates.ts';

export const BUNDLE_FORMAT = 'public-stats audit bundle v1';
export const BUNDLE_WARNING = 'This bundle names the account\'s wallet: whoever holds it can follow the account\'s whole public history on the chain. Give it to the auditor alone.';

export interface BundleNight { date: string; log_index: number; salt: string; payload: NightPayload }

export interface Bundle {
  format: typeof BUNDLE_FORMAT;
  warning: string;
  demo: boolean;
  origin: string;
  log_key: string;
  /** The draw the nights came from: k nights from the root of checkpoint `checkpoint`; null for nights named by the owner. */
  sample: { k: number; checkpoint: number } | null;
  wallet: { address: string; salt: string; commitment: string };
  control: { nonce: string; signature: string };
  nights: BundleNight[];
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const index = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

/** Reads a bundle file; throws a sentence naming what is wrong. */
export function readBundle(file: string): Bundle {
  let value: unknown;
  try { value = JSON.parse(readFileSync(file, 'utf8')); } catch (error) {
    throw new Error(`${file} is not a readable JSON file (${(error as Error).message})`);
  }
  const wrong = (why: string): never => { throw new Error(`${file} is not an audit bundle: ${why}`); };
  if (!isRecord(value) || value.format !== BUNDLE_FORMAT) return wrong(`its format is not "${BUNDLE_FORMAT}"`);
  const b = value;
  if (typeof b.demo !== 'boolean' || typeof b.origin !== 'string' || typeof b.log_key !== 'string') wrong('demo, origin or log_key is missing');
  if (b.sample !== null && !(isRecord(b.sample) && index(b.sample.k) && index(b.sample.checkpoint))) wrong('sample is neither null nor {k, checkpoint}');
  const w = b.wallet;
  if (!isRecord(w) || typeof w.address !== 'string' || !ADDRESS.test(w.address) || !readSalt(w.salt) || typeof w.commitment !== 'string' || !DIGEST_BASE64.test(w.commitment)) {
    wrong('wallet is not {address (lowercase 0x), salt, commitment}');
  }
  const c = b.control;
  if (!isRecord(c) || typeof c.nonce !== 'string' || !NONCE.test(c.nonce) || typeof c.signature !== 'string' || !/^0x[0-9a-fA-F]+$/.test(c.signature)) {
    wrong('control is not {nonce, signature (0x hex)}');
  }
  if (!Array.isArray(b.nights) || b.nights.length === 0) wrong('it opens no night');
  for (const [i, n] of (b.nights as unknown[]).entries()) {
    if (!isRecord(n) || typeof n.date !== 'string' || !isCalendarDate(n.date) || !index(n.log_index) || !readSalt(n.salt)) wrong(`night ${i + 1} is not {date, log_index, salt, payload}`);
    const problem = payloadProblem((n as Record<string, unknown>).payload);
    if (problem) wrong(`night ${i + 1}: ${problem}`);
  }
  return value as unknown as Bundle;
}
