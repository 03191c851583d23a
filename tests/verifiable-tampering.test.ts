// `npm run verify` checked from outside against a log that changes: a correction proved an append, and
// the right sentence for each tampering by the proxy the site URL names, even one holding every key of
// ours that re-signs what it changed, another log key, and a whole other history under ours.
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays } from '../contract/dates.ts';
import { base64, noteVerifierKey } from '../contract/log-key.ts';
import { SITE_PATHS } from '../contract/paths.ts';
import { buildTree } from '../contract/tlog/merkle.ts';
import { checkpointBody, importNoteSigningKey, signNote } from '../contract/tlog/note.ts';
import type { TestStack } from './support/stack.ts';
import { FORK_RAISE, logReaders, NIGHTS, startVerifiableService, today, type Tamper, type Tampering, type VerifiableService } from './support/verifiable.ts';

let service: VerifiableService;
let stack: TestStack;
let dir: string;
let policy: string;
let site: string;
const { vkey, tlogcheck, checkpoint, history, verify, state, receipt } = logReaders(() => service);
const importEvents = (events: object[]) => service.importEvents(events);

/** What the proxy does to the answers it relays (Tamper says what each kind does). */
let tamper: Tamper = 'none';
let rolledBack = '';
/** When the key directory says our HTTP key was retired ('retired'), in unix seconds. */
let retiredAt = 0;
let otherKey: NonNullable<Tampering['otherKey']>;
let fork: NonNullable<Tampering['fork']>;
const FORK_INDEX = 10;
/** The checkpoint a reader saw before the correction. */
let before: string;

beforeAll(async () => {
  service = await startVerifiableService(() => ({ tamper, rolledBack, retiredAt, otherKey, fork }));
  ({ stack, dir, policy, site } = service);
  // What a reader holds from before the correction: the checkpoint it saw, a receipt of the night to
  // be corrected, and a state file that trusted the log key on first use.
  before = await checkpoint();
  writeFileSync(path.join(dir, 'before.checkpoint'), before);
  const corrected = addDays(today, -50);
  writeFileSync(receipt(corrected), await (await fetch(`${site}${SITE_PATHS.LOG_PROOF}${corrected}`)).text());
  const first = await verify('--state', state());
  expect(first.code, first.stderr).toBe(0);
}, 240_000);
afterAll(() => service?.stop());

describe('the transparency log', () => {
  it('a correction appends an entry, and the old checkpoint is provably a prefix of the new one', async () => {
    const date = addDays(today, -50);
    await importEvents([{ type: 'payout', date, usd: 123.45 }]);
    let grown = before;
    for (let i = 0; i < 40 && grown === before; i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      grown = await checkpoint();
    }
    const log = await tlogcheck('-old', path.join(dir, 'before.checkpoint'));
    expect(log.size).toBe(NIGHTS - 1);
    expect(log.extends).toBe(NIGHTS - 2);
    const corrected = JSON.parse(log.entries.at(-1)!);
    expect(corrected).toMatchObject({ date, usd: 123.45, supersedes: NIGHTS - 50 });
    // The old entry is still there, unchanged.
    expect(JSON.parse(log.entries[NIGHTS - 50]!)).toMatchObject({ date, supersedes: null });
    let night = (await history()).nights.find((n) => n.date === date)!;
    for (let i = 0; i < 40 && night.log_index !== NIGHTS - 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      night = (await history()).nights.find((n) => n.date === date)!;
    }
    expect(night).toMatchObject({ usd: 123.45, log_index: NIGHTS - 2 });

    const result = await verify('--state', state());
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`the log extends checkpoint ${NIGHTS - 2}`);
    // The receipt saved before the correction still verifies, and says the night was corrected since.
    const receipted = await verify('--receipt', receipt(date), '--state', state());
    expect(receipted.code, receipted.stderr).toBe(0);
    expect(receipted.stdout).toContain(`night ${date} was corrected since: entry ${NIGHTS - 2} (123.45 USD) is now the latest for its date`);
  }, 120_000);

  it('npm run verify fails with the right sentence against each tampering', async () => {
    try {
      tamper = 'entry';
      let result = await verify();
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toBe(`verify: the log's entries do not hash to the root of checkpoint ${NIGHTS - 1}`);

      // An older checkpoint that is a prefix of the one seen: an older view, not a rewrite.
      tamper = 'rollback';
      rolledBack = before;
      result = await verify('--state', state());
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toMatch(new RegExp(`^verify: checkpoint ${NIGHTS - 2} is older than checkpoint ${NIGHTS - 1} seen on \\d{4}-\\d{2}-\\d{2}T[\\d:]+Z, though a prefix of it: an older view of the log \\(a lagging node, or a replayed answer\\)$`));

      tamper = 'night';
      result = await verify();
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toBe(`verify: night ${addDays(today, -NIGHTS + 5)} in /api/history is not in the log`);

      tamper = 'stats';
      result = await verify();
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toMatch(/^verify: the signature of \/api\/stats does not verify/);

      // Re-signed with our HTTP key, a night left out and an inflated total each fail on their own.
      tamper = 'drop';
      result = await verify();
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toBe(`verify: night ${addDays(today, -NIGHTS + 20)} is in the log (entry 20) but missing from /api/history`);

      tamper = 'inflate';
      result = await verify();
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toMatch(new RegExp(`^verify: /api/stats says the all-time total is [\\d.]+ USD, but the log's ${NIGHTS - 2} nights and the 2 nights not yet final in /api/history add up to [\\d.]+ USD$`));

      // An answer signed by a key the directory lists as retired verifies only if it was made before.
      tamper = 'retired';
      retiredAt = 1;
      result = await verify();
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toMatch(/^verify: the signature of \/api\/history does not verify: it was created at \S+, after its key \S+ was retired at 1970-01-01T00:00:01Z$/);
      retiredAt = Math.floor(Date.now() / 1000) + 3600;
      result = await verify();
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain(`, retired ${new Date(retiredAt * 1000).toISOString().replace('.000Z', 'Z')}, created `);

      // With the policy, the site's own account of when a night was witnessed is checked too.
      tamper = 'claim';
      result = await verify('--policy', policy);
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toMatch(new RegExp(`^verify: night ${addDays(today, -NIGHTS)} in /api/history claims it was witnessed on time, but the quorum first cosigned it at \\S+, after ${addDays(today, -NIGHTS + 4)}T00:00:00Z$`));
    } finally {
      tamper = 'none';
    }
    // The state file still holds the last good checkpoint: the failed runs saved nothing.
    expect((await verify('--state', state())).code).toBe(0);
  }, 120_000);

  it('fails on a checkpoint signed by another log key than the pinned one, and moves to a new key only through a checkpoint signed by both', async () => {
    const pinned = await vkey();
    const pair = (await crypto.subtle.generateKey('Ed25519', true, ['sign', 'verify'])) as CryptoKeyPair;
    const publicKey = new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey));
    const real = await checkpoint();
    const origin = real.slice(0, real.indexOf('\n'));
    const body = real.slice(0, real.indexOf('\n\n') + 1);
    const alone = await signNote(body, origin, pair.privateKey, publicKey);
    otherKey = { vkey: await noteVerifierKey(origin, publicKey), alone, beside: real + alone.slice(body.length + 1) };
    const replaced = (key: string) => `verify: the checkpoint is signed by another log key than the pinned one (${key}): a new key is trusted only from a checkpoint the pinned key signs too`;
    const moving = path.join(dir, 'moving-state.json');
    copyFileSync(state(), moving);
    try {
      tamper = 'key';
      for (const pin of [['--state', state()], ['--vkey', pinned]]) {
        const result = await verify(...pin);
        expect(result.code).toBe(1);
        expect(result.stderr.trim()).toBe(replaced(pinned));
      }
      tamper = 'overlap';
      const result = await verify('--state', moving);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain(`the log key moved from ${pinned} to ${otherKey.vkey}: checkpoint ${NIGHTS - 1} is signed by both`);
      expect(JSON.parse(readFileSync(moving, 'utf8'))).toMatchObject({ vkey: otherKey.vkey, previous_vkeys: [pinned] });
    } finally {
      tamper = 'none';
    }
    // Once moved, the checkpoint our key alone signs is another key's.
    expect((await verify('--state', moving)).stderr.trim()).toBe(replaced(otherKey.vkey));
  }, 120_000);

  it('a whole other history under our log key passes a verifier that trusts the site, fails with the policy, and against the state file is named a rewrite first and leaves evidence, with or without the policy', async () => {
    // The log as it is now, from PostgREST itself: the API host's cached answer may be seconds old.
    const landing = (await (await fetch(`http://${stack.cfg.bindHost}:${stack.cfg.postgrestPort}/rpc/landing_log`)).json()) as { entries: string[] };
    const date = JSON.parse(landing.entries[FORK_INDEX]!).date as string;
    const entries = landing.entries.map((entry, i) => {
      const night = JSON.parse(entry);
      if (i === FORK_INDEX) night.usd = Math.round((night.usd + FORK_RAISE) * 100) / 100;
      return new TextEncoder().encode(JSON.stringify(night));
    });
    const tree = await buildTree(entries);
    const root = await tree.root();
    const real = await checkpoint();
    const origin = real.slice(0, real.indexOf('\n'));
    const key = await importNoteSigningKey(stack.cfg.LOG_SIGNING_KEY, 'LOG_SIGNING_KEY');
    // The witnesses' cosignatures of the real checkpoint go along, as a forger would try.
    const cosignatures = real.slice(real.indexOf('\n\n') + 2).split('\n').slice(1).join('\n');
    fork = { tree, entries, root: base64(root), date, checkpoint: await signNote(checkpointBody(origin, tree.size, root), origin, key.privateKey, key.publicKey) + cosignatures };
    // The policy's witnesses never cosigned it: their lines do not verify on its body. And the archive
    // still holds our checkpoints, signed by the same key: two histories.
    const cosignatureFails = "verify: the checkpoint's cosignature by the witness witness.test/alpha does not verify";
    const twoHistories = new RegExp(`^verify: archived checkpoint \\d+ is signed by the log's key but is not a state of the log the checkpoint of ${NIGHTS - 1} entries names: the log signed two histories$`);
    const rewrite = new RegExp(`^verify: the log was rewritten: checkpoint ${NIGHTS - 1} is not consistent with checkpoint ${NIGHTS - 1} seen on \\S+ \\(the evidence, both signed checkpoints and the failed proof, is in (\\S+)\\)$`);
    const evidenceFiles = () => readdirSync(dir).filter((f) => f.startsWith('log-rewrite-evidence-')).sort();
    /** The run names the rewrite on its first line, and the evidence file it names is new and holds both checkpoints. */
    const namesRewrite = (result: { code: number; stderr: string }, before: string[]) => {
      expect(result.code).toBe(1);
      const lines = result.stderr.trim().split('\n');
      const sentence = rewrite.exec(lines[0]!);
      expect(sentence, result.stderr).not.toBeNull();
      expect(evidenceFiles()).toEqual([...before, path.basename(sentence![1]!)].sort());
      const evidence = JSON.parse(readFileSync(sentence![1]!, 'utf8'));
      expect(evidence.saved.checkpoint).toBe(real);
      expect(evidence.served.checkpoint).toBe(fork.checkpoint);
      expect(evidence.consistency_proof).toMatchObject({ old_size: NIGHTS - 1, new_size: NIGHTS - 1, hashes: [], verifies: false });
      return lines.slice(1);
    };
    try {
      tamper = 'fork';
      const trusting = await verify();
      expect(trusting.code, trusting.stderr).toBe(0);
      const witnessed = await verify('--policy', policy);
      expect(witnessed.code).toBe(1);
      const [first, second, ...more] = witnessed.stderr.trim().split('\n');
      expect(first).toBe(cosignatureFails);
      expect(second).toMatch(twoHistories);
      expect(more).toEqual([]);
      // Against the state file: the rewrite alone, then with the policy the rewrite first and each other failure on its own line.
      let before = evidenceFiles();
      expect(namesRewrite(await verify('--state', state()), before)).toEqual([]);
      before = evidenceFiles();
      const others = namesRewrite(await verify('--policy', policy, '--state', state()), before);
      expect(others[0]).toBe(cosignatureFails);
      expect(others[1]).toMatch(twoHistories);
      expect(others).toHaveLength(2);
    } finally {
      tamper = 'none';
    }
    expect((await verify('--state', state())).code).toBe(0);
  }, 120_000);
});
