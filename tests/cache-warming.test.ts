// Both gateways' microcaches hold every cached record in every coding before the stack says it is
// ready, and the edge keeps refreshing them with no client asking: no caller ever meets an empty
// entry (nginx's cache lock makes such a caller wait up to 500 ms), and a change of the data reaches
// every entry by itself. This file needs a stack no one has asked anything yet, so it starts its own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, todayUtc } from '../contract/dates.ts';
import { CACHED_RECORD_PATHS } from '../contract/paths.ts';
import { rawGet, type RawAnswer } from './support/signatures.ts';
import { startTestStack, type TestStack } from './support/stack.ts';
import { cliEnv, runCli } from './support/writer.ts';

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ env: { EDGE_WARM_SECONDS: '1' } });
});
afterAll(async () => { await stack?.destroy(); });

const CODINGS = ['identity', 'gzip', 'br'];

/** Every cached entry, as a client asks for it. */
function entries(): { name: string; get: () => Promise<RawAnswer> }[] {
  const { cfg } = stack;
  return CODINGS.flatMap((coding) => [
    ...CACHED_RECORD_PATHS.site.map((path) => ({ name: `site ${path} ${coding}`, get: () => rawGet(cfg.siteUrl + path, { 'accept-encoding': coding }) })),
    ...CACHED_RECORD_PATHS.api.map((path) => ({ name: `API ${path} ${coding}`, get: () => rawGet(cfg.apiUrl + path, { 'accept-encoding': coding, apikey: cfg.ANON_KEY }) })),
  ]);
}

describe('the gateways’ microcaches', () => {
  const first = new Map<string, RawAnswer>();

  it('hold every record in every coding before the stack is ready', async () => {
    for (const entry of entries()) {
      const answer = await entry.get();
      expect(answer.status, entry.name).toBe(200);
      // Filled already: a hit, or (had it just expired) a stale answer while it refreshes.
      expect(answer.headers['x-cache-status'], entry.name).toMatch(/^(HIT|STALE|UPDATING)$/);
      first.set(entry.name, answer);
    }
    expect(first.size).toBe(CODINGS.length * (CACHED_RECORD_PATHS.site.length + CACHED_RECORD_PATHS.api.length));
  });

  it('take a change of the data with no client asking', async () => {
    // A settled night: it changes the stats, the history (JSON and CSV) and the log alike.
    const night = { type: 'payout', date: addDays(todayUtc(), -5), usd: 12.34 };
    const run = await runCli(['import', '-'], cliEnv(stack), `${JSON.stringify(night)}\n`);
    expect(run.code, run.stderr).toBe(0);
    // Nothing asks from here. A site entry can take three of the microcache's 5 s lifetimes (and the
    // keeper's 1 s) to show it: its refreshes may find the edge's own copy of the record still fresh,
    // then stale (answered while the edge fetches it again), before the new one.
    await new Promise((r) => setTimeout(r, 20_000));
    for (const entry of entries()) {
      const answer = await entry.get();
      expect(answer.status, entry.name).toBe(200);
      expect(answer.headers['x-cache-status'], entry.name).not.toBe('MISS');
      // Every entry already holds the new record: its validator (the record's hash) has changed.
      expect(answer.headers.etag, entry.name).not.toBe(first.get(entry.name)!.headers.etag);
    }
  }, 60_000);
});
