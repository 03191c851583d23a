// Verifier keys: both signature types read back what they were made from, and every malformed or
// mismatched key is refused with a reason.
import { describe, expect, it } from 'vitest';
import { base64, noteVerifierKey } from '../../../contract/log-key.ts';
import { COSIGNATURE_V1, ED25519_NOTE, cosignerVerifierKey, decodeBase64, keyId, parseVerifierKey } from '../../../contract/tlog/vkey.ts';

const publicKey = Uint8Array.from({ length: 32 }, (_, i) => i);

describe('verifier keys', () => {
  it('reads a note key (0x01) and a cosigner key (0x04) back to their name, key ID and public key', async () => {
    const note = await parseVerifierKey(await noteVerifierKey('example.com/log', publicKey));
    expect(note).toEqual({ name: 'example.com/log', keyId: await keyId('example.com/log', ED25519_NOTE, publicKey), type: ED25519_NOTE, publicKey });
    const cosigner = await parseVerifierKey(await cosignerVerifierKey('example.com/w1', publicKey));
    expect(cosigner.type).toBe(COSIGNATURE_V1);
    expect(cosigner.publicKey).toEqual(publicKey);
    // The same key and name give another key ID under another signature type.
    expect(cosigner.keyId).not.toEqual(await keyId('example.com/w1', ED25519_NOTE, publicKey));
  });

  it('makes the key ID SHA-256(name || "\\n" || type || key)[:4]', async () => {
    const material = new Uint8Array([...new TextEncoder().encode('w\n'), 0x04, ...publicKey]);
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', material));
    expect(await keyId('w', 0x04, publicKey)).toEqual(digest.slice(0, 4));
    const vkey = await cosignerVerifierKey('w', publicKey);
    expect(vkey).toBe(`w+${Buffer.from(digest.slice(0, 4)).toString('hex')}+${base64(new Uint8Array([4, ...publicKey]))}`);
  });

  it('refuses a wrong key ID, type, length, name or encoding', async () => {
    const good = await cosignerVerifierKey('example.com/w1', publicKey);
    const [name, id, key] = good.split('+') as [string, string, string];
    const refused = async (vkey: string) => expect(parseVerifierKey(vkey)).rejects.toThrow();
    await refused(`${name}+${id.replace(/^./, (c) => (c === '0' ? '1' : '0'))}+${key}`);
    await refused(`${name}+${id.toUpperCase()}+${key}`);
    await refused(`other+${id}+${key}`);
    await refused(`${name}+${id}+${base64(new Uint8Array([2, ...publicKey]))}`);
    await refused(`${name}+${id}+${base64(new Uint8Array([4, ...publicKey.slice(1)]))}`);
    await refused(`${name}+${id}+${key.slice(0, -1)}`);
    await refused(`${name}+${id}`);
    await refused(`a b+${id}+${key}`);
    await expect(parseVerifierKey(`${name}+${id}+${base64(new Uint8Array([6, ...publicKey]))}`)).rejects.toThrow(/signature type 0x06/);
  });

  it('decodes only canonical standard base64', () => {
    expect(decodeBase64('AAEC')).toEqual(new Uint8Array([0, 1, 2]));
    expect(decodeBase64('AAE=')).toEqual(new Uint8Array([0, 1]));
    expect(decodeBase64('')).toEqual(new Uint8Array([]));
    for (const bad of ['AAF=', 'AAE', 'AA-_', 'AA E', 'AAE==', '====']) expect(decodeBase64(bad), bad).toBeUndefined();
  });
});
