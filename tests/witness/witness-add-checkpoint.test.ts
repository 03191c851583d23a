// `npm run witness` as a real process answering add-checkpoint: every answer tlog-witness names,
// the cosignatures it makes, the state it keeps, and one log line per request.
import { readdirSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyCosignature } from '../../contract/tlog/cosignature.ts';
import { parseVerifierKey } from '../../contract/tlog/vkey.ts';
import { post, startWitness, testLog, type Running, type TestLog } from '../support/witness.ts';
import { witnessArgs, witnessFolder, witnessState } from '../support/witness-files.ts';

let dir: string;
let log: TestLog;
let policy: string;
const args = (sub: string) => witnessArgs(dir, policy, sub);
const stateOf = (sub: string) => witnessState(dir, sub);

beforeAll(async () => ({ dir, log, policy } = await witnessFolder()));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('add-checkpoint', () => {
  let w: Running;
  let witnessKey: { name: string; publicKey: Uint8Array<ArrayBuffer> };
  const cosigned = async (n: number, answer: { status: number; text: string }) => {
    expect(answer.status, answer.text).toBe(200);
    expect(answer.text).toMatch(/^\u2014 witness\.example\/test \S+\n$/u);
    return verifyCosignature(await log.body(n), answer.text, witnessKey);
  };
  beforeAll(async () => {
    w = await startWitness(args('cases'));
    witnessKey = await parseVerifierKey(w.vkey);
  });
  afterAll(async () => { await w.stop(); });

  it('answers 404 for an unknown origin and 403 without a valid signature by the policy\'s key', async () => {
    const stranger = await testLog('example.com/other', 10);
    expect((await post(w.url, await stranger.request(0, 5))).status).toBe(404);
    const impostor = await testLog('example.com/log', 10);
    expect((await post(w.url, await impostor.request(0, 5))).status).toBe(403);
    // The trusted key's signature over another checkpoint: a known key whose signature fails.
    const wrong = (await log.signed(6)).replace(await log.body(6), await log.body(5));
    expect((await post(w.url, await log.request(0, 5, { signed: wrong }))).status).toBe(403);
    // An unknown key's signature next to no valid one, under the log's name.
    const unsigned = `${await log.body(5)}\n\u2014 example.com/log AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n`;
    expect((await post(w.url, await log.request(0, 5, { signed: unsigned }))).status).toBe(403);
    expect(readdirSync(args('cases').state).filter((f) => f.endsWith('.json'))).toEqual([]);
  });

  it('answers 422 for a proof from size 0, then cosigns the first checkpoint and stores it first', async () => {
    const answer = await post(w.url, await log.request(0, 10, { proof: [await log.tree.root(5)] }));
    expect(answer.status).toBe(422);
    const before = Math.floor(Date.now() / 1000);
    const first = await post(w.url, await log.request(0, 10));
    const cosignature = await cosigned(10, first);
    expect(cosignature!.timestamp).toBeGreaterThanOrEqual(before);
    expect(cosignature!.timestamp).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    expect(stateOf('cases')).toMatchObject({ origin: 'example.com/log', size: 10, checkpoint: await log.signed(10) });
  });

  it('answers 400 for an old size above the size, and for malformed bodies', async () => {
    expect((await post(w.url, await log.request(20, 10))).status).toBe(400);
    const good = await log.request(10, 20);
    const lines = good.split('\n');
    for (const bad of [
      good.replace('old 10', 'old 010'),
      good.replace('old 10', 'old  10'),
      good.replace('old 10', 'old -10'),
      good.replace('old 10', 'new 10'),
      good.replace(lines[1]!, lines[1]!.slice(1)),
      good.replace(lines[1]!, lines[1]!.replace(/=$/, '')),
      good.replace(lines[1]!, `${lines[1]!}\n${lines[1]!.slice(0, 40)}AAAA`),
      good.replace('\n\n', '\n'),
      good.replace(/\n$/, ''),
      good.replace('example.com/log\n20\n', 'example.com/log\n020\n'),
      await log.request(10, 20, { proof: Array.from({ length: 64 }, () => new Uint8Array(32)) }),
      '',
    ]) {
      const answer = await post(w.url, bad);
      expect(answer.status, JSON.stringify(bad)).toBe(400);
    }
    expect((await post(w.url, new Uint8Array([0xff, 0xfe, 0x0a, 0x0a]))).status).toBe(400);
    expect(stateOf('cases').size).toBe(10);
  });

  it('answers 409 with text/x.tlog.size and the latest size when the old size is not the latest', async () => {
    for (const old of [0, 5, 11]) {
      const answer = await post(w.url, await log.request(old, 20));
      expect(answer).toEqual({ status: 409, contentType: 'text/x.tlog.size', text: '10\n' });
    }
  });

  it('answers 422 for a proof that does not verify, a fork among them, and keeps its state', async () => {
    const proof = await log.tree.consistencyProof(10, 20);
    for (let i = 0; i < proof.length; i++) {
      const changed = proof.map((h, j) => (j === i ? h.map((b, k) => (k === 0 ? b ^ 1 : b)) : h));
      expect((await post(w.url, await log.request(10, 20, { proof: changed }))).status).toBe(422);
    }
    expect((await post(w.url, await log.request(10, 20, { proof: proof.slice(1) }))).status).toBe(422);
    expect((await post(w.url, await log.request(10, 20, { proof: [] }))).status).toBe(422);
    const fork = await log.fork(3);
    expect((await post(w.url, await fork.request(10, 20))).status).toBe(422);
    expect(stateOf('cases').size).toBe(10);
  });

  it('cosigns a consistent checkpoint, the same one again, and answers 409 for the same size with another root', async () => {
    await cosigned(20, await post(w.url, await log.request(10, 20)));
    expect(stateOf('cases').size).toBe(20);
    const fork = await log.fork(15);
    const other = await post(w.url, await fork.request(20, 20));
    expect(other.status).toBe(409);
    expect(other.contentType).not.toBe('text/x.tlog.size');
    expect((await post(w.url, await log.request(20, 20, { proof: [await log.tree.root(20)] }))).status).toBe(422);
    await cosigned(20, await post(w.url, await log.request(20, 20)));
    await cosigned(37, await post(w.url, await log.request(20, 37)));
    expect(stateOf('cases').size).toBe(37);
  });

  it('answers only POST /add-checkpoint, refuses bodies over 64 KiB, and logs one line per request', async () => {
    expect((await fetch(`${w.url}/add-checkpoint`)).status).toBe(405);
    expect((await fetch(`${w.url}/add-checkpoint`)).headers.get('allow')).toBe('POST');
    expect((await fetch(`${w.url}/`, { method: 'POST' })).status).toBe(404);
    expect((await post(w.url, `${await log.request(37, 37)}${'x'.repeat(65 * 1024)}`)).status).toBe(413);
    expect(w.output()).toMatch(/^\S+Z 200 POST \/add-checkpoint origin="example\.com\/log" old=20 size=37 cosigned$/m);
    expect(w.output()).toMatch(/^\S+Z 409 POST \/add-checkpoint origin="example\.com\/log" old=5 size=20 /m);
    expect(w.output()).toMatch(/^\S+Z 404 POST \/add-checkpoint origin="example\.com\/other" old=0 size=5 /m);
  });
});
