// Verifier keys of signed notes (https://c2sp.org/signed-note#verifier-keys):
// <name>+<hex key ID>+<base64(signature type || public key)>, the key ID being the first four bytes
// of SHA-256(name || "\n" || signature type || public key). Two signature types are read: 0x01,
// Ed25519 note signatures (checkpoints, https://c2sp.org/tlog-checkpoint), and 0x04, timestamped
// Ed25519 cosignatures (https://c2sp.org/tlog-cosignature). Web Crypto only.
import { base64, checkKeyName } from '../log-key.ts';

export const ED25519_NOTE = 0x01;
export const COSIGNATURE_V1 = 0x04;
const ED25519_KEY_BYTES = 32;
const utf8 = new TextEncoder();

export interface VerifierKey {
  name: string;
  keyId: Uint8Array<ArrayBuffer>;
  /** The signature type: ED25519_NOTE or COSIGNATURE_V1. */
  type: number;
  publicKey: Uint8Array<ArrayBuffer>;
}

export const equalBytes = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && a.every((byte, i) => byte === b[i]);

/** Standard base64 (RFC 4648 §4) in its one canonical spelling, or undefined for anything else. */
export function decodeBase64(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined;
  const bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  return base64(bytes) === text ? bytes : undefined;
}

/** The key ID: SHA-256(name || "\n" || type || public key)[:4]. */
export async function keyId(name: string, type: number, publicKey: Uint8Array): Promise<Uint8Array<ArrayBuffer>> {
  const material = new Uint8Array([...utf8.encode(`${name}\n`), type, ...publicKey]);
  return new Uint8Array(await crypto.subtle.digest('SHA-256', material)).slice(0, 4);
}

const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');

/** Reads a verifier key of type 0x01 or 0x04; throws, naming what is wrong, for anything else. */
export async function parseVerifierKey(vkey: string): Promise<VerifierKey> {
  // The key's base64 may itself hold plus signs: the name and the key ID end at the first two.
  const match = /^([^+]*)\+([^+]*)\+(.*)$/su.exec(vkey);
  if (!match) throw new Error(`"${vkey}" is not a verifier key (name+keyid+key)`);
  const [, name, id, key] = match as unknown as [string, string, string, string];
  checkKeyName(name);
  if (!/^[0-9a-f]{8}$/.test(id)) throw new Error(`verifier key ${name}: the key ID "${id}" is not 8 lowercase hex digits`);
  const material = decodeBase64(key);
  if (!material || material.length === 0) throw new Error(`verifier key ${name}: the key is not base64`);
  const type = material[0]!;
  if (type !== ED25519_NOTE && type !== COSIGNATURE_V1) throw new Error(`verifier key ${name}: signature type 0x${type.toString(16).padStart(2, '0')} is not Ed25519 (0x01) or cosignature/v1 (0x04)`);
  const publicKey = material.slice(1);
  if (publicKey.length !== ED25519_KEY_BYTES) throw new Error(`verifier key ${name}: an Ed25519 public key is ${ED25519_KEY_BYTES} bytes, not ${publicKey.length}`);
  const expected = await keyId(name, type, publicKey);
  if (hex(expected) !== id) throw new Error(`verifier key ${name}: the key ID ${id} does not match the key (${hex(expected)})`);
  return { name, keyId: expected, type, publicKey };
}

/** The verifier key of a cosignature/v1 witness key: type 0x04. */
export async function cosignerVerifierKey(name: string, publicKey: Uint8Array): Promise<string> {
  checkKeyName(name);
  if (publicKey.length !== ED25519_KEY_BYTES) throw new RangeError(`an Ed25519 public key is ${ED25519_KEY_BYTES} bytes, not ${publicKey.length}`);
  return `${name}+${hex(await keyId(name, COSIGNATURE_V1, publicKey))}+${base64(new Uint8Array([COSIGNATURE_V1, ...publicKey]))}`;
}

/** Web Crypto's handle on an Ed25519 public key, for verifying. */
export function ed25519PublicKey(publicKey: Uint8Array<ArrayBuffer>): Promise<CryptoKey> {
  return crypto.subtle.importKey('raw', publicKey, { name: 'Ed25519' }, false, ['verify']);
}
