// An auditor's attestation: a signed note (https://c2sp.org/signed-note) by the auditor's own Ed25519
// key, stating what was checked against the chain. It names no wallet. Its body carries the
// auditor's verifier key, so anyone checks the signature and then decides, by their own policy,
// whether that auditor counts.
import { createPrivateKey, randomBytes, verify } from 'node:crypto';
import { isCalendarDate } from '../dates.ts';
import { base64, checkKeyName, noteKeyHash, noteVerifierKey } from '../log-key.ts';
import { signNote } from '../tlog/note.ts';
import { decodeBase64, ED25519_NOTE, equalBytes, parseVerifierKey } from '../tlog/vkey.ts';
import { DIGEST_BASE64 } from './commitment.ts';
import { AUDIT_NONCE } from './opening.ts';

const HEADER = 'public-stats audit attestation v2';

/** One night's result, with the index of its latest entry within the checkpoint (null when it has none). */
export interface AttestedNight { date: string; index: number | null; pass: boolean }

export interface Attestation {
  origin: string;
  /** The log's verifier key the checkpoint was checked against. */
  logKey: string;
  checkpointSize: number;
  checkpointRoot: string;
  /** The index of the audit's opening entry in the log. */
  opening: number;
  /** How the nights were chosen: k drawn by rule v2 with the auditor's nonce, or null when the owner named them. */
  drawn: { k: number; nonce: string } | null;
  chainId: number;
  /** Lowercase hex SHA-256 of the payer list's bytes. */
  payersSha256: string;
  nights: AttestedNight[];
  result: 'pass' | 'fail';
  date: string;
  /** The auditor's verifier key (type 0x01). */
  auditorKey: string;
}

/** A parsed attestation with the name its key carries and the note's exact text. */
export interface ReadAttestation extends Attestation { auditor: string; note: string }

/**
 * The body, a line each: the header, origin, log-key, checkpoint <size> <root>, opening <index>,
 * chosen (drawn <k> rule v2 nonce <nonce> | named), chain, payers <sha256 hex>, one
 * night <date> <index or -> <pass|fail> per night in date order, result <pass|fail>, date, auditor.
 */
export function attestationBody(a: Attestation): string {
  const chosen = a.drawn ? `drawn ${a.drawn.k} rule v2 nonce ${a.drawn.nonce}` : 'named';
  const nights = [...a.nights].sort((x, y) => (x.date < y.date ? -1 : 1)).map((n) => `night ${n.date} ${n.index ?? '-'} ${n.pass ? 'pass' : 'fail'}`);
  return [HEADER, `origin ${a.origin}`, `log-key ${a.logKey}`, `checkpoint ${a.checkpointSize} ${a.checkpointRoot}`, `opening ${a.opening}`,
    `chosen ${chosen}`, `chain ${a.chainId}`, `payers ${a.payersSha256}`, ...nights, `result ${a.result}`, `date ${a.date}`, `auditor ${a.auditorKey}`, ''].join('\n');
}

/** The auditor's private key as Go's golang.org/x/mod/sumdb/note writes one: PRIVATE+KEY+<name>+<hex key hash>+<base64(0x01 || seed)>. */
export interface AuditorKey { name: string; seed: Uint8Array; publicKey: Uint8Array; verifierKey: string; text: string }

const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const publicKeyOf = (seed: Uint8Array): Uint8Array => {
  const jwk = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' }).export({ format: 'jwk' });
  return Buffer.from(jwk.x!, 'base64url');
};

async function auditorKeyFrom(name: string, seed: Uint8Array): Promise<AuditorKey> {
  const publicKey = publicKeyOf(seed);
  const hash = Buffer.from(await noteKeyHash(name, publicKey)).toString('hex');
  return { name, seed, publicKey, verifierKey: await noteVerifierKey(name, publicKey), text: `PRIVATE+KEY+${name}+${hash}+${base64(new Uint8Array([ED25519_NOTE, ...seed]))}\n` };
}

export async function newAuditorKey(name: string): Promise<AuditorKey> {
  checkKeyName(name);
  return auditorKeyFrom(name, randomBytes(32));
}

export async function readAuditorKey(text: string): Promise<AuditorKey> {
  const match = /^PRIVATE\+KEY\+([^+\s]+)\+([0-9a-f]{8})\+(\S+)\s*$/.exec(text);
  const material = match ? decodeBase64(match[3]!) : undefined;
  if (!match || !material || material.length !== 33 || material[0] !== ED25519_NOTE) {
    throw new Error('the key file is not an Ed25519 signed-note private key (PRIVATE+KEY+<name>+<hash>+<key>): make one with `npm run audit -- keygen`');
  }
  const key = await auditorKeyFrom(match[1]!, material.slice(1));
  if (!key.text.startsWith(`PRIVATE+KEY+${match[1]}+${match[2]}+`)) throw new Error('the key file\'s key hash does not match its key');
  return key;
}

export async function signAttestation(a: Omit<Attestation, 'auditorKey'>, key: AuditorKey): Promise<string> {
  const der = Buffer.concat([PKCS8_ED25519_PREFIX, key.seed]);
  const privateKey = await crypto.subtle.importKey('pkcs8', der, { name: 'Ed25519' }, false, ['sign']);
  return signNote(attestationBody({ ...a, auditorKey: key.verifierKey }), key.name, privateKey, key.publicKey);
}

const WHOLE = /^(0|[1-9]\d*)$/;

/** The body's fields in order, from its lines; throws a sentence naming the first line that is not one. */
function readBody(lines: string[]): Attestation {
  let at = 0;
  const field = (name: string): string => {
    const line = lines[at] ?? '';
    if (!line.startsWith(`${name} `)) throw new Error(`line ${at + 1} of the attestation is not "${name} …"`);
    at++;
    return line.slice(name.length + 1);
  };
  if (lines[at++] !== HEADER) throw new Error(`the attestation does not begin "${HEADER}"`);
  const origin = field('origin');
  const logKey = field('log-key');
  const [size, root, extra] = field('checkpoint').split(' ');
  if (extra !== undefined || !WHOLE.test(size ?? '') || !DIGEST_BASE64.test(root ?? '')) throw new Error('the attestation\'s checkpoint is not "<size> <base64 root>"');
  const opening = field('opening');
  if (!WHOLE.test(opening)) throw new Error('the attestation\'s opening is not an entry index');
  const chosen = field('chosen');
  const drawn = /^drawn ([1-9]\d*) rule v2 nonce (\S+)$/.exec(chosen);
  if (!drawn && chosen !== 'named') throw new Error('the attestation\'s chosen is neither "drawn <k> rule v2 nonce <nonce>" nor "named"');
  if (drawn && !AUDIT_NONCE.test(drawn[2]!)) throw new Error('the attestation\'s nonce is not 32 to 128 letters, digits, dots, colons, underscores or hyphens');
  const chainId = Number(field('chain'));
  if (!Number.isSafeInteger(chainId) || chainId <= 0) throw new Error('the attestation\'s chain is not a chain id');
  const payersSha256 = field('payers');
  if (!/^[0-9a-f]{64}$/.test(payersSha256)) throw new Error('the attestation\'s payers is not a SHA-256 in lowercase hex');
  const nights: AttestedNight[] = [];
  while (lines[at]?.startsWith('night ')) {
    const m = /^(\S+) (-|0|[1-9]\d*) (pass|fail)$/.exec(field('night'));
    if (!m || !isCalendarDate(m[1]!) || (m[2] === '-' && m[3] === 'pass')) throw new Error(`line ${at} of the attestation is not "night <YYYY-MM-DD> <entry index> <pass|fail>" or "night <YYYY-MM-DD> - fail"`);
    if (nights.length && nights.at(-1)!.date >= m[1]!) throw new Error('the attestation\'s nights are not distinct and in date order');
    nights.push({ date: m[1]!, index: m[2] === '-' ? null : Number(m[2]), pass: m[3] === 'pass' });
  }
  if (nights.length === 0) throw new Error('the attestation names no night');
  const result = field('result');
  if (result !== 'pass' && result !== 'fail') throw new Error('the attestation\'s result is neither pass nor fail');
  if (result === 'pass' && nights.some((n) => !n.pass)) throw new Error('the attestation says pass though a night failed');
  const date = field('date');
  if (!isCalendarDate(date)) throw new Error('the attestation\'s date is not a calendar date');
  const auditorKey = field('auditor');
  if (at !== lines.length - 1 || lines[at] !== '') throw new Error('the attestation\'s body does not end after its auditor line');
  return {
    origin, logKey, checkpointSize: Number(size), checkpointRoot: root!, opening: Number(opening),
    drawn: drawn ? { k: Number(drawn[1]), nonce: drawn[2]! } : null, chainId, payersSha256, nights, result, date, auditorKey,
  };
}

/**
 * Reads an attestation and checks its signature by the key its body names; throws a sentence naming
 * what is wrong. Whether that key is an auditor the reader trusts is the reader's policy, not this.
 */
export async function readAttestation(note: string): Promise<ReadAttestation> {
  const split = note.indexOf('\n\n');
  if (split < 0 || !note.endsWith('\n')) throw new Error('the attestation is not a signed note (a text, a blank line, signature lines)');
  const body = note.slice(0, split + 1);
  const a = readBody(body.split('\n'));
  const key = await parseVerifierKey(a.auditorKey).catch((error: Error) => { throw new Error(`the attestation's auditor key: ${error.message}`); });
  if (key.type !== ED25519_NOTE) throw new Error('the attestation\'s auditor key is not an Ed25519 note key (type 0x01)');
  let signed = false;
  for (const line of note.slice(split + 2).split('\n').filter((l) => l !== '')) {
    const m = /^\u2014 (\S+) (\S+)$/.exec(line);
    const bytes = m ? decodeBase64(m[2]!) : undefined;
    if (!m || !bytes || bytes.length < 4) throw new Error('a signature line of the attestation is not "— <name> <base64>"');
    if (m[1] !== key.name || !equalBytes(bytes.slice(0, 4), key.keyId)) continue;
    const spki = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), key.publicKey]);
    if (bytes.length !== 68 || !verify(null, Buffer.from(body, 'utf8'), { key: spki, format: 'der', type: 'spki' }, bytes.slice(4))) {
      throw new Error(`the attestation's signature by ${key.name} does not verify`);
    }
    signed = true;
  }
  if (!signed) throw new Error(`the attestation carries no signature by the key it names (${key.name})`);
  return { ...a, auditor: key.name, note };
}
