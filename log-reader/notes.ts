// Signed notes (https://c2sp.org/signed-note), their keys, and the log's checkpoints
// (https://c2sp.org/tlog-checkpoint) signed by the pinned log key.
import { createPublicKey, verify as verifyEd25519, type KeyObject } from 'node:crypto';
import { sha256 } from './encoding.ts';
import { fail } from './failure.ts';

/** The largest log this verifier reads: 2^20 entries (2,870 years of nights). */
const MAX_LOG_SIZE = 1 << 20;

/** signed-note signature types: Ed25519 (the log's checkpoints) and timestamped Ed25519 (a witness's cosignature/v1). */
export const ED25519_NOTE = 0x01;
export const COSIGNATURE_V1 = 0x04;

/** A note verifier key (https://c2sp.org/signed-note#verifier-keys). */
export interface NoteKey { name: string; id: Buffer; type: number; raw: Buffer; key: KeyObject }

/** signed-note: key ID = SHA-256(key name || 0x0A || signature type || public key)[:4]. */
const noteKeyId = (name: string, type: number, raw: Uint8Array): Buffer => sha256(Buffer.from(`${name}\n`, 'utf8'), Buffer.of(type), raw).subarray(0, 4);
/** Key names are non-empty, without Unicode spaces or "+". */
const validKeyName = (name: string): boolean => name !== '' && !/[\s+]/u.test(name);
export const vkeyOf = (k: NoteKey): string => `${k.name}+${k.id.toString('hex')}+${Buffer.concat([Buffer.of(k.type), k.raw]).toString('base64')}`;
/** The same public key under another name: the demo log's origin. */
export const renamed = (k: NoteKey, name: string): NoteKey => ({ ...k, name, id: noteKeyId(name, k.type, k.raw) });
export const hex2 = (byte: number | undefined): string => (byte ?? 0).toString(16).padStart(2, '0');

/** The key a vkey (`<name>+<hex key ID>+<base64(type || key)>`) of the given type names, or what is wrong with it. */
export function parseVkey(vkey: string, type: number): NoteKey | string {
  // The name and key ID hold no "+"; the base64 key may.
  const parts = /^([^+]*)\+([^+]*)\+(.*)$/s.exec(vkey);
  if (!parts) return 'it is not <name>+<key ID>+<key>';
  const [, name, hex, b64] = parts as unknown as [string, string, string, string];
  if (!validKeyName(name)) return 'its name is empty or holds a space';
  if (!/^[0-9a-fA-F]{8}$/.test(hex)) return 'its key ID is not 8 hexadecimal digits';
  const data = Buffer.from(b64, 'base64');
  if (data.length === 0 || data.toString('base64') !== b64) return 'its key is not base64';
  if (data[0] !== type) return `its signature type is 0x${hex2(data[0])}, not 0x${hex2(type)}`;
  if (data.length !== 33) return 'its Ed25519 public key is not 32 bytes';
  const raw = data.subarray(1);
  const id = noteKeyId(name, type, raw);
  if (id.toString('hex') !== hex.toLowerCase()) return 'its key ID does not match its name and key';
  try {
    return { name, id, type, raw, key: createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' }) };
  } catch {
    return 'its key is not an Ed25519 public key';
  }
}

interface NoteSignature { name: string; id: Buffer; bytes: Buffer }
export interface Note { text: string; signatures: NoteSignature[] }

/** signed-note: UTF-8 text ending in a newline, a blank line, then lines "— <key name> base64(key ID || signature)". */
export function parseNote(note: string, what: string): Note {
  const notNote = (): never => fail(`${what} is not a signed note (https://c2sp.org/signed-note)`);
  if (/[\u0000-\u0009\u000b-\u001f]/.test(note)) notNote();
  const split = note.lastIndexOf('\n\n');
  if (split < 0 || !note.endsWith('\n')) notNote();
  const lines = note.slice(split + 2, -1).split('\n');
  if (lines.length > 100) fail(`${what} carries more than 100 signatures`);
  const signatures = lines.map((line) => {
    const match = /^\u2014 ([^ ]+) ([A-Za-z0-9+/]+={0,2})$/.exec(line) ?? notNote();
    const bytes = Buffer.from(match[2]!, 'base64');
    if (!validKeyName(match[1]!) || bytes.length < 5 || bytes.toString('base64') !== match[2]) notNote();
    return { name: match[1]!, id: bytes.subarray(0, 4), bytes: bytes.subarray(4) };
  });
  return { text: note.slice(0, split + 1), signatures };
}

/** signed-note: a signature by a known key (same name and key ID) must verify; true when one did. `role` names the key in a failure. */
export function signedBy(note: Note, key: NoteKey, what: string, role = 'the log key'): boolean {
  let signed = false;
  for (const s of note.signatures) {
    if (s.name !== key.name || !s.id.equals(key.id)) continue;
    if (s.bytes.length !== 64 || !verifyEd25519(null, Buffer.from(note.text, 'utf8'), key.key, s.bytes)) fail(`${what}'s signature by ${role} ${vkeyOf(key)} does not verify`);
    signed = true;
  }
  return signed;
}

export interface Checkpoint extends Note { origin: string; size: number; root: Buffer; note: string }

export function parseCheckpoint(note: string, what: string): Checkpoint {
  const parsed = parseNote(note, what);
  const lines = parsed.text.slice(0, -1).split('\n');
  const [origin, size, root] = lines;
  if (lines.length < 3 || lines.some((line) => line === '') || !/^(0|[1-9][0-9]*)$/.test(size ?? '') || !/^[A-Za-z0-9+/]{43}=$/.test(root ?? '')) {
    fail(`${what} is not a checkpoint (https://c2sp.org/tlog-checkpoint): it needs an origin, a tree size and a root hash`);
  }
  if (Number(size) > MAX_LOG_SIZE) fail(`${what}'s tree size ${size} is more than the ${MAX_LOG_SIZE} entries this verifier reads`);
  return { ...parsed, origin: origin!, size: Number(size), root: Buffer.from(root!, 'base64'), note };
}

/** The checkpoint, signed by one of the pinned log keys under its origin (tlog-policy: a log key's name is its origin). */
export function readCheckpoint(note: string, what: string, keys: NoteKey[]): Checkpoint & { key: NoteKey } {
  const checkpoint = parseCheckpoint(note, what);
  const mine = keys.filter((k) => k.name === checkpoint.origin);
  const key = mine.find((k) => signedBy(checkpoint, k, what));
  if (key) return { ...checkpoint, key };
  if (!mine.length) return fail(`${what} is for the log "${checkpoint.origin}", not the one the pinned log key ${keys.map(vkeyOf).join(' or ')} signs for`);
  const pinned = mine.map(vkeyOf).join(' or ');
  if (checkpoint.signatures.some((s) => s.name === checkpoint.origin)) {
    return fail(`${what} is signed by another log key than the pinned one (${pinned}): a new key is trusted only from a checkpoint the pinned key signs too`);
  }
  return fail(`${what} carries no signature by the pinned log key ${pinned}`);
}


/** The demo log's keys: the same public keys under the demo origin. */
export const demoKeys = (keys: NoteKey[]): NoteKey[] => keys.map((k) => renamed(k, `${k.name}/demo`));
