// The node's one holder of the log never lets it go back. Under failover PostgREST reads a standby
// when it can and the primary otherwise, and a standby may not yet have replayed the newest
// checkpoint: such a read keeps the newer view. The demo log giving way to the real one changes the
// log in use, and the demo log stays held as last read, so a checkpoint named while the figures were
// demo data is still served. It reads the log when the database says the log moved (asked at most
// once a second), and when an answer is about to name a checkpoint it lacks.
import { describe, expect, it } from 'vitest';
import type { LogRecord } from '../../contract/records.ts';
import { LogHolder } from '../../edge/log-holder.ts';
import { fixedLog } from '../support/records.ts';

/** The fixed log as it would read at another size and origin (only its checkpoint and kind matter here). */
const at = (base: LogRecord, size: number, origin = base.log_checkpoint!.origin, demo = false): LogRecord =>
  ({ ...base, demo, log_checkpoint: { ...base.log_checkpoint!, size, origin } });

/** A holder over a list of reads, on a clock the test moves; `moving`: the database says the log moved after each read. */
function holderOver(reads: LogRecord[], moving: boolean) {
  let clock = 0;
  let next = 0;
  const holder = new LogHolder({ log: async () => JSON.stringify(reads[next++]), logState: async () => (moving ? `state ${next}` : 'unchanged') }, () => clock);
  const held = async () => {
    const { inUse, logs } = await holder.snapshot();
    return { inUse, real: logs.real?.size, demo: logs.demo?.size };
  };
  return { holder, held, reads: () => next, tick: (ms: number) => { clock += ms; } };
}

describe("the node's one holder of the log", () => {
  it('keeps its newest checkpoint when a read answers an older one, and keeps the demo log once the real one is in use', async () => {
    const base = await fixedLog();
    const demoOrigin = 'stats.example.org/log/demo';
    const { held, tick } = holderOver([at(base, 3, demoOrigin, true), at(base, 17), at(base, 16), at(base, 18)], true);
    const seen = [];
    for (let i = 0; i < 4; i++) {
      seen.push(await held());
      tick(1000);
    }
    expect(seen).toEqual([
      { inUse: 'demo', real: undefined, demo: 3 },
      { inUse: 'real', real: 17, demo: 3 },
      { inUse: 'real', real: 17, demo: 3 },
      { inUse: 'real', real: 18, demo: 3 },
    ]);
  });

  it('asks the database at most once a second, reads the log for a checkpoint an answer is about to name, and for one a client names at most once a second', async () => {
    const base = await fixedLog();
    const origin = base.log_checkpoint!.origin;
    const { holder, held, reads, tick } = holderOver([at(base, 10), at(base, 11), at(base, 12), at(base, 13)], false);
    expect(await held()).toMatchObject({ real: 10 });
    expect(await held()).toMatchObject({ real: 10 });
    expect(reads()).toBe(1);
    // An answer names 11: read at once.
    await holder.ensure(origin, 11);
    expect(reads()).toBe(2);
    // Named and held: no read.
    await holder.ensure(origin, 11);
    expect(reads()).toBe(2);
    // A client names 12: read, then a name it asks for again within the second is not read.
    await holder.ensure(origin, 12, true);
    await holder.ensure(origin, 13, true);
    expect([reads(), (await held()).real]).toEqual([3, 12]);
    tick(1000);
    await holder.ensure(origin, 13, true);
    expect(reads()).toBe(4);
    expect((await held()).real).toBe(13);
  });

  it('reads the log for an audit attestation an answer is about to name, and keeps a view with more attestations over a read of the same checkpoint with fewer', async () => {
    const base = await fixedLog();
    const audit = (at: string) => ({ note: `attestation published ${at}\n\n\u2014 auditor.example c2lnbmF0dXJl\n`, published_at: at, listed: true });
    const first = { ...base, audits: [audit('2025-03-20T07:00:00Z')] };
    const second = { ...base, audits: [...first.audits, audit('2025-03-21T07:00:00Z')] };
    const { holder, reads, tick } = holderOver([first, second, first], true);
    const audits = async () => (JSON.parse((await holder.snapshot()).logs.real!.body) as LogRecord).audits.length;
    expect(await audits()).toBe(1);
    // Held: no read.
    await holder.ensureAudit('2025-03-20T07:00:00Z');
    expect(reads()).toBe(1);
    // A later one: read at once.
    await holder.ensureAudit('2025-03-21T07:00:00Z');
    expect(reads()).toBe(2);
    expect(await audits()).toBe(2);
    // A standby behind: the same checkpoint with fewer attestations is dropped.
    tick(1000);
    expect(await audits()).toBe(2);
    expect(reads()).toBe(3);
  });
});
