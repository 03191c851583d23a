// The entries with no date, told apart by their kind: the wallet's commitment and an audit's opening,
// each read for its form and its place in the log; and the nights logged after the first wallet entry
// without a commitment to their reward transfers, which the verifier names.
import { describe, expect, it } from 'vitest';
import { commitmentsLine } from '../../verify/completeness.ts';
import { isAudit, isNight, isWallet, latestByDate, parseEntry, parseNight, readEntries, uncommittedNights, walletInForce } from '../../verify/entries.ts';
import { witnessing } from '../../verify/witnessing.ts';
import { entry, night, noteKey, nonceSha256, opening, wallet } from './audit-log.ts';

const alice = noteKey('auditor.example/alice');
const NONCE = '0123456789abcdef0123456789abcdef';
const failure = (fn: () => unknown): string => { try { fn(); } catch (error) { return (error as Error).message; } return 'no failure'; };
const FORM = 'an audit opening (kind "audit", auditor, checkpoint of at least 1, nonce_sha256: 64 lowercase hex digits, and sample of at least 1 or nights: distinct dates)';

describe('an audit\'s opening', () => {
  it('is read with its auditor, nonce digest, checkpoint, and sample or named nights', () => {
    const drawn = parseEntry(opening(alice, 3, NONCE, 5), 4);
    expect(drawn).toEqual({ index: 4, kind: 'audit', auditor: alice.vkey, nonce_sha256: nonceSha256(NONCE), checkpoint: 3, sample: 5, nights: null });
    expect(isAudit(drawn) && !isWallet(drawn) && !isNight(drawn)).toBe(true);
    expect(parseEntry(opening(alice, 3, NONCE, ['2026-01-02', '2026-01-01']), 4)).toMatchObject({ sample: null, nights: ['2026-01-02', '2026-01-01'] });
    expect(failure(() => parseNight(opening(alice, 3, NONCE, 5), 4))).toBe("log entry 4 is an audit's opening, not a night");
    expect(isWallet(parseEntry(wallet('a', null), 0))).toBe(true);
  });

  const base = { auditor: alice.vkey, checkpoint: 3, kind: 'audit', nonce_sha256: nonceSha256(NONCE) };
  it.each([
    ['both a sample and nights', { ...base, nights: ['2026-01-01'], sample: 1 }],
    ['neither a sample nor nights', base],
    ['a sample of none', { ...base, sample: 0 }],
    ['no night named', { ...base, nights: [] }],
    ['a night named twice', { ...base, nights: ['2026-01-01', '2026-01-01'] }],
    ['a night that is no date', { ...base, nights: ['2026-1-1'] }],
    ['a checkpoint of none', { ...base, checkpoint: 0, sample: 1 }],
    ['a nonce digest in upper case', { ...base, nonce_sha256: nonceSha256(NONCE).toUpperCase(), sample: 1 }],
    ['a nonce digest in base64', { ...base, nonce_sha256: Buffer.from(nonceSha256(NONCE), 'hex').toString('base64'), sample: 1 }],
    ['no auditor', { ...base, auditor: '', sample: 1 }],
    ['a date', { ...base, date: '2026-01-01', sample: 1 }],
  ])('is refused with %s', (_, value) => {
    expect(failure(() => parseEntry(entry(value), 7))).toBe(`log entry 7 is not ${FORM}`);
  });

  it('comes after the checkpoint it names, and no two openings share a nonce', () => {
    const log = [wallet('a', null), night('2026-01-01', 1), night('2026-01-02', 2)];
    expect(readEntries([...log, opening(alice, 3, NONCE, 1)]).map((e) => e.index)).toEqual([0, 1, 2, 3]);
    expect(failure(() => readEntries([...log, opening(alice, 4, NONCE, 1)])))
      .toBe("log entry 3, an audit's opening, names checkpoint 4, which it is not appended after (an opening follows the checkpoint it names)");
    expect(failure(() => readEntries([...log, opening(alice, 3, NONCE, 1), opening(alice, 4, NONCE, ['2026-01-01'])])))
      .toBe("log entry 4, an audit's opening, has the nonce_sha256 of the opening at entry 3: one opening per nonce");
  });

  it('is no night and no wallet: the nights by date, the wallet in force and the witnessing of nights pass it over', () => {
    const entries = readEntries([wallet('a', null), night('2026-01-01', 1), opening(alice, 2, NONCE, 1), night('2026-01-01', 2, { supersedes: 1 }), wallet('b', 0)]);
    expect([...latestByDate(entries)].map(([date, e]) => [date, e.index])).toEqual([['2026-01-01', 3]]);
    expect(walletInForce(entries, 4)?.index).toBe(0);
    expect(witnessing(entries, [{ size: 5, quorumAt: 0 }], 0).map((w) => w.date)).toEqual(['2026-01-01']);
    // A wallet entry replaces the previous wallet entry, never an opening.
    expect(failure(() => readEntries([wallet('a', null), night('2026-01-01', 1), opening(alice, 2, NONCE, 1), wallet('b', 2)])))
      .toBe("log entry 3, the wallet's commitment, replaces 2, but the previous wallet entry is 0");
  });
});

describe('the nights with no commitment to their reward transfers', () => {
  const raw = [
    night('2025-12-30', 1, { transfers: false }),                 // 0: before the wallet entry: it never gains one
    wallet('a', null),                                             // 1
    night('2025-12-31', 2),                                        // 2
    night('2026-01-01', 3, { transfers: false }),                  // 3: logged after the wallet entry with none
    night('2025-12-30', 4, { supersedes: 0, transfers: false }),   // 4: the early night's correction: not named
    opening(alice, 5, NONCE, 1),                                   // 5
    night('2026-01-02', 5),                                        // 6
    night('2026-01-03', 6, { transfers: false }),                  // 7
    night('2026-01-02', 7, { supersedes: 6, transfers: false }),   // 8: a correction that drops its commitment
    night('2026-01-05', 8, { transfers: false }),                  // 9
  ];

  it('are the nights logged after the first wallet entry without one, in date order', () => {
    expect(uncommittedNights(readEntries(raw))).toEqual({ wallet: 1, dates: ['2026-01-01', '2026-01-02', '2026-01-03', '2026-01-05'] });
    expect(commitmentsLine(readEntries(raw)))
      .toBe('  4 nights logged after the first wallet entry (entry 1) with no commitment to the reward transfers: 2026-01-01..2026-01-03, 2026-01-05');
  });

  it('are none when every night since the wallet entry carries one, and the line says so; without a wallet entry it says that', () => {
    expect(commitmentsLine(readEntries(raw.slice(0, 3)))).toBe('  every night logged after the first wallet entry (entry 1) carries a commitment to its reward transfers');
    expect(commitmentsLine(readEntries(raw.slice(0, 1)))).toBe('  the log holds no wallet entry: no night carries a commitment to its reward transfers yet');
    expect(uncommittedNights(readEntries([]))).toEqual({ wallet: undefined, dates: [] });
    expect(commitmentsLine(readEntries([...raw.slice(0, 4)]))).toBe('  1 night logged after the first wallet entry (entry 1) with no commitment to the reward transfers: 2026-01-01');
  });
});
