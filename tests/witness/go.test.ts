// Checked against code we did not write: Go's sumdb/tlog and sumdb/note drive our witness as a log
// would (tlog.ProveTree proofs, note.Sign checkpoints) and check its cosignatures with a verifier
// written in Go from tlog-cosignature; the same Go client drives the Go witness of tests/go, so the
// expected answers hold for both; and our log code submits to the Go witness (tlog.CheckTree) and
// checks the cosignature/v1 lines its Go signer makes.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyCosignature } from '../../contract/tlog/cosignature.ts';
import { parseVerifierKey } from '../../contract/tlog/vkey.ts';
import { buildGo, post, run, startGoWitness, startWitness, testLog, type Running } from '../support/witness.ts';

let dir: string;
let go: { witness: string; client: string };

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'witness-go-'));
  go = await buildGo(path.join(dir, 'bin'));
}, 180_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Step { step: string; old: number; size: number; status: number; content_type: string; body: string; cosigned: boolean; timestamp: number }

/** What tlog-witness says a fresh witness answers to the Go client's requests, in order. */
const EXPECTED: [string, number, string?][] = [
  ['unknown origin', 404],
  ['signed by another key', 403],
  ['proof from size 0', 422],
  ['first checkpoint', 200],
  ['old size above size', 400],
  ['stale old size', 409, '10\n'],
  ['bad proof', 422],
  ['fork', 422],
  ['64 proof lines', 400],
  ['malformed old line', 400],
  ['consistent checkpoint', 200],
  ['same size, other root', 409],
  ['same checkpoint again', 200],
  ['rollback', 409, '20\n'],
  ['larger checkpoint', 200],
];

async function goClient(url: string, witnessVkey: string, skey: string): Promise<Step[]> {
  const before = Math.floor(Date.now() / 1000);
  const { stdout } = await run(go.client, ['run', '-url', url, '-skey', skey, '-witness', witnessVkey]);
  const steps = stdout.trim().split('\n').map((line) => JSON.parse(line) as Step);
  expect(steps.map((s) => [s.step, s.status])).toEqual(EXPECTED.map(([step, status]) => [step, status]));
  for (const [i, [, status, size]] of EXPECTED.entries()) {
    const step = steps[i]!;
    expect(step.cosigned, step.step).toBe(status === 200);
    if (status === 200) expect(step.timestamp).toBeGreaterThanOrEqual(before);
    if (status === 200) expect(step.timestamp).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    if (size !== undefined) expect([step.content_type, step.body]).toEqual(['text/x.tlog.size', size]);
  }
  return steps;
}

const keygen = async (origin: string) => JSON.parse((await run(go.client, ['keygen', '-origin', origin])).stdout) as { skey: string; vkey: string };

describe('Go\'s sumdb/tlog and sumdb/note against the witnesses', () => {
  it('drive our witness through every add-checkpoint case, and Go verifies each cosignature', async () => {
    const log = await keygen('example.com/go-log');
    mkdirSync(path.join(dir, 'ours'));
    const policy = path.join(dir, 'ours', 'policy');
    writeFileSync(policy, `log ${log.vkey}\nquorum none\n`);
    const w = await startWitness({ key: path.join(dir, 'ours', 'key'), name: 'witness.example/ours', policy, state: path.join(dir, 'ours', 'state') });
    try {
      await goClient(w.url, w.vkey, log.skey);
    } finally {
      await w.stop();
    }
  });

  it('drive the Go witness to the same answers', async () => {
    const log = await keygen('example.com/go-log');
    const w = await startGoWitness(go.witness, 'witness.example/go', [log.vkey]);
    try {
      await goClient(w.url, w.vkey, log.skey);
    } finally {
      await w.stop();
    }
  });
});

describe('our log code against the Go witness', () => {
  let w: Running;
  let log: Awaited<ReturnType<typeof testLog>>;
  beforeAll(async () => {
    log = await testLog('example.com/ts-log', 50);
    w = await startGoWitness(go.witness, 'witness.example/go', [log.vkey]);
  });
  afterAll(async () => { await w.stop(); });

  it('gets cosignature/v1 lines our verifier accepts, each for exactly its checkpoint, and the latest size from a 409', async () => {
    const witness = await parseVerifierKey(w.vkey);
    expect(witness.type).toBe(0x04);
    let old = 0;
    for (const n of [1, 2, 3, 7, 8, 16, 17, 31, 50]) {
      const answer = await post(w.url, await log.request(old, n));
      expect(answer.status, answer.text).toBe(200);
      const cosignature = await verifyCosignature(await log.body(n), answer.text, witness);
      expect(cosignature?.timestamp).toBeGreaterThan(0);
      // The line is for exactly this checkpoint.
      expect(await verifyCosignature(await log.body(n - 1), answer.text, witness)).toBeUndefined();
      old = n;
    }
    const fork = await log.fork(20);
    expect((await post(w.url, await fork.request(31, 50))).status).toBe(409);
    expect(await post(w.url, await log.request(31, 50))).toEqual({ status: 409, contentType: 'text/x.tlog.size', text: '50\n' });
  });

  it('has a witness whose consistency check refuses a fork of our tree', async () => {
    const other = await testLog('example.com/ts-log-2', 40);
    const g = await startGoWitness(go.witness, 'witness.example/go2', [other.vkey]);
    try {
      expect((await post(g.url, await other.request(0, 20))).status).toBe(200);
      expect((await post(g.url, await (await other.fork(5)).request(20, 40))).status).toBe(422);
      expect((await post(g.url, await other.request(20, 40))).status).toBe(200);
    } finally {
      await g.stop();
    }
  });
});
