import { describe, expect, it, inject } from 'vitest';

describe('smoke', () => {
  it('answers landing_stats with the anon key', async () => {
    const { apiUrl, anonKey } = inject('stack');
    const res = await fetch(`${apiUrl}/rest/v1/rpc/landing_stats`, { headers: { apikey: anonKey } });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.daily).toEqual([]);
  });
});
