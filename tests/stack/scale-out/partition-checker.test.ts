// The partition tests' checker (tests/support/partition-checker.ts) on crafted histories: each check
// passes a clean history and names what is wrong in a lost, forked, overlapping, unavailable or
// shrinking one, so a partition scenario that passes does so because its history is clean.
import { describe, expect, it } from 'vitest';
import { forks, lostWrites, overlaps, shrank, unavailable, type FinalState } from '../../support/partition-checker.ts';
import { emptyHistory, Recorder, since, type History } from '../../support/partition-history.ts';
import type { ReaderEvent } from '../../support/partition-agent.ts';

const T = Date.parse('2026-11-28T00:00:00Z');
const iso = (ms: number) => new Date(T + ms).toISOString();
const OLD = '198.18.0.11:54329';
const NEW = '198.18.0.12:54328';

const read = (reader: string, at: number, size: number, root: string, what: ReaderEvent['what'] = 'checkpoint'): ReaderEvent =>
  ({ reader, what, at: T + at, ms: 20, status: 200, checkpoints: [{ size, root }] });
const health = (reader: string, at: number, status: ReaderEvent['status'], ms = 20): ReaderEvent =>
  ({ reader, what: 'site_health', at: T + at, ms, status, ...(status === 200 ? { health: { status: 'down', writer: null, logSize: null } } : {}) });

/** A clean history: writer a on the old primary until the cut, writer b on the new one after; readers agree. */
function cleanHistory(): { history: History; final: FinalState } {
  const history = emptyHistory();
  for (let s = 0; s < 5; s++) history.acks.push({ writer: 'writer-a', at: iso(s * 1000), server: OLD, ackedAt: T + s * 1000 + 50 });
  for (let s = 50; s < 55; s++) history.acks.push({ writer: 'writer-b', at: iso(s * 1000), server: NEW, ackedAt: T + s * 1000 + 50 });
  history.nights.push({ importer: 'importer-a', date: '2023-01-02', usd: 11.25, startedAt: T, endedAt: T + 500, outcome: 'ok' });
  history.nights.push({ importer: 'importer-a', date: '2023-01-03', usd: 12.25, startedAt: T + 6000, endedAt: T + 40_000, outcome: 'unknown' });
  history.nights.push({ importer: 'importer-b', date: '2023-01-04', usd: 13.25, startedAt: T + 51_000, endedAt: T + 51_500, outcome: 'ok' });
  history.reads.push(read('reader-a', 0, 3, 'root3'), read('reader-a', 10_000, 4, 'root4'), read('reader-b', 52_000, 5, 'root5'), read('reader-b', 52_000, 4, 'root4', 'landing_log'));
  history.reads.push(health('reader-a', 20_000, 200), health('reader-b', 20_000, 200));
  const final: FinalState = {
    heartbeats: history.acks.map((a) => ({ writer: a.writer, at: a.at })),
    payouts: new Map([['2023-01-02', 11.25], ['2023-01-04', 13.25]]),
    checkpoints: [{ size: 3, root: 'root3' }, { size: 4, root: 'root4' }, { size: 5, root: 'root5' }],
    cosigned: [{ size: 5, root: 'root5' }],
  };
  return { history, final };
}

describe('the partition checker', () => {
  it('passes a clean history: acknowledged writes kept, a write of unknown outcome missing, one root per size, no overlap, health answered', () => {
    const { history, final } = cleanHistory();
    expect(lostWrites(history, final)).toEqual([]);
    expect(forks(history, final)).toEqual([]);
    expect(overlaps(history, OLD, NEW)).toEqual([]);
    expect(unavailable(history)).toEqual([]);
    expect(shrank(history)).toEqual([]);
  });

  it('finds an acknowledged heartbeat or night missing on the surviving primary, or a night with another value', () => {
    const { history, final } = cleanHistory();
    final.heartbeats = final.heartbeats.filter((h) => h.at !== iso(4000));
    final.payouts.delete('2023-01-04');
    final.payouts.set('2023-01-02', 99);
    const lost = lostWrites(history, final);
    expect(lost).toHaveLength(3);
    expect(lost[0]).toMatch(/heartbeat 2026-11-28T00:00:04.000Z of writer-a, acknowledged on 198.18.0.11:54329 .* is not on the surviving primary/);
    expect(lost.join('\n')).toMatch(/night 2023-01-04 .* is missing/);
    expect(lost.join('\n')).toMatch(/night 2023-01-02 \(11.25 USD\).* is 99 USD/);
  });

  it('finds a fork: two roots for one size between readers, or between a reader and what is stored or cosigned', () => {
    const { history, final } = cleanHistory();
    history.reads.push(read('reader-a', 30_000, 5, 'forked'));
    expect(forks(history, final)).toEqual([expect.stringMatching(/^size 5 has 2 roots: root5 \(reader-b \(checkpoint\), the surviving primary, a witness\) vs forked \(reader-a \(checkpoint\)\)$/)]);
    const { history: h2, final: f2 } = cleanHistory();
    f2.cosigned.push({ size: 3, root: 'witnessed-other' });
    expect(forks(h2, f2)).toEqual([expect.stringMatching(/^size 3 has 2 roots: root3 .* vs witnessed-other \(a witness\)$/)]);
    const { history: h3, final: f3 } = cleanHistory();
    h3.reads.push(read('reader-b', 53_000, 4, 'other4', 'landing_log'));
    expect(forks(h3, f3)).toHaveLength(1);
  });

  it('finds overlapping acknowledgements: one on the old primary after the new one began its first', () => {
    const { history } = cleanHistory();
    history.acks.push({ writer: 'writer-a', at: iso(49_000), server: OLD, ackedAt: T + 50_500 });
    const found = overlaps(history, OLD, NEW);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/writer-a's heartbeat 2026-11-28T00:00:49.000Z was acknowledged on the old primary 198.18.0.11:54329 at 2026-11-28T00:00:50.500Z, after the new primary 198.18.0.12:54328 began its first acknowledged write \(writer-b's heartbeat 2026-11-28T00:00:50.000Z\)/);
    // Acknowledged just before the new primary's first write began: no overlap.
    const { history: h2 } = cleanHistory();
    h2.acks.push({ writer: 'writer-a', at: iso(49_000), server: OLD, ackedAt: T + 49_990 });
    expect(overlaps(h2, OLD, NEW)).toEqual([]);
  });

  it('finds health that was not a 200 within 5 s: an error, a hang or a late answer, and a reader served a smaller log', () => {
    const { history } = cleanHistory();
    history.reads.push(health('reader-a', 30_000, 503), health('reader-a', 31_000, 'hung', 5000), health('reader-b', 32_000, 200, 6000));
    const found = unavailable(history);
    expect(found).toHaveLength(2);
    expect(found[0]).toMatch(/^reader-a site_health: 2 answers not a 200 within 5000 ms \(503, hung\)/);
    expect(found[1]).toMatch(/^reader-b site_health: 1 answers not a 200 within 5000 ms \(200\)/);
    history.reads.push(read('reader-a', 40_000, 3, 'root3'));
    expect(shrank(history)).toEqual([expect.stringMatching(/^reader-a was served size 3 at .* after size 4 at /)]);
  });

  it('records the history from the processes\' output: the session\'s server for each heartbeat, a night\'s outcome, readers\' lines', () => {
    const recorder = new Recorder();
    const line = (msg: string, fields: object, ms: number) => JSON.stringify({ ts: iso(ms), level: 'info', msg, ...fields });
    recorder.writerLine('writer-a', line('holding the writer lock: this writer writes', { server: OLD }, 0));
    recorder.writerLine('writer-a', line('heartbeat done', { note: iso(900) }, 1000));
    recorder.writerLine('writer-a', line('lost the writer lock: writing nothing until it holds the lock again, which it asks for after a pause that lets a standby take over', {}, 2000));
    recorder.writerLine('writer-a', line('holding the writer lock: this writer writes', { server: NEW }, 3000));
    recorder.writerLine('writer-a', line('heartbeat done', { note: iso(3900) }, 4000));
    recorder.writerLine('writer-a', 'not json');
    recorder.readerLine(JSON.stringify(read('reader-a', 5000, 7, 'r7')));
    recorder.readerLine('{"cut sho');
    recorder.night({ importer: 'importer-a', date: '2023-01-02', usd: 1, startedAt: T, endedAt: T + 6000, outcome: 'unknown' });
    const { history } = recorder;
    expect(history.acks).toEqual([
      { writer: 'writer-a', at: iso(900), server: OLD, ackedAt: T + 1000 },
      { writer: 'writer-a', at: iso(3900), server: NEW, ackedAt: T + 4000 },
    ]);
    expect(history.reads).toHaveLength(1);
    expect(since(history, T + 3500)).toMatchObject({ acks: [{ server: NEW }], nights: [{ date: '2023-01-02' }], reads: [{ reader: 'reader-a' }] });
  });
});
