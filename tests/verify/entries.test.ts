// The verifier's reading of the log's entries: nights, with or without the commitment to their
// reward transfers, and the wallet's commitment, an entry of its own kind; each checked for its form
// and its place in the log, written here as the database writes them (RFC 8785, by `canonicalize`).
import canonicalize from 'canonicalize';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isWallet, latestByDate, nightsOf, parseEntry, parseNight, readEntries, walletInForce } from '../../verify/entries.ts';

const commitment = (what: string) => createHash('sha256').update(what).digest('base64');
const bytes = (value: object) => Buffer.from(canonicalize(value)!);
const night = (date: string, usd: number, extra: { supersedes?: number; transfers?: string } = {}) => bytes({
  at_stake_usd: null, date, supersedes: extra.supersedes ?? null, trading_cost_usd: 1.5,
  ...(extra.transfers ? { transfers: extra.transfers } : {}), updated_at: `${date}T00:05:00Z`, usd,
});
const wallet = (what: string, replaces: number | null) => bytes({ kind: 'wallet', replaces, wallet: commitment(what) });
/** The message of the failure `fn` ends with. */
const failure = (fn: () => unknown): string => { try { fn(); } catch (error) { return (error as Error).message; } return 'no failure'; };

describe('a log entry', () => {
  it('is a night, its transfers\' commitment kept when it has one', () => {
    expect(parseEntry(night('2026-03-01', 10.5), 3)).toEqual({ index: 3, date: '2026-03-01', usd: 10.5, trading_cost_usd: 1.5, at_stake_usd: null, supersedes: null, transfers: null });
    expect(parseEntry(night('2026-03-01', 10.5, { transfers: commitment('t') }), 3)).toMatchObject({ transfers: commitment('t') });
  });

  it('or the wallet\'s commitment, which is no night', () => {
    const entry = parseEntry(wallet('a', 2), 5);
    expect(entry).toEqual({ index: 5, kind: 'wallet', wallet: commitment('a'), replaces: 2 });
    expect(isWallet(entry)).toBe(true);
    expect(failure(() => parseNight(wallet('a', null), 0))).toBe("log entry 0 is the wallet's commitment, not a night");
  });

  it.each([
    ['a commitment that is not base64 of 32 bytes', bytes({ kind: 'wallet', replaces: null, wallet: 'abc=' }), 'log entry 0 is not a wallet commitment (kind "wallet", replaces, wallet: base64 of 32 bytes)'],
    ['44 characters whose last bits are not zero', bytes({ kind: 'wallet', replaces: null, wallet: `${'A'.repeat(42)}B=` }), 'log entry 0 is not a wallet commitment (kind "wallet", replaces, wallet: base64 of 32 bytes)'],
    ['a wallet entry with a date', bytes({ date: '2026-03-01', kind: 'wallet', replaces: null, wallet: commitment('a') }), 'log entry 0 is not a wallet commitment (kind "wallet", replaces, wallet: base64 of 32 bytes)'],
    ['a negative replaces', bytes({ kind: 'wallet', replaces: -1, wallet: commitment('a') }), 'log entry 0 is not a wallet commitment (kind "wallet", replaces, wallet: base64 of 32 bytes)'],
    ['an unknown kind', bytes({ kind: 'payer', replaces: null, wallet: commitment('a') }), 'log entry 0 is of a kind this verifier does not know ("payer")'],
    ['a night\'s transfers not base64 of 32 bytes', night('2026-03-01', 1, { transfers: 'Zm9v' }), 'log entry 0 is not a night (date, usd, trading_cost_usd, at_stake_usd, supersedes, updated_at, and transfers: base64 of 32 bytes, when it has one)'],
    ['keys out of order', Buffer.from(`{"wallet":"${commitment('a')}","kind":"wallet","replaces":null}`), 'log entry 0 is not RFC 8785 canonical JSON'],
  ])('is refused with %s', (_, entry, sentence) => {
    expect(failure(() => parseEntry(entry, 0))).toBe(sentence);
  });
});

describe('the log read whole', () => {
  const log = [
    wallet('a', null),                                                  // 0
    night('2026-03-01', 10.5),                                          // 1
    night('2026-03-02', 11, { transfers: commitment('02') }),           // 2
    wallet('b', 0),                                                     // 3
    night('2026-03-01', 10.75, { supersedes: 1 }),                      // 4
    night('2026-03-02', 11.25, { supersedes: 2, transfers: commitment('02 again') }), // 5
  ];

  it('keeps every entry at its index; the nights\' latest by date leave the wallet out', () => {
    const entries = readEntries(log);
    expect(entries.map((e) => e.index)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(nightsOf(entries).map((e) => e.index)).toEqual([1, 2, 4, 5]);
    expect([...latestByDate(entries)].map(([date, e]) => [date, e.index])).toEqual([['2026-03-01', 4], ['2026-03-02', 5]]);
  });

  it('names the wallet in force at each entry: the latest wallet entry before it', () => {
    const entries = readEntries(log);
    expect([0, 1, 2, 3, 4, 5, 6].map((i) => walletInForce(entries, i)?.index)).toEqual([undefined, 0, 0, 0, 3, 3, 3]);
    expect(walletInForce(entries, 4)?.wallet).toBe(commitment('b'));
  });

  it.each([
    ['a wallet entry that replaces nothing though one came before', [wallet('a', null), wallet('b', null)],
      "log entry 1, the wallet's commitment, replaces nothing, but the previous wallet entry is 0"],
    ['a wallet entry that replaces a night', [wallet('a', null), night('2026-03-01', 1), wallet('b', 1)],
      "log entry 2, the wallet's commitment, replaces 1, but the previous wallet entry is 0"],
    ['a first wallet entry that replaces something', [night('2026-03-01', 1), wallet('a', 0)],
      "log entry 1, the wallet's commitment, replaces 0, but the previous wallet entry is none"],
    ['a correction that supersedes a wallet entry', [wallet('a', null), night('2026-03-01', 1, { supersedes: 0 })],
      'log entry 1 for 2026-03-01 supersedes 0, but the previous entry for that date is none'],
    ['a night that gains a commitment in a correction', [night('2026-03-01', 1), night('2026-03-01', 2, { supersedes: 0, transfers: commitment('late') })],
      'log entry 1 for 2026-03-01 carries a commitment to its transfers, but the night entered the log without one (entry 0), and a commitment made later is never logged for it'],
  ])('fails on %s', (_, raw, sentence) => {
    expect(failure(() => readEntries(raw))).toBe(sentence);
  });
});
