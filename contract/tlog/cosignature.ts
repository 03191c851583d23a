// Reading signed notes (https://c2sp.org/signed-note) and checkpoints
// (https://c2sp.org/tlog-checkpoint), and making and checking timestamped Ed25519 cosignatures
// (https://c2sp.org/tlog-cosignature, cosignature/v1, key IDs of type 0x04). Web Crypto only.
import { base64, checkKeyName } from '../log-key.ts';
import type { Hash } from './merkle.ts';
import { COSIGNATURE_V1, ED25519_NOTE, decodeBase64, ed25519PublicKey, equalBytes, keyId } from './vkey.ts';

const utf8 = new TextEncoder();
const KEY_ID_BYTES = 4;
const TIMESTAMP_BYTES = 8;
const ED25519_SIGNATURE_BYTES = 64;
const HASH_BYTES = 32;
/** tlog-cosignature: a timestamp never exceeds 2^63 - 1; JavaScript numbers hold whole seconds exactly up to 2^53 - 1. */
const MAX_TIMESTAMP = Number.MAX_SAFE_INTEGER;

/** A key that signed a note or cosigned a checkpoint: its name and raw 32-byte Ed25519 public key. */
export interface NoteKey {
  name: string;
  publicKey: Uint8Array<ArrayBuffer>;
}

export interface NoteSignature {
  name: string;
  /** The decoded signature: the 4-byte key ID, then what the algorithm signed. */
  raw: Uint8Array<ArrayBuffer>;
  /** The signature line as it stood, without its newline. */
  line: string;
}

export interface Note {
  /** The note text, final newline included. */
  body: string;
  signatures: NoteSignature[];
}

export interface Checkpoint {
  origin: string;
  size: number;
  root: Hash;
  /** Extension lines after the root hash, if any. */
  extensions: string[];
}

/** One signature line, "— <key name> <base64(key ID || signature)>" without its newline, or undefined. */
function parseSignatureLine(line: string): NoteSignature | undefined {
  const match = /^\u2014 ([^ ]+) ([^ ]+)$/u.exec(line);
  if (!match) return undefined;
  const [, name, encoded] = match as unknown as [string, string, string];
  if (!name || /[\s+]/u.test(name)) return undefined;
  const raw = decodeBase64(encoded);
  if (!raw || raw.length <= KEY_ID_BYTES) return undefined;
  return { name, raw, line };
}

/**
 * Splits a signed note into its text and signature lines: the text ends in a newline and is
 * separated from one or more signature lines by the last blank line. Throws on anything else,
 * including control characters other than newline. Signatures are not checked here.
 */
export function parseNote(text: string): Note {
  if (/[\u0000-\u0009\u000b-\u001f]/u.test(text)) throw new Error('a signed note holds no control character other than newline');
  if (!text.endsWith('\n')) throw new Error('a signed note ends with a newline');
  const split = text.lastIndexOf('\n\n');
  if (split < 0) throw new Error('a signed note has a blank line before its signatures');
  const body = text.slice(0, split + 1);
  const lines = text.slice(split + 2, -1).split('\n');
  const signatures = lines.map((line) => parseSignatureLine(line) ?? (() => { throw new Error(`"${line}" is not a note signature line`); })());
  return { body, signatures };
}

/**
 * Checks one note signature against an Ed25519 note key (type 0x01): undefined when the signature
 * is not by that key (another name or key ID: signed-note says to ignore it), else whether it verifies.
 */
export async function verifyNoteSignature(body: string, signature: NoteSignature, key: NoteKey): Promise<boolean | undefined> {
  if (signature.name !== key.name) return undefined;
  if (!equalBytes(signature.raw.subarray(0, KEY_ID_BYTES), await keyId(key.name, ED25519_NOTE, key.publicKey))) return undefined;
  const sig = signature.raw.subarray(KEY_ID_BYTES);
  if (sig.length !== ED25519_SIGNATURE_BYTES) return false;
  return crypto.subtle.verify('Ed25519', await ed25519PublicKey(key.publicKey), sig, utf8.encode(body));
}

/** Reads a checkpoint body: origin, decimal size, base64 SHA-256 root, then optional extension lines. */
export function parseCheckpoint(body: string): Checkpoint {
  if (!body.endsWith('\n')) throw new Error('a checkpoint ends with a newline');
  const [origin, size, root, ...extensions] = body.slice(0, -1).split('\n');
  if (!origin) throw new Error('a checkpoint starts with its origin');
  if (size === undefined || !/^(0|[1-9][0-9]*)$/.test(size) || !Number.isSafeInteger(Number(size))) throw new Error(`checkpoint size "${size ?? ''}" is not a decimal tree size`);
  const hash = root === undefined ? undefined : decodeBase64(root);
  if (!hash || hash.length !== HASH_BYTES) throw new Error(`checkpoint root "${root ?? ''}" is not a base64 SHA-256 hash`);
  if (extensions.some((line) => line === '')) throw new Error('a checkpoint holds no empty line');
  return { origin, size: Number(size), root: hash, extensions };
}

/** The message a cosignature/v1 signs: "cosignature/v1\ntime <timestamp>\n" and the checkpoint body. */
export function cosignatureMessage(checkpointBody: string, timestamp: number): Uint8Array<ArrayBuffer> {
  return utf8.encode(`cosignature/v1\ntime ${timestamp}\n${checkpointBody}`);
}

/** One cosignature/v1 line, "— <name> base64(key ID || u64 big-endian timestamp || Ed25519 signature)\n". */
export async function cosign(checkpointBody: string, name: string, privateKey: CryptoKey, publicKey: Uint8Array, timestampSeconds: number): Promise<string> {
  checkKeyName(name);
  if (!checkpointBody.endsWith('\n')) throw new Error('a checkpoint body ends with a newline');
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) throw new RangeError(`${timestampSeconds} is not a timestamp in whole seconds`);
  const timestamp = new Uint8Array(TIMESTAMP_BYTES);
  new DataView(timestamp.buffer).setBigUint64(0, BigInt(timestampSeconds));
  const signature = new Uint8Array(await crypto.subtle.sign('Ed25519', privateKey, cosignatureMessage(checkpointBody, timestampSeconds)));
  return `\u2014 ${name} ${base64(new Uint8Array([...(await keyId(name, COSIGNATURE_V1, publicKey)), ...timestamp, ...signature]))}\n`;
}

/**
 * Checks a cosignature/v1 line (with or without its newline) on a checkpoint body against one
 * witness key: its timestamp when the line is that witness's and verifies, else undefined.
 */
export async function verifyCosignature(checkpointBody: string, line: string, witness: NoteKey): Promise<{ timestamp: number } | undefined> {
  const signature = parseSignatureLine(line.endsWith('\n') ? line.slice(0, -1) : line);
  if (!signature || signature.name !== witness.name) return undefined;
  const { raw } = signature;
  if (raw.length !== KEY_ID_BYTES + TIMESTAMP_BYTES + ED25519_SIGNATURE_BYTES) return undefined;
  if (!equalBytes(raw.subarray(0, KEY_ID_BYTES), await keyId(witness.name, COSIGNATURE_V1, witness.publicKey))) return undefined;
  const timestamp = new DataView(raw.buffer, raw.byteOffset + KEY_ID_BYTES, TIMESTAMP_BYTES).getBigUint64(0);
  if (timestamp > BigInt(MAX_TIMESTAMP)) return undefined;
  const valid = await crypto.subtle.verify('Ed25519', await ed25519PublicKey(witness.publicKey), raw.subarray(KEY_ID_BYTES + TIMESTAMP_BYTES), cosignatureMessage(checkpointBody, Number(timestamp)));
  return valid ? { timestamp: Number(timestamp) } : undefined;
}
