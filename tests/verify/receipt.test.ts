// `verify --receipt FILE` checks a saved /log/proof/<date> receipt (https://c2sp.org/tlog-proof)
// offline: against the pinned log key, and with a policy against its quorum of witnesses. The log
// here is built with the service's own tree and receipt code; the keys and cosignatures are made
// in the test.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTree } from '../../contract/tlog/merkle.ts';
import { checkpointBody, formatReceipt } from '../../contract/tlog/note.ts';
import { cosignature, makeKey, signCheckpoint, verify } from '../support/verifier.ts';

const ORIGIN = 'stats.example/log';
const log = makeKey(ORIGIN, 0x01);
const [a, b, c] = ['a', 'b', 'c'].map((n) => makeKey(`witness.example/${n}`, 0x04)) as [ReturnType<typeof makeKey>, ReturnType<typeof makeKey>, ReturnType<typeof makeKey>];
const night = (day: number, usd: number) => JSON.stringify({ at_stake_usd: null, date: `2026-01-${String(day).padStart(2, '0')}`, supersedes: null, trading_cost_usd: null, updated_at: '2026-01-31T00:00:00Z', usd });
const entries = Array.from({ length: 11 }, (_, i) => Buffer.from(night(i + 1, 20 + i + 0.5)));
let dir: string;
let body: string;
let receiptFor: (index: number, note: string, entry?: Uint8Array) => Promise<string>;

const file = (name: string, text: string) => { const at = path.join(dir, name); writeFileSync(at, text); return at; };
const POLICY = () => `log ${log.vkey}\nwitness A ${a.vkey} https://a.example/\nwitness B ${b.vkey}\nwitness C ${c.vkey}\ngroup two 2 A B C\nquorum two\n`;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'verify-receipt-'));
  const tree = await buildTree(entries);
  body = checkpointBody(ORIGIN, tree.size, await tree.root());
  receiptFor = async (index, note, entry = entries[index]!) => formatReceipt(entry, index, await tree.inclusionProof(index), note);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('verify --receipt', () => {
  it('passes a receipt signed by the pinned key and cosigned by the quorum, saying which night it proves', async () => {
    const note = signCheckpoint(body, log) + cosignature(body, a, 1_767_000_000) + cosignature(body, c, 1_767_000_100);
    const receipt = file('good.tlog-proof', await receiptFor(6, note));
    const result = await verify('--receipt', receipt, '--policy', file('policy.txt', POLICY()));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`night 2026-01-07 (26.5 USD) is entry 6 of the checkpoint of 11 entries of ${ORIGIN}, signed by the log key ${log.vkey} (from the policy ${path.join(dir, 'policy.txt')})`);
    expect(result.stdout).toContain('cosigned by A, C: the quorum "two"');
    // With the key alone (no witnesses to check), or the key a state file recorded.
    expect((await verify('--receipt', receipt, '--vkey', log.vkey)).stdout).toContain('(from --vkey)');
    const state = file('state.json', JSON.stringify({ vkey: log.vkey, origin: ORIGIN, size: 0, root: Buffer.alloc(32).toString('base64'), checkpoint: '', seen_at: '2026-01-01T00:00:00Z' }));
    expect((await verify('--receipt', receipt, '--state', state)).stdout).toContain(`(from the state file ${state})`);
  });

  it.each([
    ['too few cosignatures for the quorum', () => signCheckpoint(body, log) + cosignature(body, b, 1_767_000_000), 6, undefined,
      'the receipt\'s checkpoint of 11 entries is not cosigned by the policy\'s quorum "two" (cosigned by B)'],
    ['a cosignature of another checkpoint', () => signCheckpoint(body, log) + cosignature(body.replace('\n11\n', '\n12\n'), a, 1_767_000_000) + cosignature(body, b, 1_767_000_000), 6, undefined,
      "the receipt's checkpoint's cosignature by the witness witness.example/a does not verify"],
    ['a checkpoint signed by a replaced log key', () => signCheckpoint(body, makeKey(ORIGIN, 0x01)) + cosignature(body, a, 1) + cosignature(body, b, 1), 6, undefined,
      `the receipt's checkpoint is signed by another log key than the pinned one (${log.vkey}): a new key is trusted only from a checkpoint the pinned key signs too`],
    ['another night in place of the entry', () => signCheckpoint(body, log) + cosignature(body, a, 1) + cosignature(body, b, 1), 6, Buffer.from(night(7, 99.5)),
      'does not prove its entry is in its checkpoint: the inclusion proof fails'],
  ])('fails on %s, with one sentence', async (_, note, index, entry, sentence) => {
    const receipt = file('bad.tlog-proof', await receiptFor(index, note(), entry));
    const result = await verify('--receipt', receipt, '--policy', file('policy.txt', POLICY()));
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain(sentence);
  });

  it('refuses a receipt without the entry, or that is no tlog-proof, and a policy that is not one', async () => {
    const note = signCheckpoint(body, log);
    const noEntry = (await receiptFor(3, note)).replace(/^extra .*\n/m, '');
    let result = await verify('--receipt', file('no-entry', noEntry), '--vkey', log.vkey);
    expect(result.stderr.trim()).toBe(`verify: the receipt ${path.join(dir, 'no-entry')} carries no entry (its "extra" line), so it proves no night`);
    result = await verify('--receipt', file('not-proof', note), '--vkey', log.vkey);
    expect(result.stderr.trim()).toBe(`verify: the receipt ${path.join(dir, 'not-proof')} is not a tlog-proof (https://c2sp.org/tlog-proof): its first line is not c2sp.org/tlog-proof@v1`);
    result = await verify('--receipt', file('r', await receiptFor(3, note)), '--policy', file('p', `log ${log.vkey}\nquorum A\n`));
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(`verify: the policy ${path.join(dir, 'p')} is not a C2SP tlog-policy: line 2 names "A", which no earlier line defines`);
  });

  it('is bad usage without a log key to check against, or with a --vkey that is none', async () => {
    const receipt = file('r', await receiptFor(3, signCheckpoint(body, log)));
    let result = await verify('--receipt', receipt);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^verify: --receipt needs the log's key: --vkey, a --policy with a log line, or a --state file an earlier run wrote\n/);
    result = await verify('--receipt', receipt, '--vkey', a.vkey);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^verify: --vkey must be the log's note verifier key/);
  });
});
