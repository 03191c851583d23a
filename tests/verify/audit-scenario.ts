// The log the verifier's audit tests judge attestations against, and the attestations of it: nights
// before and after the first wallet entry, corrections, then audits opened after checkpoint 12, each
// attested (or not) as one outcome the verifier tells apart. Built with ./audit-log.ts alone.
import { type AuditedLog, judgeAttestation } from '../../verify/audits.ts';
import { readAttestation } from '../../verify/attestation.ts';
import { readEntries } from '../../verify/entries.ts';
import { parsePolicy } from '../../verify/policy.ts';
import { parseVkey, type NoteKey } from '../../log-reader/notes.ts';
import { leafHash, subtreeLevels, treeHash } from '../../log-reader/tree.ts';
import { bodyV2, candidates, drawV2, latestWithin, night, noteKey, opening, ORIGIN, wallet, type TestKey, type V2 } from './audit-log.ts';

export const logKey = noteKey(ORIGIN);
export const alice = noteKey('auditor.example/alice');
export const mallory = noteKey('auditor.example/mallory');
export const N1 = 'nonce-one:0123456789abcdef0123456789';
export const N2 = 'nonce-two:0123456789abcdef0123456789';
export const N3 = 'nonce-three:0123456789abcdef01234567';
export const N4 = 'nonce-four:0123456789abcdef012345678';
export const N5 = 'nonce-five:0123456789abcdef012345678';
export const SIZE = 12;

/** Nights before and after the first wallet entry, corrections, then audits opened after checkpoint 12. */
export const HEAD = [
  night('2025-12-30', 1, { transfers: false }),                 // 0: before the wallet entry, no commitment
  wallet('a', null),                                             // 1
  night('2025-12-31', 2), night('2026-01-01', 3), night('2026-01-02', 4), night('2026-01-03', 5), // 2..5
  night('2026-01-04', 6), night('2026-01-05', 7),                // 6, 7
  night('2025-12-30', 8, { supersedes: 0, transfers: false }),   // 8
  night('2026-01-06', 9), night('2026-01-07', 10),               // 9, 10
  night('2026-01-01', 11, { supersedes: 3 }),                    // 11: the latest for 2026-01-01 within checkpoint 12
];
export const RAW = [
  ...HEAD,
  opening(alice, SIZE, N1, 3),                                   // 12: drawn, attested as passed: counts
  opening(alice, SIZE, N2, ['2026-01-02', '2026-01-04']),        // 13: nights the owner names
  opening(alice, SIZE, N3, 2),                                   // 14: never attested
  night('2026-01-02', 12, { supersedes: 4 }),                    // 15: a drawn night corrected after the checkpoint
  opening(alice, SIZE, N4, 2),                                   // 16: drawn, attested as failed
  night('2026-01-08', 13, { transfers: false }),                 // 17
  opening(mallory, SIZE, N5, 1),                                 // 18: an auditor the policy does not list
  opening(alice, SIZE, 'nonce-six:0123456789abcdef0123456789', ['2025-12-30']), // 19: never attested
  opening(alice, SIZE, 'nonce-seven:0123456789abcdef01234567', ['2026-01-08']), // 20: a night the checkpoint does not hold
];
export const LEVELS = subtreeLevels(RAW.map(leafHash));
export const rootOf = (size: number) => treeHash(LEVELS, 0, size).toString('base64');
export const key = (k: TestKey) => parseVkey(k.vkey, 0x01) as NoteKey;
export const LOG: AuditedLog = { origin: ORIGIN, keys: [key(logKey)], entries: readEntries(RAW), levels: LEVELS };
export const WITHIN = latestWithin(RAW, SIZE);
export const policy = (...keys: TestKey[]) => parsePolicy(Buffer.from(`${keys.map((k) => `auditor ${k.vkey}\n`).join('')}quorum none\n`), 'policy.txt');
export const POLICY = policy(alice);

/** Rule v2's draw from checkpoint 12, computed step by step here. */
export const draw = (nonce: string, k: number) => drawV2(treeHash(LEVELS, 0, SIZE), nonce, candidates(RAW, SIZE), k);
export const passed = (dates: string[]): V2['nights'] => dates.map((d) => [d, WITHIN.get(d) ?? null, 'pass']);
export const v2 = (over: Partial<V2> & Pick<V2, 'opening' | 'drawn' | 'nights'>): V2 => ({ logKey: logKey.vkey, size: SIZE, root: rootOf(SIZE), result: 'pass', ...over });
export const COUNTED = v2({ opening: 12, drawn: { k: 3, nonce: N1 }, nights: passed(draw(N1, 3)) });
export const NAMED = v2({ opening: 13, drawn: null, nights: passed(['2026-01-02', '2026-01-04']), date: '2026-02-02' });
export const FAILED = v2({ opening: 16, drawn: { k: 2, nonce: N4 }, nights: [['2026-01-01', 11, 'fail'], ['2026-01-02', 4, 'pass']], result: 'fail', date: '2026-02-03' });
export const MALLORYS = v2({ opening: 18, drawn: { k: 1, nonce: N5 }, nights: passed(draw(N5, 1)) });
export const NOT_HELD = v2({ opening: 20, drawn: null, nights: [['2026-01-08', null, 'fail']], result: 'fail', date: '2026-02-04' });
export const note = (a: V2, by = alice) => by.sign(bodyV2(a, by));
export const read = (a: V2, by = alice) => readAttestation(note(a, by), 'the attestation');
export const judged = (a: V2, by = alice, log = LOG) => judgeAttestation(read(a, by), POLICY, log);
export const failure = (fn: () => unknown): string => { try { fn(); } catch (error) { return (error as Error).message; } return 'no failure'; };
export const ALICE = 'the audit by auditor.example/alice on 2026-02-01';
