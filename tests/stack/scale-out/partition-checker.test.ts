// The partition tests' checker (tests/support/partition-checker.ts) and the scenarios' effects
// (partition-effects.ts) on crafted histories of a whole run. An honest run passes: the primary moves
// A, B, then A again, a write of unknown outcome is missing, every checkpoint is a prefix of the
// survivor's log. Each other case is a run that a checker reading one scenario's window, comparing
// roots at equal sizes only, recording no signed checkpoint, hearing nothing of a dead reader,
// checking overlaps only when the primary's name changed, or asserting no fault's effect, passed; the
// checker names what is wrong in a sentence.
import { describe, expect, it } from 'vitest';
import { base64 } from '../../../contract/log-key.ts';
import { buildTree } from '../../../contract/tlog/merkle.ts';
import type { Network } from '../../support/netns.ts';
import type { ReaderEvent } from '../../support/partition-agent.ts';
import { checkHistory, type Failure, type Survivor } from '../../support/partition-checker.ts';
import { cutBetween } from '../../support/partition-cuts.ts';
import { effectFailures, type DialResult, type Observed } from '../../support/partition-effects.ts';
import { emptyHistory, Recorder, since, type History } from '../../support/partition-history.ts';

const T = Date.parse('2026-11-28T00:00:00Z');
const iso = (s: number) => new Date(T + s * 1000).toISOString();
const A = '198.18.0.11:54329';
const B = '198.18.0.12:54328';
const READERS = ['reader-a', 'reader-b'];
const utf8 = new TextEncoder();
const ENTRIES = Array.from({ length: 8 }, (_, i) => `{"date":"2023-01-${String(i + 2).padStart(2, '0')}","usd":${i}}`);
/** The root of the first `size` of `entries`, base64 as a checkpoint gives it. */
const rootOf = async (size: number, entries = ENTRIES) => base64(await (await buildTree(entries.map((e) => utf8.encode(e)))).root(size));
const ack = (writer: string, server: string, s: number, took = 0.05) => ({ writer, at: iso(s), server, began: T + s * 1000, ackedAt: T + (s + took) * 1000 });
const served = async (reader: string, s: number, size: number, root?: string, what: ReaderEvent['what'] = 'checkpoint'): Promise<ReaderEvent> =>
  ({ reader, what, at: T + s * 1000, ms: 20, status: 200, checkpoints: [{ size, root: root ?? await rootOf(size) }] });
const health = (reader: string, s: number, status: ReaderEvent['status'] = 200, ms = 20): ReaderEvent =>
  ({ reader, what: 'site_health', at: T + s * 1000, ms, status, ...(status === 200 ? { health: { status: 'ok', writer: null, logSize: null } } : {}) });

/**
 * An honest run of 120 s: writer-a on A until 10 s, the failover, writer-b on B from 40 s, the
 * failover back, writer-a on A from 100 s; nights imported, one of unknown outcome not kept; both
 * readers answering every second; the signers and the witness on the one log the survivor holds.
 */
async function honestRun(): Promise<{ history: History; survivor: Survivor }> {
  const history = emptyHistory();
  for (let s = 0; s < 10; s++) history.acks.push(ack('writer-a', A, s), ack('writer-b', B, 40 + s), ack('writer-a', A, 100 + s));
  history.nights.push({ importer: 'importer-a', date: '2023-01-02', usd: 11.25, startedAt: T, endedAt: T + 500, outcome: 'ok' });
  history.nights.push({ importer: 'importer-a', date: '2023-01-03', usd: 12.25, startedAt: T + 12_000, endedAt: T + 40_000, outcome: 'unknown' });
  history.nights.push({ importer: 'importer-b', date: '2023-01-04', usd: 13.25, startedAt: T + 41_000, endedAt: T + 41_500, outcome: 'ok' });
  const sizeAt = (s: number) => (s < 20 ? 2 : s < 50 ? 4 : s < 100 ? 6 : 8);
  for (let s = 0; s < 120; s++) for (const r of READERS) history.reads.push(await served(r, s, sizeAt(s)), health(r, s + 0.5));
  history.signed.push({ by: 'signer a', at: T + 1000, size: 2, root: await rootOf(2) }, { by: 'signer a', at: T + 15_000, size: 4, root: await rootOf(4) },
    { by: 'signer b', at: T + 45_000, size: 6, root: await rootOf(6) }, { by: 'signer a', at: T + 99_000, size: 8, root: await rootOf(8) });
  for (const [s, size] of [[16, 4], [46, 6], [101, 8]] as const) history.cosigned.push({ by: 'the witness', at: T + s * 1000, size, root: await rootOf(size) });
  const survivor: Survivor = {
    readAt: T + 120_000,
    heartbeats: history.acks.map((a) => ({ writer: a.writer, at: a.at })),
    payouts: new Map([['2023-01-02', 11.25], ['2023-01-04', 13.25]]),
    entries: ENTRIES,
    checkpoints: await Promise.all([2, 4, 6, 8].map(async (size) => ({ size, root: await rootOf(size) }))),
    halted: null,
  };
  return { history, survivor };
}

const check = (history: History, survivor: Survivor) => checkHistory(history, survivor, { readers: READERS });
const only = (failures: Failure[], what: Failure['check']) => failures.map((f) => `${f.check}: ${f.found}`).filter((f) => f.startsWith(`${what}:`));

describe('the partition checker, over a whole run', () => {
  it('passes an honest run: A, B, then A again; a write of unknown outcome missing; every checkpoint a prefix; every reader answering', async () => {
    const { history, survivor } = await honestRun();
    expect(await check(history, survivor)).toEqual([]);
  });

  it('finds an acknowledgement of an earlier scenario lost after a later one\'s failover, not only those of the last window', async () => {
    const { history, survivor } = await honestRun();
    // Lost in the failover back to A at 100 s, long after the 0–10 s scenario's window closed.
    survivor.heartbeats = survivor.heartbeats.filter((h) => h.at !== iso(45));
    survivor.payouts.delete('2023-01-04');
    // A window from the last scenario on sees nothing lost; the whole run does.
    expect(since(history, T + 90_000).acks.some((a) => a.at === iso(45))).toBe(false);
    expect(only(await check(history, survivor), 'lost')).toEqual([
      `lost: heartbeat ${iso(45)} of writer-b, acknowledged on ${B} at ${iso(45.05)}, is not on the surviving primary`,
      `lost: night 2023-01-04 (13.25 USD), imported by importer-b and acknowledged at ${iso(41.5)}, is missing on the surviving primary`,
    ]);
  });

  it('proves every checkpoint served a prefix of the survivor\'s log, at sizes it never stored too', async () => {
    const { history, survivor } = await honestRun();
    // landing_log listed a tree of 3 whose third entry the survivor does not hold: no root of size 3 is stored anywhere to compare it with.
    const forked = [...ENTRIES.slice(0, 2), '{"date":"2023-01-04","usd":99}'];
    history.reads.push(await served('reader-a', 25, 3, await rootOf(3, forked), 'landing_log'));
    expect(only(await check(history, survivor), 'not a prefix')).toEqual([`not a prefix: the checkpoint of 3 entries with root ${await rootOf(3, forked)} (served to reader-a (landing_log) at ${iso(25)}) ` +
      `is not a prefix of the surviving log of 8 entries: the consistency proof leads to ${await rootOf(3)}`]);
  });

  it('records the writers\' signed checkpoints and the witness\'s, and finds one beyond the survivor\'s log or on another history', async () => {
    const { history, survivor } = await honestRun();
    // Signed and cosigned on A before the failover to B, never replicated: the survivor holds 6 entries.
    survivor.entries = ENTRIES.slice(0, 6);
    survivor.checkpoints = survivor.checkpoints.filter((c) => c.size <= 6);
    history.reads = history.reads.filter((r) => (r.checkpoints?.[0]?.size ?? 0) <= 6);
    history.signed.push({ by: 'signer b', at: T + 47_000, size: 5, root: await rootOf(5, ['x', 'y', 'z', 'w', 'v']) });
    expect(only(await check(history, survivor), 'not a prefix')).toEqual([
      `not a prefix: the checkpoint of 5 entries with root ${await rootOf(5, ['x', 'y', 'z', 'w', 'v'])} (signed by signer b at ${iso(47)}) is not a prefix of the surviving log of 6 entries: the consistency proof leads to ${await rootOf(5)}`,
      `not a prefix: the checkpoint of 8 entries with root ${await rootOf(8)} (signed by signer a at ${iso(99)}, cosigned by the witness at ${iso(101)}) is not a prefix of the surviving log: it holds 6 entries (root ${await rootOf(6)})`,
    ]);
  });

  it('finds a reader that died, or never answered, where a dead reader used to look clean', async () => {
    const { history, survivor } = await honestRun();
    history.reads = history.reads.filter((r) => r.reader !== 'reader-b' || r.at < T + 60_000);
    const failures = await checkHistory(history, survivor, { readers: [...READERS, 'reader-c'] });
    expect(only(failures, 'silent reader')).toEqual([
      `silent reader: reader-b gave no answer for 60.5 s, from ${iso(59.52)} to ${iso(120)} (the end of the run): a reader must answer throughout`,
      'silent reader: reader-c answered nothing in the whole run',
    ]);
    // Silent in the middle, then back.
    const { history: h2, survivor: s2 } = await honestRun();
    h2.reads = h2.reads.filter((r) => r.reader !== 'reader-a' || r.at < T + 30_000 || r.at > T + 50_000);
    expect(only(await check(h2, s2), 'silent reader')).toEqual([`silent reader: reader-a gave no answer for 21.0 s, from ${iso(29.52)} to ${iso(50.52)}: a reader must answer throughout`]);
  });

  it('finds two primaries acknowledging at once by the times alone, when the primary went A, B, then A again', async () => {
    const { history, survivor } = await honestRun();
    // On A, begun at 38 s and acknowledged at 41 s, while B's first write (40 s) was under way and
    // acknowledged. Read as one scenario, it began and ended on A: no name changed, no failover was seen.
    history.acks.push(ack('writer-a', A, 38, 3));
    survivor.heartbeats.push({ writer: 'writer-a', at: iso(38) });
    expect(only(await check(history, survivor), 'overlap')).toEqual([
      `overlap: writer-a's heartbeat ${iso(38)} on ${A} (begun ${iso(38)}, acknowledged ${iso(41)}) and writer-b's heartbeat ${iso(40)} on ${B} (begun ${iso(40)}, acknowledged ${iso(40.05)}) were both under way and both acknowledged: two primaries took writes at once (and 1 more such pairs)`,
    ]);
    // Acknowledged on A just before B's first write began: no overlap.
    const { history: h2, survivor: s2 } = await honestRun();
    h2.acks.push(ack('writer-a', A, 38, 1.99));
    s2.heartbeats.push({ writer: 'writer-a', at: iso(38) });
    expect(only(await check(h2, s2), 'overlap')).toEqual([]);
  });

  it('finds health that was not a 200 within 5 s, a reader served a smaller log, and a halted log', async () => {
    const { history, survivor } = await honestRun();
    history.reads.push(health('reader-a', 30.2, 503), health('reader-a', 31.2, 'hung', 5000), health('reader-b', 32.2, 200, 6000), await served('reader-a', 70.2, 3));
    survivor.halted = 'a restore or a failover lost the log\'s tail';
    expect((await check(history, survivor)).map((f) => `${f.check}: ${f.found}`)).toEqual([
      `unavailable: reader-a site_health: 2 answers not a 200 within 5000 ms (503, hung), first at ${iso(30.2)}`,
      `unavailable: reader-b site_health: 1 answers not a 200 within 5000 ms (200), first at ${iso(32.2)}`,
      `shrank: reader-a was served size 3 at ${iso(70.2)} after size 6 at ${iso(50)}`,
      'halted: the surviving log is halted: a restore or a failover lost the log\'s tail',
    ]);
  });

  it('records the history from the processes\' output and the parties\' state, timed by the test\'s clock', () => {
    const recorder = new Recorder();
    const line = (msg: string, fields: object, writerClock: number) => JSON.stringify({ ts: iso(writerClock), level: 'info', msg, ...fields });
    // writer-a's own clock is 5 minutes ahead: its lines are timed as they arrive, its heartbeat by the database's clock.
    recorder.writerLine('writer-a', line('holding the writer lock: this writer writes', { server: A }, 300), T);
    recorder.writerLine('writer-a', line('heartbeat done', { note: iso(0.9) }, 301), T + 1000);
    recorder.writerLine('writer-a', line('lost the writer lock: writing nothing until it holds the lock again', {}, 302), T + 2000);
    recorder.writerLine('writer-a', line('heartbeat done', { note: iso(2.5) }, 302.6), T + 2600);
    recorder.writerLine('writer-a', line('holding the writer lock: this writer writes', { server: B }, 303), T + 3000);
    recorder.writerLine('writer-a', line('heartbeat done', { note: iso(3.9) }, 304), T + 4000);
    recorder.writerLine('writer-a', 'not json', T + 4100);
    recorder.readerLine(JSON.stringify(health('reader-a', 5)));
    recorder.readerLine('{"cut sho');
    recorder.night({ importer: 'importer-a', date: '2023-01-02', usd: 1, startedAt: T, endedAt: T + 6000, outcome: 'unknown' });
    recorder.signed('signer a', { size: 2, root: 'r2' }, T + 1000);
    recorder.signed('signer a', { size: 2, root: 'r2' }, T + 1100);
    recorder.signed('signer b', { size: 2, root: 'r2' }, T + 1200);
    recorder.signed('signer a', { size: 3, root: 'r3' }, T + 1300);
    recorder.cosigned('the witness', { size: 3, root: 'r3' }, T + 1400);
    const { history } = recorder;
    expect(history.acks).toEqual([
      { writer: 'writer-a', at: iso(0.9), server: A, began: T + 900, ackedAt: T + 1000 },
      { writer: 'writer-a', at: iso(2.5), server: 'unknown', began: T + 2500, ackedAt: T + 2600 },
      { writer: 'writer-a', at: iso(3.9), server: B, began: T + 3900, ackedAt: T + 4000 },
    ]);
    expect(history.signed.map((s) => `${s.by} ${s.size}`)).toEqual(['signer a 2', 'signer b 2', 'signer a 3']);
    expect(history.cosigned).toEqual([{ by: 'the witness', at: T + 1400, size: 3, root: 'r3' }]);
    expect(history.reads).toHaveLength(1);
    expect(since(history, T + 3500)).toMatchObject({ acks: [{ server: B }], nights: [{ date: '2023-01-02' }], reads: [{ reader: 'reader-a' }], signed: [] });
  });
});

describe('a partition scenario\'s effect', () => {
  const cutAt = T + 10_000;
  const healAt = T + 70_000;
  const cut: DialResult = { dial: 'n2 to n1 (198.18.0.11:54329)', before: 'open', during: 'timeout', beforeHeal: 'timeout' };
  const observed = (o: Partial<Observed>): Observed => ({ expect: 'failover', dials: [cut], failedOver: true, cutAt, healAt, history: emptyHistory(), ...o });

  it('passes a fault that did what it must: the dials cut while it lasted, and the failover, the held writes or the writes going on unwitnessed', () => {
    expect(effectFailures(observed({}))).toEqual([]);
    const history = emptyHistory();
    // Begun before the cut and acknowledged after: in flight, not a write the fault should have held.
    history.acks.push(ack('writer-a', A, 9.9, 0.5), ack('writer-a', A, 70.5));
    expect(effectFailures(observed({ expect: 'held', failedOver: false, history }))).toEqual([]);
    history.acks.push(ack('writer-a', A, 20));
    history.cosigned.push({ by: 'the witness', at: cutAt + 500, size: 4, root: 'r4' }, { by: 'the witness', at: healAt + 5000, size: 5, root: 'r5' });
    expect(effectFailures(observed({ expect: 'unwitnessed', failedOver: false, history }))).toEqual([]);
  });

  it('fails a cut that did nothing: a dial across it connected, or never connected before it, and no failover', () => {
    const dials = [{ ...cut, during: 'open' }, { ...cut, dial: 'mon to n1 (198.18.0.11:54329)', before: 'timeout', beforeHeal: 'open' }];
    expect(effectFailures(observed({ dials, failedOver: false }))).toEqual([
      'the dial from n2 to n1 (198.18.0.11:54329) connected right after the fault was made: the fault was not in force',
      'the dial from mon to n1 (198.18.0.11:54329) did not connect before the fault (timeout), so its failing after shows nothing',
      'the dial from mon to n1 (198.18.0.11:54329) connected just before the heal: the fault was not in force throughout',
      'no failover: the standby never took writes, though this fault must make it',
    ]);
    expect(effectFailures(observed({ dials: [] }))).toEqual(['nothing was dialled across the fault: nothing shows it was in force']);
    expect(effectFailures(observed({ dials: [{ ...cut, during: 'not dialled: nsenter failed' }] }))).toEqual([
      'the dial from n2 to n1 (198.18.0.11:54329) was not made right after the fault was made (not dialled: nsenter failed): nothing shows the fault in force',
    ]);
  });

  it('fails writes acknowledged while they were to be held, and a witness that cosigned while it was to be cut off', () => {
    const history = emptyHistory();
    history.acks.push(ack('writer-a', A, 20));
    history.nights.push({ importer: 'importer-b', date: '2023-01-09', usd: 1, startedAt: T + 30_000, endedAt: T + 31_000, outcome: 'ok' });
    const window = `while the fault was in force (${iso(10)} to ${iso(70)})`;
    expect(effectFailures(observed({ expect: 'held', history }))).toEqual([
      'a failover happened, though this fault must hold the writes',
      `writer-a's heartbeat ${iso(20)} on ${A} was acknowledged ${window}: writes were to be held until the heal`,
      `night 2023-01-09, imported by importer-b, was acknowledged ${window}: writes were to be held until the heal`,
    ]);
    const quiet = emptyHistory();
    quiet.cosigned.push({ by: 'the witness', at: T + 40_000, size: 7, root: 'r7' });
    expect(effectFailures(observed({ expect: 'unwitnessed', failedOver: false, history: quiet }))).toEqual([
      `no heartbeat begun ${window} was acknowledged: writes were to go on`,
      `the witness cosigned the checkpoint of 7 entries at ${iso(40)}, ${window}: the witness was to be cut off`,
    ]);
  });

  it('cuts the writers off from the witness on the WAN, both ways or one way only', async () => {
    const made: { hosts: string[]; rules: Record<string, string[]>; description: string }[] = [];
    const hosts = new Map([['wa', { name: 'wa', lan: 21, wan: 21 }], ['wb', { name: 'wb', lan: 31, wan: 31 }], ['wit', { name: 'wit', wan: 40 }], ['n1', { name: 'n1', lan: 11 }]]);
    const net = {
      hosts,
      lanAddress: (h: string) => `198.18.0.${hosts.get(h)!.lan}`,
      wanAddress: (h: string) => `198.18.1.${(hosts.get(h) as { wan: number }).wan}`,
      filter: async (on: string[], rules: (h: string) => string[], description: string) => {
        made.push({ hosts: on, rules: Object.fromEntries(on.map((h) => [h, rules(h)])), description });
        return { description, heal: async () => {} };
      },
    } as unknown as Network;
    await cutBetween(net, ['wa', 'wb'], ['wit']);
    await cutBetween(net, ['n1'], ['wa'], { oneWay: true });
    expect(made).toEqual([
      { hosts: ['wit', 'wa', 'wb'], description: 'drop between {wa, wb} and {wit}', rules: {
        wit: ['ip saddr { 198.18.0.21, 198.18.1.21, 198.18.0.31, 198.18.1.31 } drop'], wa: ['ip saddr { 198.18.1.40 } drop'], wb: ['ip saddr { 198.18.1.40 } drop'] } },
      { hosts: ['wa'], description: 'drop from {n1} to {wa}', rules: { wa: ['ip saddr { 198.18.0.11 } drop'] } },
    ]);
  });
});
