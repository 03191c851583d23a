// Known answers from Go's golang.org/x/mod/sumdb/tlog and sumdb/note (tests/go/witnessclient
// vectors): our tree roots and proofs are Go's, our checks accept Go's proofs, and Go's vkeys and
// signed checkpoints read and verify with our code.
import path from 'node:path';
import { tmpdir } from 'node:os';
import { beforeAll, describe, expect, it } from 'vitest';
import { base64, noteVerifierKey } from '../../../contract/log-key.ts';
import { parseNote, verifyNoteSignature, parseCheckpoint } from '../../../contract/tlog/cosignature.ts';
import { verifyConsistency, verifyInclusion } from '../../../contract/tlog/consistency.ts';
import { buildTree, leafHash } from '../../../contract/tlog/merkle.ts';
import { decodeBase64, parseVerifierKey } from '../../../contract/tlog/vkey.ts';
import { ROOT_DIR } from '../../../config/checkout.ts';
import { run } from '../../support/witness.ts';

const N = 40;
interface Vectors {
  entries: string[];
  roots: string[];
  consistency: { old: number; size: number; proof: string[] }[];
  inclusion: { index?: number; size: number; proof: string[] }[];
  note: { vkey: string; signed: string };
}
let v: Vectors;

beforeAll(async () => {
  const { stdout } = await run('go', ['run', './tests/go/witnessclient', 'vectors', '-n', String(N)], {
    cwd: ROOT_DIR,
    env: { ...process.env, GO111MODULE: 'off', GOPATH: '/usr/share/gocode', GOCACHE: path.join(tmpdir(), 'public-stats-go-cache') },
    maxBuffer: 64 * 1024 * 1024,
  });
  v = JSON.parse(stdout) as Vectors;
}, 180_000);

const bytes = (b64: string) => decodeBase64(b64)!;

describe('known answers from Go', () => {
  it('builds the same roots and proofs as sumdb/tlog, and accepts every one of Go\'s proofs', async () => {
    const tree = await buildTree(v.entries.map((e) => new TextEncoder().encode(e)));
    expect(v.entries).toHaveLength(N);
    // Go names the empty tree's hash all zeros; RFC 6962 names it SHA-256 of nothing, as we do.
    for (let n = 1; n <= N; n++) expect(base64(await tree.root(n)), `root ${n}`).toBe(v.roots[n]);
    expect(v.consistency).toHaveLength((N * (N - 1)) / 2);
    for (const { old, size, proof } of v.consistency) {
      expect((await tree.consistencyProof(old, size)).map(base64), `${old} -> ${size}`).toEqual(proof);
      expect(await verifyConsistency(old, size, bytes(v.roots[old]!), bytes(v.roots[size]!), proof.map(bytes))).toBe(true);
    }
    expect(v.inclusion).toHaveLength((N * (N + 1)) / 2);
    for (const { index = 0, size, proof } of v.inclusion) {
      expect((await tree.inclusionProof(index, size)).map(base64)).toEqual(proof);
      expect(await verifyInclusion(index, size, await leafHash(new TextEncoder().encode(v.entries[index]!)), proof.map(bytes), bytes(v.roots[size]!))).toBe(true);
    }
  });

  it('reads Go\'s note vkey and verifies the checkpoint sumdb/note signed', async () => {
    const key = await parseVerifierKey(v.note.vkey);
    expect(key).toMatchObject({ name: 'example.com/go-log', type: 0x01 });
    expect(await noteVerifierKey(key.name, key.publicKey)).toBe(v.note.vkey);
    const note = parseNote(v.note.signed);
    expect(parseCheckpoint(note.body)).toMatchObject({ origin: 'example.com/go-log', size: N });
    expect(base64(parseCheckpoint(note.body).root)).toBe(v.roots[N]);
    expect(note.signatures).toHaveLength(1);
    expect(await verifyNoteSignature(note.body, note.signatures[0]!, key)).toBe(true);
    expect(await verifyNoteSignature(note.body.replace(`\n${N}\n`, `\n${N - 1}\n`), note.signatures[0]!, key)).toBe(false);
  });
});
