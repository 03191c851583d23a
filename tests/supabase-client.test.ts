// The real supabase-js client against the API host, created exactly as its README shows (the
// runtime's own WebSocket serves its realtime client).
import { createClient } from '@supabase/supabase-js';
import { describe, expect, inject, it } from 'vitest';

const { apiUrl, anonKey } = inject('stack');
const client = (key: string) =>
  createClient(apiUrl, key, { auth: { persistSession: false } });

describe('supabase-js', () => {
  it("rpc('landing_stats') (a POST with {}) returns the stats record", async () => {
    const { data, error, status } = await client(anonKey).rpc('landing_stats');
    expect(error).toBeNull();
    expect(status).toBe(200);
    const direct = await (await fetch(`${apiUrl}/rest/v1/rpc/landing_stats`, { headers: { apikey: anonKey } })).json();
    expect(data).toEqual(direct);
  });

  it("rpc('landing_health', {}, { get: true }) returns the health record", async () => {
    const { data, error } = await client(anonKey).rpc('landing_health', {}, { get: true });
    expect(error).toBeNull();
    expect(data).toMatchObject({ status: expect.stringMatching(/^(ok|degraded)$/), data: expect.any(Object), writer: expect.any(Object) });
  });

  it('reports a wrong key as the 401 message', async () => {
    const { data, error, status } = await client('wrong-key').rpc('landing_stats');
    expect(data).toBeNull();
    expect(status).toBe(401);
    expect(error?.message).toBe('Invalid authentication credentials');
  });
});
