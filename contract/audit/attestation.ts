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

const HEADER = 'public-stats audit attestation v1';

export interface Attestation {
  origin: string;
  checkpointSize: number;
  checkpointRoot: string;
  chainId: number;
  nights: string[];
  matched: number;
  date: string;
  /** The auditor's verifier key (type 0x01). */
  auditorKey: string;
}

/** A parsed attestation with the name its key carries and the note's exact text. */
export interface ReadAttestation extends Attestation { auditor: string; note: string }

export function attestationBody(a: Attestation): string {
  return [HEADER, `origin ${a.origin}`, `checkpoint ${a.checkpointSize} ${a.checkpointRoot}`, `chain ${a.chainId}`,
    `nights ${a.nights.join(',')}`, `matched ${a.matched}`, `date ${a.date}`, `auditor ${a.auditorKey}`, ''].join('\n');
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

/**
 * Reads an attestation and checks its signature by the key its body names; throws a sentence naming
 * what is wrong. Whether that key is an auditor the reader trusts is the reader's policy, not this.
 */
export async function readAttestation(note: string): Promise<ReadAttestation> {
  const split = note.indexOf('\n\n');
  if (split < 0 || !note.endsWith('\n')) throw new Error('the attestation is not a signed note (a text, a blank line, signature lines)');
  const body = note.slice(0, split + 1);
  const lines = body.split('\n');
  const field = (i: number, name: string): string => {
    const line = lines[i] ?? '';
    if (!line.startsWith(`${name} `)) throw new Error(`line ${i + 1} of the attestation is not "${name} …"`);
    return line.slice(name.length + 1);
  };
  if (lines[0] !== HEADER) throw new Error(`the attestation does not begin "${HEADER}"`);
  if (lines.length !== 9) throw new Error('the attestation\'s body is not the eight lines of version 1');
  const [size, root, extra] = field(2, 'checkpoint').split(' ');
  const nights = field(4, 'nights').split(',');
  const a: Attestation = {
    origin: field(1, 'origin'), checkpointSize: Number(size), checkpointRoot: root ?? '', chainId: Number(field(3, 'chain')),
    nights, matched: Number(field(5, 'matched')), date: field(6, 'date'), auditorKey: field(7, 'auditor'),
  };
  if (extra !== undefined || !/^(0|[1-9]\d*)$/.test(size ?? '') || !DIGEST_BASE64.test(a.checkpointRoot)) throw new Error('the attestation\'s checkpoint is not "<size> <base64 root>"');
  if (!Number.isSafeInteger(a.chainId) || a.chainId <= 0) throw new Error('the attestation\'s chain is not a chain id');
  if (nights.some((d) => !isCalendarDate(d)) || new Set(nights).size !== nights.length) throw new Error('the attestation\'s nights are not distinct calendar dates');
  if (!Number.isSafeInteger(a.matched) || a.matched < 0 || a.matched > nights.length) throw new Error('the attestation\'s matched count is not between 0 and its nights');
  if (!isCalendarDate(a.date)) throw new Error('the attestation\'s date is not a calendar date');
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
