// The witness's Ed25519 key: a file holding the private key as PKCS#8 DER in base64url (the form of
// the service's other private keys), created with a new key, readable by its owner only, when missing.
import { readFileSync, writeFileSync } from 'node:fs';
import { importNoteSigningKey, type NoteSigningKey } from '../contract/tlog/note.ts';

export class KeyFileError extends Error {}

/** Reads the key file, or writes a new key into it when it does not exist; `created` says which. */
export async function loadOrCreateKey(file: string): Promise<NoteSigningKey & { created: boolean }> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw new KeyFileError(`cannot read the key file ${file}: ${(error as Error).message}`);
    const pair = (await crypto.subtle.generateKey('Ed25519', true, ['sign', 'verify'])) as CryptoKeyPair;
    const encoded = Buffer.from(await crypto.subtle.exportKey('pkcs8', pair.privateKey)).toString('base64url');
    try {
      // 'wx': never replaces a key file another process has just written.
      writeFileSync(file, `${encoded}\n`, { mode: 0o600, flag: 'wx' });
    } catch (error) {
      throw new KeyFileError(`cannot create the key file ${file}: ${(error as Error).message}`);
    }
    return { ...(await importNoteSigningKey(encoded, file)), created: true };
  }
  const encoded = text.trim();
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(encoded)) throw new Error('not base64url');
    return { ...(await importNoteSigningKey(encoded, file)), created: false };
  } catch {
    throw new KeyFileError(`${file} does not hold an Ed25519 private key (PKCS#8 DER, base64url)`);
  }
}
