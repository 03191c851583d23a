// Signed notes, checkpoints and cosignature/v1: what is signed is exactly the spec's message, and a
// line from another key, for another body or with a changed timestamp never verifies.
import { describe, expect, it } from 'vitest';
import { base64 } from '../../../contract/log-key.ts';
import { cosign, cosignatureMessage, parseCheckpoint, parseNote, verifyCosignature, verifyNoteSignature } from '../../../contract/tlog/cosignature.ts';
import { checkpointBody, signNote } from '../../../contract/tlog/note.ts';
import { decodeBase64 } from '../../../contract/tlog/vkey.ts';

async function keyPair() {
  const pair = (await crypto.subtle.generateKey('Ed25519', true, ['sign', 'verify'])) as CryptoKeyPair;
  return { privateKey: pair.privateKey, publicKey: new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey)) };
}

const root = new Uint8Array(32).fill(7);
const body = checkpointBody('example.com/log', 42, root);

describe('signed notes and checkpoints', () => {
  it('splits a note at its last blank line and checks each signature against the key it names', async () => {
    const log = await keyPair();
    const other = await keyPair();
    const signed = await signNote(body, 'example.com/log', log.privateKey, log.publicKey);
    const note = parseNote(`${signed}\u2014 someone AAAAAAAA\n`);
    expect(note.body).toBe(body);
    expect(note.signatures.map((s) => s.name)).toEqual(['example.com/log', 'someone']);
    expect(await verifyNoteSignature(note.body, note.signatures[0]!, { name: 'example.com/log', publicKey: log.publicKey })).toBe(true);
    // Another key under the same name has another key ID: not this key's signature at all.
    expect(await verifyNoteSignature(note.body, note.signatures[0]!, { name: 'example.com/log', publicKey: other.publicKey })).toBeUndefined();
    expect(await verifyNoteSignature(note.body, note.signatures[1]!, { name: 'example.com/log', publicKey: log.publicKey })).toBeUndefined();
    // The same key ID over another text: this key's signature, and it fails.
    expect(await verifyNoteSignature(checkpointBody('example.com/log', 43, root), note.signatures[0]!, { name: 'example.com/log', publicKey: log.publicKey })).toBe(false);
    const forged = note.signatures[0]!.raw.slice();
    forged[10]! ^= 1;
    expect(await verifyNoteSignature(note.body, { ...note.signatures[0]!, raw: forged }, { name: 'example.com/log', publicKey: log.publicKey })).toBe(false);
  });

  it('refuses notes without a blank line, a final newline or well-formed signature lines', () => {
    for (const bad of [body, `${body}\n`, `${body}\n\u2014 a AAAAAAAA`, `${body}\n\u2014 a AAAA\n`, `${body}\n- a AAAAAAAA\n`, `${body}\n\u2014 a b AAAAAAAA\n`, `${body}\n\u2014 a+b AAAAAAAA\n`, `x\ty\n\n\u2014 a AAAAAAAA\n`]) {
      expect(() => parseNote(bad), JSON.stringify(bad)).toThrow();
    }
  });

  it('reads a checkpoint body with extension lines and refuses malformed ones', () => {
    expect(parseCheckpoint(body)).toEqual({ origin: 'example.com/log', size: 42, root, extensions: [] });
    expect(parseCheckpoint(`${body}ext one\n`).extensions).toEqual(['ext one']);
    for (const bad of ['example.com/log\n042\n' + base64(root) + '\n', 'o\n1\n' + base64(root.slice(1)) + '\n', 'o\n1\n', '\n1\n' + base64(root) + '\n', `${body}\nx\n`, body.slice(0, -1), 'o\n-1\n' + base64(root) + '\n']) {
      expect(() => parseCheckpoint(bad), JSON.stringify(bad)).toThrow();
    }
  });
});

describe('cosignature/v1', () => {
  it('signs "cosignature/v1\\ntime <t>\\n" and the body, and carries the key ID and the timestamp', async () => {
    const w = await keyPair();
    const line = await cosign(body, 'example.com/w1', w.privateKey, w.publicKey, 1679315147);
    expect(line).toMatch(/^\u2014 example\.com\/w1 [A-Za-z0-9+/]{102}==\n$/u);
    const raw = decodeBase64(line.split(' ')[2]!.trim())!;
    expect(new DataView(raw.buffer).getBigUint64(4)).toBe(1679315147n);
    expect(new TextDecoder().decode(cosignatureMessage(body, 1679315147))).toBe(`cosignature/v1\ntime 1679315147\n${body}`);
    const publicKey = await crypto.subtle.importKey('raw', w.publicKey, 'Ed25519', false, ['verify']);
    expect(await crypto.subtle.verify('Ed25519', publicKey, raw.slice(12), cosignatureMessage(body, 1679315147))).toBe(true);
    expect(await verifyCosignature(body, line, { name: 'example.com/w1', publicKey: w.publicKey })).toEqual({ timestamp: 1679315147 });
    expect(await verifyCosignature(body, line.trimEnd(), { name: 'example.com/w1', publicKey: w.publicKey })).toEqual({ timestamp: 1679315147 });
  });

  it('refuses another witness, another body, a changed timestamp and a log signature', async () => {
    const w = await keyPair();
    const other = await keyPair();
    const line = await cosign(body, 'example.com/w1', w.privateKey, w.publicKey, 1700000000);
    expect(await verifyCosignature(body, line, { name: 'example.com/w1', publicKey: other.publicKey })).toBeUndefined();
    expect(await verifyCosignature(body, line, { name: 'example.com/w2', publicKey: w.publicKey })).toBeUndefined();
    expect(await verifyCosignature(checkpointBody('example.com/log', 43, root), line, { name: 'example.com/w1', publicKey: w.publicKey })).toBeUndefined();
    const raw = decodeBase64(line.split(' ')[2]!.trim())!;
    raw[11]! ^= 1;
    expect(await verifyCosignature(body, `\u2014 example.com/w1 ${base64(raw)}`, { name: 'example.com/w1', publicKey: w.publicKey })).toBeUndefined();
    // A plain note signature by the same key (type 0x01) is not a cosignature.
    const noteLine = (await signNote(body, 'example.com/w1', w.privateKey, w.publicKey)).split('\n').at(-2)!;
    expect(await verifyCosignature(body, noteLine, { name: 'example.com/w1', publicKey: w.publicKey })).toBeUndefined();
    await expect(cosign(body, 'example.com/w1', w.privateKey, w.publicKey, -1)).rejects.toThrow();
    await expect(cosign(body, 'example.com/w1', w.privateKey, w.publicKey, 1.5)).rejects.toThrow();
  });
});
