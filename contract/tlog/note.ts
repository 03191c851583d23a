// Checkpoints (https://c2sp.org/tlog-checkpoint) as Ed25519 signed notes
// (https://c2sp.org/signed-note), and receipts for one entry (https://c2sp.org/tlog-proof), with
// the key as contract/log-key.ts names it. Web Crypto only.
import { base64, checkKeyName, noteKeyHash } from '../log-key.ts';
import type { Hash } from './merkle.ts';

const utf8 = new TextEncoder();

/** The checkpoint body: origin, tree size and root hash, each on its own line. */
export function checkpointBody(origin: string, size: number, root: Hash): string {
  return `${origin}\n${size}\n${base64(root)}\n`;
}

/** The note with one signature line, "— <name> <base64(key hash || signature)>", after a blank line. */
export async function signNote(text: string, name: string, privateKey: CryptoKey, publicKey: Uint8Array): Promise<string> {
  checkKeyName(name);
  if (!text.endsWith('\n')) throw new Error('a note text ends with a newline');
  const signature = new Uint8Array(await crypto.subtle.sign('Ed25519', privateKey, utf8.encode(text)));
  return `${text}\n\u2014 ${name} ${base64(new Uint8Array([...(await noteKeyHash(name, publicKey)), ...signature]))}\n`;
}

/**
 * A receipt for one entry: the tlog-proof lines (the entry itself as the extra data, so the receipt
 * is whole; a checker recomputes its leaf hash rather than trust it), the inclusion proof, then the
 * signed checkpoint it proves against.
 */
export function formatReceipt(entry: Uint8Array, index: number, proof: readonly Hash[], signedCheckpoint: string): string {
  return ['c2sp.org/tlog-proof@v1', `extra ${base64(entry)}`, `index ${index}`, ...proof.map(base64), '', signedCheckpoint].join('\n');
}

/** An Ed25519 key as the log signs with it: the private key, and its raw public half for the key hash. */
export interface NoteSigningKey {
  privateKey: CryptoKey;
  publicKey: Uint8Array<ArrayBuffer>;
}

/** A private key in the form `npm run keys` writes (PKCS#8 DER, base64url); `name` says which setting held it. */
export async function importNoteSigningKey(pkcs8Base64url: string, name: string): Promise<NoteSigningKey> {
  let privateKey: CryptoKey;
  try {
    const der = Uint8Array.from(atob(pkcs8Base64url.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
    privateKey = await crypto.subtle.importKey('pkcs8', der, { name: 'Ed25519' }, true, ['sign']);
  } catch {
    throw new Error(`${name} must be an Ed25519 private key (PKCS#8 DER, base64url): run \`npm run keys\` for a new one.`);
  }
  const { x } = await crypto.subtle.exportKey('jwk', privateKey);
  return { privateKey, publicKey: Uint8Array.from(atob(x!.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0)) };
}
