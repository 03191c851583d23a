// The API host as callers meet it: plain HTTP against nginx.
import { createHash } from 'node:crypto';
import { SignJWT } from 'jose';
import { describe, expect, inject, it } from 'vitest';

const { apiUrl, anonKey, jwtSecret } = inject('stack');
const STATS = `${apiUrl}/rest/v1/rpc/landing_stats`;
const HEALTH = `${apiUrl}/rest/v1/rpc/landing_health`;

function expectJsonUnauthorized(res: Response, body: { message: string }) {
  expect(res.status).toBe(401);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.headers.get('access-control-allow-origin')).toBe('*');
  expect(res.headers.get('www-authenticate')).toMatch(/^Bearer .*resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource"/);
  expect(body.message).toBe('Invalid authentication credentials');
}

describe('the public key', () => {
  it.each([
    ['apikey header', { apikey: anonKey }],
    ['Authorization: Bearer', { authorization: `Bearer ${anonKey}` }],
    ['both headers, as supabase-js sends them', { apikey: anonKey, authorization: `Bearer ${anonKey}` }],
    ['a lower-case scheme name', { authorization: `bearer ${anonKey}` }],
  ])('is accepted in the %s', async (_name, headers) => {
    for (const url of [STATS, HEALTH]) {
      const res = await fetch(url, { headers });
      expect(res.status, url).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
    }
  });

  const forge = async (secret: string, claims: Record<string, unknown>) =>
    new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuedAt().sign(new TextEncoder().encode(secret));
  const unsigned = (claims: Record<string, unknown>) =>
    `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.`;

  it.each([
    ['no key at all', async () => ({})],
    ['an empty apikey', async () => ({ apikey: '' })],
    ['a wrong key', async () => ({ apikey: 'not-the-key' })],
    ['the key with its case changed', async () => ({ apikey: anonKey.toUpperCase() })],
    ['the key with a dot replaced (it is matched literally, not as a pattern)', async () => ({ apikey: anonKey.replace('.', 'x') })],
    ['the key with a suffix', async () => ({ apikey: `${anonKey}x` })],
    ['a JWT signed with another secret', async () => ({ apikey: await forge('x'.repeat(48), { role: 'anon' }) })],
    ['an alg:none JWT', async () => ({ authorization: `Bearer ${unsigned({ role: 'anon' })}` })],
    ['a correctly signed JWT with another role', async () => ({ authorization: `Bearer ${await forge(jwtSecret, { role: 'stats_writer' })}` })],
    ['the right apikey next to a different bearer token', async () => ({ apikey: anonKey, authorization: `Bearer ${await forge(jwtSecret, { role: 'postgres' })}` })],
    ['a Basic credential', async () => ({ authorization: `Basic ${Buffer.from(`anon:${anonKey}`).toString('base64')}` })],
  ])('is refused with %s: JSON 401 with CORS and WWW-Authenticate', async (_name, headers) => {
    for (const url of [STATS, HEALTH]) {
      const res = await fetch(url, { headers: await headers() });
      expectJsonUnauthorized(res, await res.json());
    }
  });

  it('is refused, never answered with a 5xx, when it is oversized', async () => {
    const res = await fetch(STATS, { headers: { apikey: 'k'.repeat(64 * 1024) } });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });
});

describe('landing_stats', () => {
  const key = { apikey: anonKey };

  it('answers GET, POST {} (with or without a content type) and an empty POST alike', async () => {
    const get = await (await fetch(STATS, { headers: key })).json();
    expect(get).toHaveProperty('daily');
    for (const init of [
      { body: '{}', headers: { ...key, 'content-type': 'application/json' } },
      { body: '{}', headers: { ...key, 'content-type': 'application/x-www-form-urlencoded' } },
      { body: '', headers: key },
    ]) {
      const res = await fetch(STATS, { method: 'POST', ...init });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual(get);
    }
  });

  it('answers HEAD without a body', async () => {
    const res = await fetch(STATS, { method: 'HEAD', headers: key });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
  });

  it('says invalid_token only when a credential was sent (RFC 6750 §3.1)', async () => {
    const bare = await fetch(STATS);
    expect(bare.status).toBe(401);
    expect(bare.headers.get('www-authenticate')).not.toMatch(/error=/);
    const wrong = await fetch(STATS, { headers: { apikey: 'not-the-key' } });
    expect(wrong.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
  });

  it('sends an ETag of the exact record, answers If-None-Match with 304 (GET and POST), and Last-Modified once there is data', async () => {
    // The exact record's ETag comes with the identity representation; a compressed one carries its weak form.
    const res = await fetch(STATS, { headers: { ...key, 'accept-encoding': 'identity' } });
    const body = await res.text();
    const etag = res.headers.get('etag')!;
    expect(etag).toBe(`"${createHash('md5').update(body).digest('hex')}"`);
    expect((await fetch(STATS, { headers: { ...key, 'accept-encoding': 'gzip' } })).headers.get('etag')).toBe(`W/${etag}`);
    const { updated_at: updatedAt } = JSON.parse(body) as { updated_at: string | null };
    if (updatedAt === null) expect(res.headers.get('last-modified')).toBeNull();
    else expect(Date.parse(res.headers.get('last-modified')!)).toBe(Date.parse(updatedAt));
    for (const init of [{ headers: { ...key, 'if-none-match': etag } }, { method: 'POST', body: '{}', headers: { ...key, 'content-type': 'application/json', 'if-none-match': etag } }]) {
      const again = await fetch(STATS, init);
      expect(again.status).toBe(304);
      expect(again.headers.get('access-control-allow-origin')).toBe('*');
    }
  });

  it('ignores query strings it does not take, including cache-busters and a query apikey', async () => {
    const plain = await (await fetch(STATS, { headers: key })).json();
    const res = await fetch(`${STATS}?_=123&select=x&apikey=nope&foo=eq.1`, { headers: key });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(plain);
  });

  it('answers a malformed or argument-carrying JSON body with a clear 4xx', async () => {
    for (const body of ['{', '[1,2', '{"since":"2020-01-01"}']) {
      const res = await fetch(STATS, { method: 'POST', body, headers: { ...key, 'content-type': 'application/json' } });
      expect(res.status, body).toBeGreaterThanOrEqual(400);
      expect(res.status, body).toBeLessThan(500);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(await res.json()).toHaveProperty('message');
    }
  });

  it('answers a huge body with a JSON 413', async () => {
    const res = await fetch(STATS, { method: 'POST', body: JSON.stringify({ pad: 'x'.repeat(100_000) }), headers: { ...key, 'content-type': 'application/json' } });
    expect(res.status).toBe(413);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect((await res.json()).message).toMatch(/too large/);
  });

  it('is served from a microcache, with a Cache-Control that matches the polling policy', async () => {
    await fetch(STATS, { headers: key });
    const res = await fetch(STATS, { headers: key });
    expect(res.headers.get('x-cache-status')).toMatch(/HIT|UPDATING|STALE/);
    expect(res.headers.get('cache-control')).toBe('public, max-age=60, stale-while-revalidate=30');
    const unauthorized = await fetch(STATS);
    expect(unauthorized.headers.get('cache-control')).toBe('no-store');
  });

  it('rejects other methods with a JSON 405 naming the allowed ones', async () => {
    const res = await fetch(STATS, { method: 'PUT', body: '{}', headers: key });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD, POST, OPTIONS');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(await res.json()).toHaveProperty('message');
  });
});

describe('RFC 8631 links', () => {
  it('point every API answer at the OpenAPI description, the docs and the status operation', async () => {
    const { siteUrl } = inject('stack');
    for (const url of [STATS, HEALTH]) {
      const link = (await fetch(url, { headers: { apikey: anonKey } })).headers.get('link') ?? '';
      expect(link).toContain(`<${siteUrl}/openapi.json>; rel="service-desc"`);
      expect(link).toContain(`<${siteUrl}/api-docs>; rel="service-doc"`);
      expect(link).toContain(`<${HEALTH}>; rel="status"`);
    }
  });
});

describe('landing_health', () => {
  it('is GET only and never cached', async () => {
    const res = await fetch(HEALTH, { headers: { apikey: anonKey } });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect((await res.json()).status).toMatch(/^(ok|degraded)$/);
    const post = await fetch(HEALTH, { method: 'POST', body: '{}', headers: { apikey: anonKey } });
    expect(post.status).toBe(405);
  });
});

describe('CORS', () => {
  it('answers a preflight without a key, echoing the requested headers', async () => {
    for (const url of [STATS, HEALTH, `${apiUrl}/anything`]) {
      const res = await fetch(url, {
        method: 'OPTIONS',
        headers: { origin: 'https://example.org', 'access-control-request-method': 'POST', 'access-control-request-headers': 'apikey, authorization, content-type, x-client-info' },
      });
      expect(res.status, url).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('access-control-allow-headers')).toBe('apikey, authorization, content-type, x-client-info');
      expect(res.headers.get('access-control-allow-methods')).toContain('POST');
    }
  });
});

describe('everything else', () => {
  // (/auth/v1 answers for itself: see the authorization-server metadata tests.)
  it.each(['/', '/rest/v1/', '/rest/v1/payout', '/rest/v1/rpc/stats_at', '/rest/v1/rpc/landing_statsx', '/rest/v2/rpc/landing_stats'])(
    '%s is a JSON 404 with CORS, with or without the key',
    async (p) => {
      for (const headers of [{}, { apikey: anonKey }] as Record<string, string>[]) {
        const res = await fetch(`${apiUrl}${p}`, { headers });
        expect(res.status).toBe(404);
        expect(res.headers.get('content-type')).toMatch(/^application\/json/);
        expect(res.headers.get('access-control-allow-origin')).toBe('*');
        expect(await res.json()).toHaveProperty('message');
      }
    },
  );
});
