// The log an edge process serves never goes back. Under failover PostgREST reads a standby when it
// can and the primary otherwise, and a standby may not yet have replayed the newest checkpoint: such
// a read keeps the newer view. A log of another origin (the demo log giving way to the real one) is
// another log, and replaces it whatever its size.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { LogRecord } from '../../contract/records.ts';
import { createFigures } from '../../edge/figures.ts';
import { edgeConfig } from '../support/edge.ts';
import { fixedHealth, fixedHistory, fixedLog, fixedStats } from '../support/records.ts';

const cfg = edgeConfig({ apiUpstream: 'http://api.invalid', anonKey: 'anon' });

/** The fixed log as it would read at another size and origin (only its checkpoint matters here). */
const at = (base: LogRecord, size: number, origin = base.log_checkpoint!.origin): LogRecord =>
  ({ ...base, log_checkpoint: { ...base.log_checkpoint!, size, origin } });

afterEach(() => { vi.useRealTimers(); });

describe('the log an edge serves', () => {
  it('keeps its newest checkpoint when a read answers an older one, and takes another log at any size', async () => {
    const base = await fixedLog();
    // Each read anew comes at least a second after the last (the edge reads the log anew at most once a second).
    vi.useFakeTimers({ toFake: ['Date'] });
    const reads = [at(base, 17), at(base, 16), at(base, 18), at(base, 3, 'stats.example.org/log/demo')];
    let next = 0;
    const read = async () => reads[next++]!;
    const figures = createFigures(cfg, {
      stats: async () => fixedStats(), history: async () => fixedHistory(), health: async () => ({ record: fixedHealth(), apiHostReachable: true }),
      log: read, logNow: read,
    });
    const sizes: number[] = [];
    for (let i = 0; i < reads.length; i++) {
      sizes.push((await figures.logNow()).value.log_checkpoint!.size);
      vi.setSystemTime(Date.now() + 1100);
    }
    expect(next).toBe(reads.length);
    expect(sizes).toEqual([17, 17, 18, 3]);
  });
});
