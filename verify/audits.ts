// Audits of the log: attestations the site publishes under /log/audits, each a signed note
// (https://c2sp.org/signed-note) by an auditor's own Ed25519 key (type 0x01), which its body names.
// The body is eight lines:
//
//   public-stats audit attestation v1
//   origin <the log's origin>
//   checkpoint <tree size> <base64 root hash>
//   chain <chain id>
//   nights <YYYY-MM-DD,YYYY-MM-DD,...>
//   matched <how many of those nights matched the chain>
//   date <YYYY-MM-DD, when the auditor checked>
//   auditor <the auditor's verifier key>
//
// Anyone checks the signature by the key the body names; whether that auditor counts is the reader's
// policy: its `auditor <vkey>` lines.
import { isRecord, parseJson, plural } from '../log-reader/encoding.ts';
import { fail, Failure, Stale } from '../log-reader/failure.ts';
import { decoded, expectOk, get, MAX_ANSWER_BYTES } from '../log-reader/http.ts';
import { ED25519_NOTE, parseNote, parseVkey, signedBy, vkeyOf, type NoteKey } from '../log-reader/notes.ts';
import type { Policy } from './policy.ts';
import { treeHash } from '../log-reader/tree.ts';

const HEADER = 'public-stats audit attestation v1';
const FIELDS = ['origin', 'checkpoint', 'chain', 'nights', 'matched', 'date', 'auditor'] as const;
const WHOLE = /^(0|[1-9][0-9]*)$/;
/** A SHA-256 hash in standard base64: a checkpoint's root, a night's commitment. */
const HASH_BASE64 = /^[A-Za-z0-9+/]{43}=$/;

export interface Attestation {
  origin: string;
  size: number;
  root: Buffer;
  chainId: number;
  nights: string[];
  matched: number;
  date: string;
  /** The auditor's key, as the body names it; the note carries a signature by it that verifies. */
  key: NoteKey;
  note: string;
}

/** A date YYYY-MM-DD that is a day of the calendar. */
export function isCalendarDate(text: string): boolean {
  const time = /^\d{4}-\d{2}-\d{2}$/.test(text) ? Date.parse(`${text}T00:00:00Z`) : NaN;
  return !Number.isNaN(time) && new Date(time).toISOString().slice(0, 10) === text;
}

/** Reads an attestation and checks its signature by the key its body names; a failure names what is wrong. */
export function readAttestation(note: string, what: string): Attestation {
  const parsed = parseNote(note, what);
  const lines = parsed.text.slice(0, -1).split('\n');
  const notOne = (why: string): never => fail(`${what} is not an audit attestation (${HEADER}): ${why}`);
  if (lines[0] !== HEADER) notOne(`it does not begin "${HEADER}"`);
  if (lines.length !== 1 + FIELDS.length) notOne(`its body is not the ${1 + FIELDS.length} lines of version 1`);
  const value = Object.fromEntries(FIELDS.map((name, i) => {
    const line = lines[i + 1]!;
    return [name, line.startsWith(`${name} `) && line.length > name.length + 1 ? line.slice(name.length + 1) : notOne(`line ${i + 2} is not "${name} …"`)];
  })) as Record<(typeof FIELDS)[number], string>;
  const checkpoint = /^(\S+) (\S+)$/.exec(value.checkpoint);
  if (!checkpoint || !WHOLE.test(checkpoint[1]!) || !Number.isSafeInteger(Number(checkpoint[1])) || !HASH_BASE64.test(checkpoint[2]!)) {
    notOne('its checkpoint is not "<tree size> <base64 root hash>"');
  }
  if (!/^[1-9][0-9]*$/.test(value.chain) || !Number.isSafeInteger(Number(value.chain))) notOne('its chain is not a chain id');
  const nights = value.nights.split(',');
  if (!nights.every(isCalendarDate) || new Set(nights).size !== nights.length) notOne('its nights are not distinct dates YYYY-MM-DD separated by commas');
  const matched = WHOLE.test(value.matched) ? Number(value.matched) : NaN;
  if (!(matched <= nights.length)) notOne(`its matched count is not a number from 0 to its ${plural(nights.length, 'night')}`);
  if (!isCalendarDate(value.date)) notOne('its date is not a date YYYY-MM-DD');
  const key = parseVkey(value.auditor, ED25519_NOTE);
  if (typeof key === 'string') return notOne(`its auditor key is not a note verifier key of type 0x01: ${key}`);
  if (!signedBy(parsed, key, what, 'its auditor key')) fail(`${what} carries no signature by the auditor key its body names (${vkeyOf(key)})`);
  return {
    origin: value.origin, size: Number(checkpoint![1]), root: Buffer.from(checkpoint![2]!, 'base64'), chainId: Number(value.chain),
    nights, matched, date: value.date, key, note,
  };
}

/** Whether the policy lists the attestation's key (name and public key) as an auditor's. */
export const listedAuditor = (policy: Pick<Policy, 'auditors'>, key: NoteKey): boolean =>
  policy.auditors.some((auditor) => auditor.name === key.name && auditor.raw.equals(key.raw));

/** The part of the verified log an attestation is checked against: its origin, its entries as served and their subtree hashes. */
export interface AuditedLog { origin: string; entries: Buffer[]; levels: Buffer[][] }

/**
 * The line for one attestation of the log: counted when the policy lists its auditor, and then every
 * night it names has a commitment to its reward transfers in the log within its checkpoint, and its
 * checkpoint is a state of the log; not counted (and not a failure) when the policy does not list it.
 */
export function checkAttestation(a: Attestation, policy: Pick<Policy, 'auditors'>, log: AuditedLog): string {
  const name = a.key.name;
  if (a.origin !== log.origin) fail(`the attestation by ${name} on ${a.date} is an audit of the log "${a.origin}", not of "${log.origin}"`);
  if (!listedAuditor(policy, a.key)) return `  attestation by ${name} (key ${vkeyOf(a.key)}) is not by an auditor the policy lists: not counted`;
  const audit = `the audit by ${name} on ${a.date}`;
  // The site serves its audits and its checkpoint from one state, but caches may hold an older checkpoint.
  if (a.size > log.entries.length) throw new Stale(`${audit} names checkpoint ${a.size}, but the verified log holds ${log.entries.length} entries (even after waiting for caches)`);
  const root = treeHash(log.levels, 0, a.size);
  if (!root.equals(a.root)) {
    fail(`${audit} names checkpoint ${a.size} with the root ${a.root.toString('base64')}, but the log's first ${a.size} entries hash to ${root.toString('base64')}: not a state of this log`);
  }
  const latest = new Map<string, number>();
  log.entries.slice(0, a.size).forEach((bytes, index) => {
    const entry = parseJson(bytes, `log entry ${index}`);
    if (isRecord(entry) && typeof entry.date === 'string') latest.set(entry.date, index);
  });
  for (const night of a.nights) {
    const index = latest.get(night);
    if (index === undefined) fail(`night ${night} of ${audit} is not in the log's first ${a.size} entries (checkpoint ${a.size})`);
    const entry = parseJson(log.entries[index!]!, `log entry ${index}`) as Record<string, unknown>;
    const transfers = entry.transfers;
    if (transfers === undefined) fail(`night ${night} of ${audit} carries no commitment to its reward transfers: its latest entry within checkpoint ${a.size} (entry ${index}) has no "transfers"`);
    if (typeof transfers !== 'string' || !HASH_BASE64.test(transfers)) fail(`night ${night} of ${audit}: the "transfers" of its latest entry within checkpoint ${a.size} (entry ${index}) is not the base64 of 32 bytes`);
  }
  return `  audit by ${name} on ${a.date}: ${a.matched} of ${plural(a.nights.length, 'night')} matched against checkpoint ${a.size} (origin ${a.origin})`;
}

interface Published { note: string; published_at: string }

/** The audits document: {"audits":[{"note": the attestation verbatim, "published_at": an ISO time}, …]}. */
export function parseAudits(bytes: Buffer, what: string): Published[] {
  const document = parseJson(bytes, what);
  const notList = (): never => fail(`${what} is not a list of attestations ({"audits":[{"note", "published_at"}, …]})`);
  if (!isRecord(document) || !Array.isArray(document.audits)) return notList();
  return document.audits.map((item: unknown) => (isRecord(item) && typeof item.note === 'string' && typeof item.published_at === 'string' && !Number.isNaN(Date.parse(item.published_at))
    ? { note: item.note, published_at: item.published_at } : notList()));
}

/**
 * Every attestation the site publishes for the log under `<prefix>/audits` (none when it serves no
 * such document), each checked: a line each, or one failure per attestation that fails.
 */
export async function checkAudits(site: URL, prefix: string, policy: Pick<Policy, 'auditors'>, log: AuditedLog): Promise<string[]> {
  const path = `${prefix}/audits`;
  const answer = await get(new URL(path, site), MAX_ANSWER_BYTES);
  if (answer.status === 404) return [`  no audit is published: the site serves no ${path}`];
  const published = parseAudits(decoded(expectOk(answer, path), path, MAX_ANSWER_BYTES), path);
  if (!published.length) return [`  no audit is published under ${path}`];
  const lines: string[] = [];
  const failures: string[] = [];
  for (const [i, { note }] of published.entries()) {
    try {
      lines.push(checkAttestation(readAttestation(note, `attestation ${i + 1} of ${path}`), policy, log));
    } catch (error) {
      if (!(error instanceof Failure)) throw error;
      failures.push(error.message);
    }
  }
  if (failures.length) fail(failures.join('\n'));
  return lines;
}
