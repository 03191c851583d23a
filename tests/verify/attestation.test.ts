// Attestations as the verifier reads them (verify/attestation.ts): version 2 and version 1, written and
// signed here from the formats alone (./audit-log.ts), each line read and each malformed one refused
// with what is wrong; and, against Go's reference golang.org/x/mod/sumdb/note (tests/go/auditnote),
// the auditor's key file and the notes signed here sign and open there, and a key Go makes is an
// auditor's key here.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../config/checkout.ts';
import { readAttestation } from '../../verify/attestation.ts';
import { judgeAttestation, type AuditedLog } from '../../verify/audits.ts';
import { readEntries } from '../../verify/entries.ts';
import { parsePolicy } from '../../verify/policy.ts';
import { parseVkey, type NoteKey } from '../../log-reader/notes.ts';
import { leafHash, subtreeLevels } from '../../log-reader/tree.ts';
import { run } from '../support/witness.ts';
import { bodyV1, bodyV2, opening, ORIGIN, type TestKey } from './audit-log.ts';
import {
  alice, COUNTED, FAILED, failure, HEAD, key, LOG, logKey, mallory, N1, N3, N4, note, NOT_HELD, POLICY, read, rootOf, SIZE,
} from './audit-scenario.ts';

describe('the verifier reads an attestation', () => {
  it('reads every line of version 2, verified by the key its body names', () => {
    const a = read(FAILED);
    expect(a).toMatchObject({
      version: 2, origin: ORIGIN, size: SIZE, opening: 16, chosen: { drawn: true, k: 2, nonce: N4 }, chainId: 137, pass: false, date: '2026-02-03',
      nights: [{ date: '2026-01-01', index: 11, pass: false }, { date: '2026-01-02', index: 4, pass: true }],
    });
    expect(a.root.toString('base64')).toBe(rootOf(SIZE));
    expect(a.key.name).toBe('auditor.example/alice');
    expect(a.version === 2 && a.logKey.raw.equals(key(logKey).raw)).toBe(true);
    expect(read(NOT_HELD)).toMatchObject({ chosen: { drawn: false }, nights: [{ date: '2026-01-08', index: null, pass: false }] });
  });

  it('reads version 1, which it never counts', () => {
    const a = readAttestation(alice.sign(bodyV1(SIZE, rootOf(SIZE), ['2026-01-02'], alice)), 'v1');
    expect(a).toMatchObject({ version: 1, size: SIZE, nights: ['2026-01-02'], matched: 1 });
    expect(judgeAttestation(a, POLICY, LOG)).toEqual({
      lines: ['  attestation by auditor.example/alice on 2026-01-20 is of rule v1, which records neither how its nights were chosen nor a nonce opened in the log: not counted'], counts: false,
    });
  });

  it('refuses a tampered body, and a signature by another key than the one its body names', () => {
    const signed = note(COUNTED);
    for (const [from, to] of [['result pass', 'result fail'], [`nonce ${N1}`, `nonce ${N3}`], ['opening 12', 'opening 14']]) {
      expect(failure(() => readAttestation(signed.replace(from!, to!), 'the attestation')), from).toBe(`the attestation's signature by its auditor key ${alice.vkey} does not verify`);
    }
    const byMallory = mallory.sign(bodyV2(COUNTED, alice));
    expect(failure(() => readAttestation(byMallory, 'the attestation'))).toBe(`the attestation carries no signature by the auditor key its body names (${alice.vkey})`);
  });

  const edit = (from: RegExp, to: string) => (body: string) => body.replace(from, to);
  it.each([
    ['another first line', edit(/^public-stats audit attestation v2/, 'public-stats audit attestation v3'), 'it does not begin "public-stats audit attestation v2" or "public-stats audit attestation v1"'],
    ['no night', edit(/^night .*\n/gm, ''), 'it names no night'],
    ['nights out of order', edit(/^(night 2026-01-02 .*)\n(night 2026-01-03 .*)$/m, '$2\n$1'), 'its nights are not distinct and in date order'],
    ['a pass with a failed night', edit(/^(night 2026-01-03 \d+) pass$/m, '$1 fail'), 'its result is pass though night 2026-01-03 failed'],
    ['a night passed with no entry', edit(/^night 2026-01-03 \d+ pass$/m, 'night 2026-01-03 - pass'), 'night 2026-01-03 passes with no entry'],
    ['a night line of another form', edit(/^night 2026-01-03 (\d+) pass$/m, 'night 2026-01-03 $1 ok'), 'line 10 is not "night <YYYY-MM-DD> <entry index or -> pass|fail"'],
    ['a draw by another rule', edit(/rule v2/, 'rule v1'), 'its chosen line is not "chosen drawn <K> rule v2 nonce <N>" (N: 32 to 128 of A-Z a-z 0-9 . _ : -) or "chosen named"'],
    ['a nonce too short', edit(/nonce \S+$/m, 'nonce 0123'), 'its chosen line is not "chosen drawn <K> rule v2 nonce <N>" (N: 32 to 128 of A-Z a-z 0-9 . _ : -) or "chosen named"'],
    ['an opening that is no index', edit(/^opening 12$/m, 'opening twelve'), 'its opening is not the index of a log entry'],
    ['a payer list digest in base64', edit(/^payers .*$/m, `payers ${Buffer.alloc(32).toString('base64')}`), 'its payers is not the lowercase hex SHA-256 of a payer list'],
    ['a log key of another type', edit(/^log-key .*$/m, 'log-key stats.example.com/log+00000000+BAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'), 'its log key is not a note verifier key of type 0x01'],
    ['a result that is neither', edit(/^result pass$/m, 'result maybe'), 'its result is not pass or fail'],
    ['lines out of order', edit(/^(chain .*)\n(payers .*)$/m, '$2\n$1'), 'line 7 is not "chain …"'],
  ])('refuses %s, saying what is wrong', (_, change, why) => {
    const body = change(bodyV2(COUNTED, alice));
    expect(body).not.toBe(bodyV2(COUNTED, alice));
    expect(failure(() => readAttestation(alice.sign(body), 'the attestation'))).toMatch(new RegExp(`^the attestation is not an audit attestation \\(public-stats audit attestation v2\\): ${why.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  });
});

describe('against Go\'s golang.org/x/mod/sumdb/note', () => {
  let dir: string;
  let auditnote: string;
  const go = async (...args: string[]) => JSON.parse((await run(auditnote, args)).stdout) as Record<string, unknown>;
  const file = (name: string, text: string) => { const at = path.join(dir, name); writeFileSync(at, text); return at; };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'audit-go-'));
    auditnote = path.join(dir, 'auditnote');
    await run('go', ['build', '-o', auditnote, './tests/go/auditnote'], {
      cwd: ROOT_DIR,
      env: { ...process.env, GO111MODULE: 'off', GOPATH: '/usr/share/gocode', GOCACHE: path.join(tmpdir(), 'public-stats-go-cache') },
    });
  }, 180_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('an attestation Go signs with the auditor\'s key file is the one signed here, and counts; Go opens it and refuses it tampered', async () => {
    const signed = await go('sign', '-key', file('alice.key', `${alice.skey}\n`), '-body', file('body.txt', bodyV2(COUNTED, alice)));
    expect(signed).toMatchObject({ name: 'auditor.example/alice', hash: alice.vkey.split('+')[1] });
    // Ed25519 is deterministic: the very note signed here.
    expect(signed.note).toBe(note(COUNTED));
    expect(judgeAttestation(readAttestation(signed.note as string, 'Go\'s attestation'), POLICY, LOG).counts).toBe(true);
    expect(await go('open', '-vkey', alice.vkey, '-note', file('ours.txt', note(COUNTED)))).toMatchObject({ text: bodyV2(COUNTED, alice), signers: ['auditor.example/alice'] });
    await expect(go('open', '-vkey', alice.vkey, '-note', file('tampered.txt', note(COUNTED).replace('result pass', 'result fail'))))
      .rejects.toThrow(/note\.Open: invalid signature for key auditor\.example\/alice/);
  }, 60_000);

  it('a key Go makes (note.GenerateKey) is an auditor\'s key here: listed, its drawn audit counts', async () => {
    const { skey, vkey } = await go('keygen', '-name', 'auditor.example/go') as { skey: string; vkey: string };
    const goKey = parseVkey(vkey, 0x01) as NoteKey;
    const asAuditor = { name: goKey.name, vkey } as TestKey;
    // The log holds no opening by this key: its attestation of opening 12 names alice's opening.
    const signed = await go('sign', '-key', file('go.key', skey), '-body', file('go-body.txt', bodyV2(COUNTED, asAuditor)));
    const a = readAttestation(signed.note as string, 'Go\'s attestation');
    expect(a.key.raw.equals(goKey.raw)).toBe(true);
    const listing = parsePolicy(Buffer.from(`auditor ${vkey}\nquorum none\n`), 'policy.txt');
    expect(failure(() => judgeAttestation(a, listing, LOG))).toBe(`the audit by auditor.example/go on 2026-02-01: its opening (entry 12) opens an audit by another auditor (${alice.vkey})`);
    // With its own opening in the log, it counts.
    const raw = [...HEAD, opening(asAuditor, SIZE, N1, 3)];
    const log: AuditedLog = { origin: ORIGIN, keys: [key(logKey)], entries: readEntries(raw), levels: subtreeLevels(raw.map(leafHash)) };
    expect(judgeAttestation(a, listing, log).counts).toBe(true);
  }, 60_000);
});
