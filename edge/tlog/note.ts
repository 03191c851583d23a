// Checkpoints (https://c2sp.org/tlog-checkpoint) as Ed25519 signed notes
// (https://c2sp.org/signed-note), and receipts for one entry (https://c2sp.org/tlog-proof).
// Web Crypto only.
import type { Hash } from './merkle.ts';

const utf8 = new TextEncoder();
/** Ed25519's signature type in a note key hash and verifier key. */
const ED25519 = 0x01;

function base64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** The key hash: the first four bytes of SHA-256(name || "\n" || 0x01 || public key). */
async function keyHash(name: string, publicKey: Uint8Array): Promise<Uint8Array<ArrayBuffer>> {
  const material = new Uint8Array([...utf8.encode(`${name}\n`), ED25519, ...publicKey]);
  return new Uint8Array(await crypto.subtle.digest('SHA-256', material)).slice(0, 4);
}

/** A key name is non-empty and holds no Unicode space and no plus sign. */
function checkKeyName(name: string): void {
  if (!name || /[\s+]/u.test(name)) throw new Error(`"${name}" cannot name a note key`);
}

/** The verifier key clients pin: <name>+<hex key hash>+<base64(0x01 || public key)>. */
export async function noteVerifierKey(name: string, publicKey: Uint8Array): Promise<string> {
  checkKeyName(name);
  const hash = Array.from(await keyHash(name, publicKey), (b) => b.toString(16).padStart(2, '0')).join('');
  return `${name}+${hash}+${base64(new Uint8Array([ED25519, ...publicKey]))}`;
}

/** The checkpoint body: origin, tree size and root hash, each on its own line. */
export function checkpointBody(origin: string, size: number, root: Hash): string {
  return `${origin}\n${size}\n${base64(root)}\n`;
}

/** The note with one signature line, "— <name> <base64(key hash || signature)>", after a blank line. */
export async function signNote(text: string, name: string, privateKey: CryptoKey, publicKey: Uint8Array): Promise<string> {
  checkKeyName(name);
  if (!text.endsWith('\n')) throw new Error('a note text ends with a newline');
  const signature = new Uint8Array(await crypto.subtle.sign('Ed25519', privateKey, utf8.encode(text)));
  return `${text}\n\u2014 ${name} ${base64(new Uint8Array([...(await keyHash(name, publicKey)), ...signature]))}\n`;
}

/**
 * A receipt for one entry: the tlog-proof lines (the entry itself as the extra data, so the receipt
 * is whole; a checker recomputes its leaf hash rather than trust it), the inclusion proof, then the
 * signed checkpoint it proves against.
 */
export function formatReceipt(entry: Uint8Array, index: number, proof: readonly Hash[], signedCheckpoint: string): string {
  return ['c2sp.org/tlog-proof@v1', `extra ${base64(entry)}`, `index ${index}`, ...proof.map(base64), '', signedCheckpoint].join('\n');
}
