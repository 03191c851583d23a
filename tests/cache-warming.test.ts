// Both gateways' microcaches hold every cached record in every coding before the stack says it is
// ready, and the edge keeps refreshing them with no client asking: no caller ever meets an empty
// entry (nginx's cache lock makes such a caller wait up to 500 ms). This file needs a stack no one
// has asked anything yet, so it starts its own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CACHED_RECORD_PATHS } from '../edge/paths.ts';
import { rawGet, type RawAnswer } from './support/signatures.ts';
import { startTestStack, type TestStack } from './support/stack.ts';

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ seedDemo: true, env: { EDGE_WARM_SECONDS: '1' } });
});
afterAll(async () => { await stack?.destroy(); });

const CODINGS = ['identity', 'gzip', 'br'];

/** Every cached entry, as a client asks for it. */
function entries(): { name: string; api: boolean; get: () => Promise<RawAnswer> }[] {
  const { cfg } = stack;
  return CODINGS.flatMap((coding) => [
    ...CACHED_RECORD_PATHS.site.map((path) => ({ name: `site ${path} ${coding}`, api: false, get: () => rawGet(cfg.siteUrl + path, { 'accept-encoding': coding }) })),
    ...CACHED_RECORD_PATHS.api.map((path) => ({ name: `API ${path} ${coding}`, api: true, get: () => rawGet(cfg.apiUrl + path, { 'accept-encoding': coding, apikey: cfg.ANON_KEY }) })),
  ]);
}

/** When the answer was signed: each refresh of an entry signs it anew. */
const signedAt = (answer: RawAnswer) => Number(answer.headers['signature-input']?.match(/;created=(\d+)/)?.[1]);

describe('the gateways’ microcaches', () => {
  const first = new Map<string, RawAnswer>();

  it('hold every record in every coding before the stack is ready', async () => {
    for (const entry of entries()) {
      const answer = await entry.get();
      expect(answer.status, entry.name).toBe(200);
      // Filled already: a hit, or (had it just expired) a stale answer while it refreshes.
      expect(answer.headers['x-cache-status'], entry.name).toMatch(/^(HIT|STALE|UPDATING)$/);
      expect(signedAt(answer), entry.name).toBeGreaterThan(0);
      first.set(entry.name, answer);
    }
    expect(first.size).toBe(CODINGS.length * (CACHED_RECORD_PATHS.site.length + CACHED_RECORD_PATHS.api.length));
  });

  it('are refreshed with no client asking', async () => {
    // Past the microcache's 5 s and the signature's one-second resolution, with no request from here.
    await new Promise((r) => setTimeout(r, 8000));
    for (const entry of entries()) {
      const answer = await entry.get();
      expect(answer.status, entry.name).toBe(200);
      expect(answer.headers['x-cache-status'], entry.name).not.toBe('MISS');
      // The API host's records are signed on every fetch (the site's once per upstream answer, so
      // theirs stays the same while the figures do): a later signature is a refreshed entry.
      if (entry.api) expect(signedAt(answer), entry.name).toBeGreaterThan(signedAt(first.get(entry.name)!));
    }
  }, 30_000);
});
