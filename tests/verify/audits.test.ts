// Audit attestations as the verifier reads them: signed with the service's own code
// (contract/audit/attestation.ts), read by the verifier's own reader (verify/audits.ts),
// counted only when the policy lists the auditor, and checked against a log made here; and, against
// Go's reference golang.org/x/mod/sumdb/note (tests/go/auditnote), the key file `npm run audit --
// keygen` writes, its verifier key and the notes we sign read and verify there, and a note Go signs
// with that key reads and verifies here.
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  attestationBody, newAuditorKey, readAttestation as readWithContract, readAuditorKey, signAttestation, type Attestation as Signed, type AuditorKey,
} from '../../contract/audit/attestation.ts';
import { ROOT_DIR } from '../../config/checkout.ts';
import { checkAttestation, checkAudits, listedAuditor, parseAudits, readAttestation, type AuditedLog } from '../../verify/audits.ts';
import { Stale } from '../../log-reader/failure.ts';
import { agents } from '../../log-reader/http.ts';
import { parseVkey, type NoteKey } from '../../log-reader/notes.ts';
import { parsePolicy } from '../../verify/policy.ts';
import { leafHash, subtreeLevels, treeHash } from '../../log-reader/tree.ts';
import { run } from '../support/witness.ts';

const ORIGIN = 'stats.example.com/log';
const T = (n: number) => Buffer.alloc(32, n).toString('base64');

/** A log as the writer makes one: a wallet entry, then nights, one without a commitment and one corrected, in RFC 8785 JSON. */
const ENTRIES = [
  { kind: 'wallet', replaces: null, wallet: T(9) },
  { at_stake_usd: null, date: '2026-01-01', supersedes: null, trading_cost_usd: null, transfers: T(1), updated_at: '2026-01-02T03:00:00Z', usd: 10 },
  { at_stake_usd: null, date: '2026-01-02', supersedes: null, trading_cost_usd: null, updated_at: '2026-01-03T03:00:00Z', usd: 11 },
  { at_stake_usd: null, date: '2026-01-03', supersedes: null, trading_cost_usd: null, transfers: T(3), updated_at: '2026-01-04T03:00:00Z', usd: 12 },
  { at_stake_usd: null, date: '2026-01-01', supersedes: 1, trading_cost_usd: null, transfers: T(1), updated_at: '2026-01-05T03:00:00Z', usd: 10.5 },
  { at_stake_usd: null, date: '2026-01-04', supersedes: null, trading_cost_usd: null, transfers: 'not a digest', updated_at: '2026-01-05T03:00:00Z', usd: 13 },
  { at_stake_usd: null, date: '2026-01-05', supersedes: null, trading_cost_usd: null, transfers: T(5), updated_at: '2026-01-06T03:00:00Z', usd: 14 },
].map((e) => Buffer.from(JSON.stringify(e)));
const LEVELS = subtreeLevels(ENTRIES.map(leafHash));
const LOG: AuditedLog = { origin: ORIGIN, entries: ENTRIES, levels: LEVELS };
const rootOf = (size: number) => treeHash(LEVELS, 0, size).toString('base64');

let alice: AuditorKey;
let mallory: AuditorKey;
const stated = (over: Partial<Omit<Signed, 'auditorKey'>> = {}): Omit<Signed, 'auditorKey'> => ({
  origin: ORIGIN, checkpointSize: 4, checkpointRoot: rootOf(4), chainId: 137, nights: ['2026-01-01', '2026-01-03'], matched: 2, date: '2026-02-01', ...over,
});
const policyListing = (...keys: AuditorKey[]) => parsePolicy(Buffer.from(`${keys.map((k) => `auditor ${k.verifierKey}\n`).join('')}quorum none\n`), 'policy.txt');
const key = (k: AuditorKey) => parseVkey(k.verifierKey, 0x01) as NoteKey;

beforeAll(async () => {
  alice = await newAuditorKey('auditor.example/alice');
  mallory = await newAuditorKey('auditor.example/mallory');
});

describe('the verifier reads an attestation', () => {
  it('reads every line of one signed with the service\'s code, verified by the key its body names', async () => {
    const note = await signAttestation(stated(), alice);
    const a = readAttestation(note, 'the attestation');
    expect(a).toMatchObject({ origin: ORIGIN, size: 4, chainId: 137, nights: ['2026-01-01', '2026-01-03'], matched: 2, date: '2026-02-01', note });
    expect(a.root.toString('base64')).toBe(rootOf(4));
    expect(a.key.name).toBe('auditor.example/alice');
    expect(a.key.raw.equals(Buffer.from(alice.publicKey))).toBe(true);
    // The service's own reader agrees on every field.
    expect(await readWithContract(note)).toMatchObject({ ...stated(), auditorKey: alice.verifierKey, auditor: 'auditor.example/alice' });
  });

  it('refuses a tampered body: the signature no longer verifies', async () => {
    const note = await signAttestation(stated(), alice);
    for (const [from, to] of [['matched 2', 'matched 1'], ['nights 2026-01-01,2026-01-03', 'nights 2026-01-01,2026-01-02'], ['chain 137', 'chain 1']]) {
      const tampered = note.replace(from!, to!);
      expect(tampered).not.toBe(note);
      expect(() => readAttestation(tampered, 'the attestation'), from).toThrow(`the attestation's signature by its auditor key ${alice.verifierKey} does not verify`);
    }
  });

  it('refuses a signature by another key than the one its body names', async () => {
    // The body names alice; mallory signs it under her own name: no signature by alice at all.
    const body = attestationBody({ ...stated(), auditorKey: alice.verifierKey });
    const byMallory = (await signAttestation(stated(), mallory)).slice(attestationBody({ ...stated(), auditorKey: mallory.verifierKey }).length);
    const signedByMallory = body + byMallory;
    expect(() => readAttestation(signedByMallory, 'the attestation')).toThrow(`the attestation carries no signature by the auditor key its body names (${alice.verifierKey})`);
    // Mallory's signature of alice's body under alice's name and key ID: it does not verify.
    const [, , b64] = /^\u2014 (\S+) (\S+)$/m.exec(byMallory)!;
    const forged = Buffer.from(b64!, 'base64');
    Buffer.from(alice.verifierKey.split('+')[1]!, 'hex').copy(forged, 0);
    expect(() => readAttestation(`${body}\n\u2014 auditor.example/alice ${forged.toString('base64')}\n`, 'the attestation'))
      .toThrow(`the attestation's signature by its auditor key ${alice.verifierKey} does not verify`);
    // And the service's own reader refuses both too.
    await expect(readWithContract(signedByMallory)).rejects.toThrow('carries no signature by the key it names');
  });

  it.each([
    ['another first line', (n: string) => n.replace('public-stats audit attestation v1', 'public-stats audit attestation v2'), 'it does not begin "public-stats audit attestation v1"'],
    ['a line missing', (n: string) => n.replace(/^matched .*\n/m, ''), 'its body is not the 8 lines of version 1'],
    ['a line out of order', (n: string) => n.replace(/^(chain .*)\n(nights .*)$/m, '$2\n$1'), 'line 4 is not "chain …"'],
    ['a checkpoint without a root', (n: string) => n.replace(/^checkpoint (\d+) .*$/m, 'checkpoint $1'), 'its checkpoint is not "<tree size> <base64 root hash>"'],
    ['a night that is no date', (n: string) => n.replace('2026-01-03', '2026-02-30'), 'its nights are not distinct dates YYYY-MM-DD separated by commas'],
    ['a night in no month', (n: string) => n.replace('2026-01-03', '2026-13-01'), 'its nights are not distinct dates YYYY-MM-DD separated by commas'],
    ['a night named twice', (n: string) => n.replace('2026-01-03', '2026-01-01'), 'its nights are not distinct dates YYYY-MM-DD separated by commas'],
    ['a date that is no date', (n: string) => n.replace('date 2026-02-01', 'date 2026-02-1'), 'its date is not a date YYYY-MM-DD'],
    ['a chain id of zero', (n: string) => n.replace('chain 137', 'chain 0'), 'its chain is not a chain id'],
    ['more nights matched than named', (n: string) => n.replace('matched 2', 'matched 3'), 'its matched count is not a number from 0 to its 2 nights'],
    ['a witness key as the auditor\'s', (n: string) => n.replace(/^auditor .*$/m, `auditor ${alice.verifierKey.replace(/\+[^+]+$/, '')}+BAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`), 'its auditor key is not a note verifier key of type 0x01'],
  ])('refuses %s, saying what is wrong', async (_, change, why) => {
    const note = change(await signAttestation(stated(), alice));
    expect(() => readAttestation(note, 'the attestation')).toThrow(`the attestation is not an audit attestation (public-stats audit attestation v1): ${why}`);
  });

  it('refuses what is no signed note', () => {
    expect(() => readAttestation('public-stats audit attestation v1\n', 'the attestation')).toThrow('the attestation is not a signed note');
  });
});

describe('an attestation against the policy and the log', () => {
  it('classifies the auditors the policy lists, by name and key, apart from the others', () => {
    const policy = policyListing(alice);
    expect(policy.auditors.map((k) => k.name)).toEqual(['auditor.example/alice']);
    expect(listedAuditor(policy, key(alice))).toBe(true);
    expect(listedAuditor(policy, key(mallory))).toBe(false);
    // The same public key under another name is another auditor's key.
    expect(listedAuditor(policy, { ...key(alice), name: 'auditor.example/eve' })).toBe(false);
    expect(listedAuditor(policyListing(mallory, alice), key(alice))).toBe(true);
    expect(listedAuditor(policyListing(), key(alice))).toBe(false);
  });

  it('counts a listed auditor\'s attestation whose nights all carry a commitment in the log within its checkpoint', async () => {
    const line = checkAttestation(readAttestation(await signAttestation(stated(), alice), 'a'), policyListing(alice), LOG);
    expect(line).toBe(`  audit by auditor.example/alice on 2026-02-01: 2 of 2 nights matched against checkpoint 4 (origin ${ORIGIN})`);
    // A later checkpoint, where 2026-01-01's latest entry is its correction (entry 4), and fewer matched.
    const later = stated({ checkpointSize: 7, checkpointRoot: rootOf(7), nights: ['2026-01-01', '2026-01-05', '2026-01-03'], matched: 1 });
    expect(checkAttestation(readAttestation(await signAttestation(later, alice), 'a'), policyListing(mallory, alice), LOG))
      .toBe(`  audit by auditor.example/alice on 2026-02-01: 1 of 3 nights matched against checkpoint 7 (origin ${ORIGIN})`);
  });

  it('names and does not count an attestation by an auditor the policy does not list, whatever its nights', async () => {
    const note = await signAttestation(stated({ nights: ['2026-01-02'], matched: 1 }), mallory);
    expect(checkAttestation(readAttestation(note, 'a'), policyListing(alice), LOG))
      .toBe(`  attestation by auditor.example/mallory (key ${mallory.verifierKey}) is not by an auditor the policy lists: not counted`);
  });

  it('fails an attestation of another log, even by an auditor the policy does not list', async () => {
    const note = await signAttestation(stated({ origin: 'other.example/log' }), mallory);
    expect(() => checkAttestation(readAttestation(note, 'a'), policyListing(alice), LOG))
      .toThrow(`the attestation by auditor.example/mallory on 2026-02-01 is an audit of the log "other.example/log", not of "${ORIGIN}"`);
  });

  it.each([
    ['a night without a commitment', stated({ nights: ['2026-01-01', '2026-01-02'] }),
      'night 2026-01-02 of the audit by auditor.example/alice on 2026-02-01 carries no commitment to its reward transfers: its latest entry within checkpoint 4 (entry 2) has no "transfers"'],
    ['a night only after its checkpoint', stated({ nights: ['2026-01-05'], matched: 1 }),
      'night 2026-01-05 of the audit by auditor.example/alice on 2026-02-01 is not in the log\'s first 4 entries (checkpoint 4)'],
    ['a commitment that is no digest', stated({ checkpointSize: 6, checkpointRoot: rootOf(6), nights: ['2026-01-04'], matched: 1 }),
      'night 2026-01-04 of the audit by auditor.example/alice on 2026-02-01: the "transfers" of its latest entry within checkpoint 6 (entry 5) is not the base64 of 32 bytes'],
    ['a checkpoint that is no state of the log', stated({ checkpointRoot: rootOf(5) }),
      `the audit by auditor.example/alice on 2026-02-01 names checkpoint 4 with the root ${rootOf(5)}, but the log's first 4 entries hash to ${rootOf(4)}: not a state of this log`],
  ])('fails a counted attestation with %s, naming it', async (_, statement, sentence) => {
    const a = readAttestation(await signAttestation(statement, alice), 'a');
    expect(() => checkAttestation(a, policyListing(alice), LOG)).toThrow(sentence);
  });

  it('reads a checkpoint beyond the log as caches out of step (read again), not yet a failure', async () => {
    const a = readAttestation(await signAttestation(stated({ checkpointSize: 8 }), alice), 'a');
    expect(() => checkAttestation(a, policyListing(alice), LOG)).toThrow(Stale);
  });

  it('reads the audits document, and refuses one of another shape', () => {
    const doc = (value: unknown) => Buffer.from(JSON.stringify(value));
    expect(parseAudits(doc({ audits: [{ note: 'n', published_at: '2026-02-01T00:00:00Z' }] }), '/log/audits')).toEqual([{ note: 'n', published_at: '2026-02-01T00:00:00Z' }]);
    expect(parseAudits(doc({ audits: [] }), '/log/audits')).toEqual([]);
    for (const bad of [[], { audits: {} }, { audits: [{ note: 1, published_at: '2026-02-01T00:00:00Z' }] }, { audits: [{ note: 'n', published_at: 'yesterday' }] }]) {
      expect(() => parseAudits(doc(bad), '/log/audits')).toThrow('/log/audits is not a list of attestations ({"audits":[{"note", "published_at"}, …]})');
    }
  });
});

describe('the audits a site publishes', () => {
  let server: Server;
  let site: URL;
  let served: { status: number; body: string };
  beforeAll(async () => {
    server = createServer((request, response) => {
      const found = request.url === '/log/audits';
      response.writeHead(found ? served.status : 404, { 'content-type': 'application/json' });
      response.end(found ? served.body : '{"error":"not here"}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    site = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  });
  afterAll(async () => {
    agents.http.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  const serve = (notes: string[]) => { served = { status: 200, body: JSON.stringify({ audits: notes.map((note, i) => ({ note, published_at: `2026-02-0${i + 1}T12:00:00Z` })) }) }; };

  it('are none on a site without /log/audits, or with an empty list', async () => {
    served = { status: 404, body: '' };
    expect(await checkAudits(site, '/log', policyListing(alice), LOG)).toEqual(['  no audit is published: the site serves no /log/audits']);
    serve([]);
    expect(await checkAudits(site, '/log', policyListing(alice), LOG)).toEqual(['  no audit is published under /log/audits']);
  });

  it('give a line each, counted or not', async () => {
    serve([await signAttestation(stated(), alice), await signAttestation(stated(), mallory)]);
    expect(await checkAudits(site, '/log', policyListing(alice), LOG)).toEqual([
      `  audit by auditor.example/alice on 2026-02-01: 2 of 2 nights matched against checkpoint 4 (origin ${ORIGIN})`,
      `  attestation by auditor.example/mallory (key ${mallory.verifierKey}) is not by an auditor the policy lists: not counted`,
    ]);
  });

  it('fail with a sentence for each attestation that fails, the others read all the same', async () => {
    const good = await signAttestation(stated(), alice);
    serve([good.replace('matched 2', 'matched 1'), good, await signAttestation(stated({ nights: ['2026-01-02'], matched: 1 }), alice)]);
    await expect(checkAudits(site, '/log', policyListing(alice), LOG)).rejects.toThrow([
      `attestation 1 of /log/audits's signature by its auditor key ${alice.verifierKey} does not verify`,
      'night 2026-01-02 of the audit by auditor.example/alice on 2026-02-01 carries no commitment to its reward transfers: its latest entry within checkpoint 4 (entry 2) has no "transfers"',
    ].join('\n'));
  });

  it('fail when the site answers otherwise', async () => {
    served = { status: 500, body: '' };
    await expect(checkAudits(site, '/log', policyListing(alice), LOG)).rejects.toThrow(/^\/log\/audits \(http:\/\/127\.0\.0\.1:\d+\/log\/audits\) answered HTTP 500, not 200$/);
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

  it('note.NewSigner takes the key file `npm run audit -- keygen` writes, note.NewVerifier its verifier key, and note.Open our attestation', async () => {
    const keyFile = file('alice.key', alice.text);
    const note = await signAttestation(stated(), alice);
    const opened = await go('open', '-vkey', alice.verifierKey, '-note', file('ours.txt', note));
    expect(opened).toEqual({ name: 'auditor.example/alice', hash: alice.verifierKey.split('+')[1], text: attestationBody({ ...stated(), auditorKey: alice.verifierKey }), signers: ['auditor.example/alice'] });
    // Go refuses it once tampered, and refuses it by a key it does not trust.
    await expect(go('open', '-vkey', alice.verifierKey, '-note', file('tampered.txt', note.replace('matched 2', 'matched 1')))).rejects.toThrow(/note\.Open: invalid signature for key auditor\.example\/alice/);
    await expect(go('open', '-vkey', mallory.verifierKey, '-note', file('ours-2.txt', note))).rejects.toThrow(/note\.Open: note has no verifiable signatures/);

    // Go signs our attestation's body with our key file: the very signature we make (Ed25519 is deterministic), and it reads here.
    const body = attestationBody({ ...stated(), auditorKey: alice.verifierKey });
    const signed = await go('sign', '-key', keyFile, '-body', file('body.txt', body));
    expect(signed).toMatchObject({ name: 'auditor.example/alice', hash: alice.verifierKey.split('+')[1] });
    expect(signed.note).toBe(note);
    const read = readAttestation(signed.note as string, 'Go\'s attestation');
    expect(read).toMatchObject({ origin: ORIGIN, size: 4, nights: ['2026-01-01', '2026-01-03'], matched: 2 });
    expect(read.key.raw.equals(Buffer.from(alice.publicKey))).toBe(true);
    expect(await readWithContract(signed.note as string)).toMatchObject({ auditor: 'auditor.example/alice', auditorKey: alice.verifierKey });
  }, 60_000);

  it('a key Go makes (note.GenerateKey) reads as an auditor\'s key here, and what it signs verifies here', async () => {
    const { skey, vkey } = await go('keygen', '-name', 'auditor.example/go') as { skey: string; vkey: string };
    const goKey = await readAuditorKey(`${skey}\n`);
    expect(goKey.verifierKey).toBe(vkey);
    expect(goKey.text).toBe(`${skey}\n`);
    const signed = await go('sign', '-key', file('go.key', skey), '-body', file('go-body.txt', attestationBody({ ...stated(), auditorKey: vkey })));
    const a = readAttestation(signed.note as string, 'Go\'s attestation');
    expect(a.key.name).toBe('auditor.example/go');
    expect(checkAttestation(a, parsePolicy(Buffer.from(`auditor ${vkey}\nquorum none\n`), 'policy.txt'), LOG))
      .toBe(`  audit by auditor.example/go on 2026-02-01: 2 of 2 nights matched against checkpoint 4 (origin ${ORIGIN})`);
    // Ours signs the same note Go does with Go's key.
    expect(await signAttestation(stated(), goKey)).toBe(signed.note);
  }, 60_000);
});
