// The transparency log's key as Ed25519 signed-note keys are named (https://c2sp.org/signed-note):
// the edge signs its checkpoints with it (contract/tlog/note.ts) and the documents publish its verifier
// key, which clients pin. Web Crypto only.
const utf8 = new TextEncoder();
/** Ed25519's signature type in a note key hash and verifier key. */
const ED25519 = 0x01;

export function base64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** The key hash: the first four bytes of SHA-256(name || "\n" || 0x01 || public key). */
export async function noteKeyHash(name: string, publicKey: Uint8Array): Promise<Uint8Array<ArrayBuffer>> {
  const material = new Uint8Array([...utf8.encode(`${name}\n`), ED25519, ...publicKey]);
  return new Uint8Array(await crypto.subtle.digest('SHA-256', material)).slice(0, 4);
}

/** A key name is non-empty and holds no Unicode space and no plus sign. */
export function checkKeyName(name: string): void {
  if (!name || /[\s+]/u.test(name)) throw new Error(`"${name}" cannot name a note key`);
}

/** The verifier key clients pin: <name>+<hex key hash>+<base64(0x01 || public key)>. */
export async function noteVerifierKey(name: string, publicKey: Uint8Array): Promise<string> {
  checkKeyName(name);
  const hash = Array.from(await noteKeyHash(name, publicKey), (b) => b.toString(16).padStart(2, '0')).join('');
  return `${name}+${hash}+${base64(new Uint8Array([ED25519, ...publicKey]))}`;
}
