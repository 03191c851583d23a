// The disclosure bundle: what the owner hands one auditor to open the nights an audit's opening
// chose. It names the wallet, so whoever holds it can follow the account's whole public history on
// the chain. Its nights are grouped by the wallet commitment in force when each was logged, one
// section per wallet commitment, each with the wallet's opening and its owner's control signature.
import { readFileSync } from 'node:fs';
import { ADDRESS, DIGEST_BASE64, payloadProblem, readSalt, type NightPayload } from '../contract/audit/commitment.ts';
import { AUDIT_NONCE } from '../contract/audit/opening.ts';
import { isCalendarDate } from '../contract/dates.ts';

export const BUNDLE_FORMAT = 'public-stats audit bundle v2';
export const BUNDLE_WARNING = 'This bundle names the account\'s wallet: whoever holds it can follow the account\'s whole public history on the chain. Give it to the auditor alone.';

export interface BundleNight { date: string; log_index: number; salt: string; payload: NightPayload }

export interface BundleSection {
  wallet: { address: string; salt: string; commitment: string };
  /** The wallet owner's EIP-191 signature of the control message for this wallet and the audit's nonce. */
  signature: string;
  nights: BundleNight[];
}

export interface Bundle {
  format: typeof BUNDLE_FORMAT;
  warning: string;
  demo: boolean;
  origin: string;
  log_key: string;
  /** The index of the audit's opening entry in the log. */
  opening: number;
  /** The auditor's revealed nonce, whose SHA-256 the opening names. */
  nonce: string;
  sections: BundleSection[];
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
  if (!index(b.opening)) wrong('opening is not an entry index');
  if (typeof b.nonce !== 'string' || !AUDIT_NONCE.test(b.nonce)) wrong('nonce is not the auditor\'s nonce (32 to 128 letters, digits, dots, colons, underscores or hyphens)');
  if (!Array.isArray(b.sections) || b.sections.length === 0) wrong('it has no section');
  for (const [s, section] of (b.sections as unknown[]).entries()) {
    const where = `section ${s + 1}`;
    if (!isRecord(section)) return wrong(`${where} is not an object`);
    const w = section.wallet;
    if (!isRecord(w) || typeof w.address !== 'string' || !ADDRESS.test(w.address) || !readSalt(w.salt) || typeof w.commitment !== 'string' || !DIGEST_BASE64.test(w.commitment)) {
      wrong(`${where}: wallet is not {address (lowercase 0x), salt, commitment}`);
    }
    if (typeof section.signature !== 'string' || !/^0x[0-9a-fA-F]+$/.test(section.signature)) wrong(`${where}: signature is not 0x and hex digits`);
    if (!Array.isArray(section.nights) || section.nights.length === 0) wrong(`${where} opens no night`);
    for (const [i, n] of (section.nights as unknown[]).entries()) {
      if (!isRecord(n) || typeof n.date !== 'string' || !isCalendarDate(n.date) || !index(n.log_index) || !readSalt(n.salt)) wrong(`${where}, night ${i + 1} is not {date, log_index, salt, payload}`);
      const problem = payloadProblem((n as Record<string, unknown>).payload);
      if (problem) wrong(`${where}, night ${i + 1}: ${problem}`);
    }
  }
  return value as unknown as Bundle;
}
