// The site host's per-address rate limit: configurable, loopback exempt by default.
// Here loopback is deliberately limited (SITE_RATE_LIMIT_LOOPBACK=1) with a tiny budget, on a
// private stack, to see the limiter answer; the shared stack shows loopback is exempt by default.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stack.ts';

const LIMIT_ENV = { SITE_RATE_LIMIT: '1r/s', SITE_RATE_BURST: '5', SITE_RATE_LIMIT_LOOPBACK: '1' };

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ env: LIMIT_ENV });
});
afterAll(async () => { await stack?.destroy(); });

describe('rate limit on the site host', () => {
  it('answers 429 with JSON and Retry-After once an address exceeds its budget', async () => {
    const statuses = [];
    for (let i = 0; i < 12; i++) statuses.push((await fetch(`${stack.cfg.siteUrl}/api/health`)).status);
    expect(statuses.slice(0, 5).every((s) => s === 200)).toBe(true);
    expect(statuses).toContain(429);
    const limited = await fetch(`${stack.cfg.siteUrl}/api/stats`);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('10');
    expect(limited.headers.get('access-control-allow-origin')).toBe('*');
    expect((await limited.json()).message).toMatch(/Too many requests/);
  });

  it('exempts loopback by default (the shared stack takes a burst far over the default budget)', async () => {
    const { siteUrl } = inject('stack');
    const statuses = await Promise.all(Array.from({ length: 300 }, () => fetch(`${siteUrl}/api/health`).then((r) => r.status)));
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
  });
});
