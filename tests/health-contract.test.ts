// landing_health answers HTTP 200 whenever the API host is reachable:
// with PostgREST stopped, then with Postgres stopped, it says "down"; the stack then recovers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { downHealth } from '../contract/records.ts';
import { GATEWAY_UNAVAILABLE } from '../contract/texts/rules.ts';
import { waitUntil } from '../stack/processes.ts';
import { startTestStack, type TestStack } from './support/stack.ts';

let stack: TestStack;
let health: () => Promise<{ status: number; body: Record<string, unknown>; headers: Headers }>;
let stats: () => Promise<Response>;

beforeAll(async () => {
  stack = await startTestStack({ seedDemo: true });
  const key = { apikey: stack.cfg.ANON_KEY };
  health = async () => {
    const res = await fetch(`${stack.cfg.apiUrl}/rest/v1/rpc/landing_health`, { headers: key });
    return { status: res.status, body: await res.json(), headers: res.headers };
  };
  stats = () => fetch(`${stack.cfg.apiUrl}/rest/v1/rpc/landing_stats`, { headers: key });
});
afterAll(async () => { await stack?.destroy(); });

function expectDown(h: Awaited<ReturnType<typeof health>>) {
  expect(h.status).toBe(200);
  expect(h.headers.get('access-control-allow-origin')).toBe('*');
  expect(h.body.checked_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  // The gateway's own copy of the "down" record, word for word the contract's.
  expect(h.body).toEqual(downHealth(h.body.checked_at as string));
  expect(Math.abs(Date.parse(h.body.checked_at as string) - Date.now())).toBeLessThan(5_000);
}
const notDown = async () => (await health()).body.status !== 'down';

describe('health contract', () => {
  it('reports the demo data as fresh while everything runs', async () => {
    const h = await health();
    expect(h.status).toBe(200);
    expect(h.body.status).toBe('ok');
  });

  it('answers 200 "down" while PostgREST is stopped, and recovers when it returns', async () => {
    const before = await (await stats()).json();
    await stack.stopPostgrest();
    expectDown(await health());
    // landing_stats keeps answering from the stale microcache, or says the database is unreachable
    const res = await stats();
    if (res.status === 200) expect(await res.json()).toEqual(before);
    else {
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('30');
      expect(await res.json()).toEqual({ message: GATEWAY_UNAVAILABLE.api });
    }
    await stack.startPostgrest();
    await waitUntil('health after PostgREST restart', notDown, 20_000);
    expect((await health()).body.status).toBe('ok');
  });

  it('answers 200 "down" while Postgres is stopped, and recovers when it returns', async () => {
    await stack.db.stop();
    await waitUntil('health to notice the database is gone', async () => (await health()).body.status === 'down', 20_000);
    expectDown(await health());
    await stack.db.start();
    await waitUntil('health after Postgres restart', notDown, 60_000);
    const h = await health();
    expect(h.body.status).toBe('ok');
    expect((await stats()).status).toBe(200);
  });
});
