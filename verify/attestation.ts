// An auditor's attestation: a signed note (https://c2sp.org/signed-note) by the auditor's own
// Ed25519 key (type 0x01), which its body names on its last line. Version 2's body:
//
//   public-stats audit attestation v2
//   origin <the log's origin>
//   log-key <the log's verifier key>
//   checkpoint <tree size> <base64 root hash>     (the checkpoint the nights were chosen from and judged within)
//   opening <index of the log entry that opened the audit>
//   chosen drawn <K> rule v2 nonce <N>            (or: chosen named, the nights the owner named)
//   chain <chain id>
//   payers <lowercase hex SHA-256 of the payer list used>
//   night <YYYY-MM-DD> <entry index, or -> pass|fail   (one a night, dates ascending)
//   result pass|fail
//   date <YYYY-MM-DD, when the auditor checked>
//   auditor <the auditor's verifier key>
//
// Version 1's body is eight lines: the header "public-stats audit attestation v1", then origin,
// checkpoint, chain, nights <YYYY-MM-DD,...>, matched <count>, date and auditor. It is read, and
// never counted: it does not say how its nights were chosen, and a draw of v1 came from the
// checkpoint alone, which the owner can grind.
import { plural } from '../log-reader/encoding.ts';
import { fail } from '../log-reader/failure.ts';
import { ED25519_NOTE, parseNote, parseVkey, signedBy, vkeyOf, type NoteKey } from '../log-reader/notes.ts';
import { NONCE } from './draw.ts';

const HEADER_V1 = 'public-stats audit attestation v1';
const HEADER_V2 = 'public-stats audit attestation v2';
const FIELDS_V1 = ['origin', 'checkpoint', 'chain', 'nights', 'matched', 'date', 'auditor'] as const;
const WHOLE = /^(0|[1-9][0-9]*)$/;
const HASH_BASE64 = /^[A-Za-z0-9+/]{43}=$/;

interface Common { origin: string; size: number; root: Buffer; chainId: number; date: string; key: NoteKey; note: string }
/** Version 1: the nights named and how many matched the chain. */
export interface AttestationV1 extends Common { version: 1; nights: string[]; matched: number }
/** One night's result: its latest entry within the checkpoint (null: none) and whether it passed. */
export interface NightResult { date: string; index: number | null; pass: boolean }
/** How the nights were chosen: drawn by rule v2 with the revealed nonce, or named by the owner. */
export type Chosen = { drawn: true; k: number; nonce: string } | { drawn: false };
/** Version 2; `key` is the auditor's, named by the body and carrying a signature that verifies. */
export interface AttestationV2 extends Common { version: 2; logKey: NoteKey; opening: number; chosen: Chosen; payers: string; nights: NightResult[]; pass: boolean }
export type Attestation = AttestationV1 | AttestationV2;

/** A date YYYY-MM-DD that is a day of the calendar. */
export function isCalendarDate(text: string): boolean {
  const time = /^\d{4}-\d{2}-\d{2}$/.test(text) ? Date.parse(`${text}T00:00:00Z`) : NaN;
  return !Number.isNaN(time) && new Date(time).toISOString().slice(0, 10) === text;
}

const whole = (text: string | undefined): number => (text !== undefined && WHOLE.test(text) && Number.isSafeInteger(Number(text)) ? Number(text) : NaN);

/** Reads an attestation of either version and checks its signature by the key its body names; a failure names what is wrong. */
export function readAttestation(note: string, what: string): Attestation {
  const parsed = parseNote(note, what);
  const lines = parsed.text.slice(0, -1).split('\n');
  const header = lines[0] === HEADER_V1 || lines[0] === HEADER_V2 ? lines[0] : HEADER_V2;
  const notOne = (why: string): never => fail(`${what} is not an audit attestation (${header}): ${why}`);
  if (lines[0] !== HEADER_V1 && lines[0] !== HEADER_V2) notOne(`it does not begin "${HEADER_V2}" or "${HEADER_V1}"`);
  const field = (at: number, name: string): string => {
    const line = lines[at] ?? '';
    return line.startsWith(`${name} `) && line.length > name.length + 1 ? line.slice(name.length + 1) : notOne(`line ${at + 1} is not "${name} …"`);
  };
  const fields = header === HEADER_V1 ? readV1(lines, field, notOne) : readV2(lines, field, notOne);
  const checkpoint = /^(\S+) (\S+)$/.exec(fields.checkpoint);
  const size = whole(checkpoint?.[1]);
  if (!checkpoint || Number.isNaN(size) || !HASH_BASE64.test(checkpoint[2]!)) notOne('its checkpoint is not "<tree size> <base64 root hash>"');
  const chainId = whole(fields.chain);
  if (!(chainId >= 1)) notOne('its chain is not a chain id');
  if (!isCalendarDate(fields.date)) notOne('its date is not a date YYYY-MM-DD');
  const key = parseVkey(fields.auditor, ED25519_NOTE);
  if (typeof key === 'string') return notOne(`its auditor key is not a note verifier key of type 0x01: ${key}`);
  if (!signedBy(parsed, key, what, 'its auditor key')) fail(`${what} carries no signature by the auditor key its body names (${vkeyOf(key)})`);
  const common: Common = { origin: fields.origin, size, root: Buffer.from(checkpoint![2]!, 'base64'), chainId, date: fields.date, key, note };
  return 'matched' in fields ? { version: 1, ...common, nights: fields.nights, matched: fields.matched } : { version: 2, ...common, ...fields.rest };
}

type Field = (at: number, name: string) => string;
type Fields = { origin: string; checkpoint: string; chain: string; date: string; auditor: string };

function readV1(lines: string[], field: Field, notOne: (why: string) => never): Fields & { nights: string[]; matched: number } {
  if (lines.length !== 1 + FIELDS_V1.length) notOne(`its body is not the ${1 + FIELDS_V1.length} lines of version 1`);
  const value = Object.fromEntries(FIELDS_V1.map((name, i) => [name, field(i + 1, name)])) as Record<(typeof FIELDS_V1)[number], string>;
  const nights = value.nights.split(',');
  if (!nights.every(isCalendarDate) || new Set(nights).size !== nights.length) notOne('its nights are not distinct dates YYYY-MM-DD separated by commas');
  const matched = whole(value.matched);
  if (!(matched <= nights.length)) notOne(`its matched count is not a number from 0 to its ${plural(nights.length, 'night')}`);
  return { ...value, nights, matched };
}

function readV2(lines: string[], field: Field, notOne: (why: string) => never): Fields & { rest: Omit<AttestationV2, keyof Common | 'version'> } {
  // Eight lines before the nights, three after them.
  if (lines.length < 11) notOne('its body is shorter than the lines of version 2');
  const end = lines.length - 3;
  const [origin, logKeyText, checkpoint, openingText, chosen, chain, payers] = (['origin', 'log-key', 'checkpoint', 'opening', 'chosen', 'chain', 'payers'] as const)
    .map((name, i) => field(i + 1, name)) as [string, string, string, string, string, string, string];
  const logKey = parseVkey(logKeyText, ED25519_NOTE);
  if (typeof logKey === 'string') notOne(`its log key is not a note verifier key of type 0x01: ${logKey}`);
  const opening = whole(openingText);
  if (Number.isNaN(opening)) notOne('its opening is not the index of a log entry');
  const drawn = /^drawn ([1-9][0-9]*) rule v2 nonce (\S+)$/.exec(chosen);
  if (chosen !== 'named' && (!drawn || !Number.isSafeInteger(Number(drawn[1])) || !NONCE.test(drawn[2]!))) {
    notOne('its chosen line is not "chosen drawn <K> rule v2 nonce <N>" (N: 32 to 128 of A-Z a-z 0-9 . _ : -) or "chosen named"');
  }
  if (!/^[0-9a-f]{64}$/.test(payers)) notOne('its payers is not the lowercase hex SHA-256 of a payer list');
  const nights = lines.slice(8, end).map((line, i): NightResult => {
    const m = /^night (\S+) (\S+) (pass|fail)$/.exec(line) ?? notOne(`line ${i + 9} is not "night <YYYY-MM-DD> <entry index or -> pass|fail"`);
    const index = m[2] === '-' ? null : whole(m[2]);
    if (!isCalendarDate(m[1]!) || Number.isNaN(index)) notOne(`line ${i + 9} is not "night <YYYY-MM-DD> <entry index or -> pass|fail"`);
    if (index === null && m[3] === 'pass') notOne(`night ${m[1]} passes with no entry`);
    return { date: m[1]!, index, pass: m[3] === 'pass' };
  });
  if (!nights.length) notOne('it names no night');
  if (nights.some((n, i) => i > 0 && n.date <= nights[i - 1]!.date)) notOne('its nights are not distinct and in date order');
  const result = field(end, 'result');
  if (result !== 'pass' && result !== 'fail') notOne('its result is not pass or fail');
  const failed = nights.find((n) => !n.pass);
  if (result === 'pass' && failed) notOne(`its result is pass though night ${failed.date} failed`);
  return {
    origin, checkpoint, chain, date: field(end + 1, 'date'), auditor: field(end + 2, 'auditor'),
    rest: {
      logKey: logKey as NoteKey, opening, chosen: drawn ? { drawn: true, k: Number(drawn[1]), nonce: drawn[2]! } : { drawn: false },
      payers, nights, pass: result === 'pass',
    },
  };
}
