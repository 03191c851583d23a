// /api/stats, /api/health, the page's negotiation and the site host's error answers, against the
// shared stack (nginx site host → edge → nginx API host → PostgREST → Postgres).
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { countingProxy, edgeConfig, serveEdge, type Listening } from '../support/edge.ts';

const { siteUrl, apiUrl, anonKey } = inject('stack');

describe('GET /api/stats', () => {
  it('serves the landing_stats record with attribution and notes, CORS and the polling cache policy', async () => {
    const [res, direct] = await Promise.all([
      fetch(`${siteUrl}/api/stats`, { headers: { origin: 'https://example.org' } }),
      fetch(`${apiUrl}/rest/v1/rpc/landing_stats`, { headers: { apikey: anonKey } }).then((r) => r.json()),
    ]);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('cache-control')).toBe('public, max-age=60, stale-while-revalidate=30');
    const body = await res.json();
    // The figures are the API host's, unchanged; the edge only adds attribution and notes.
    for (const [key, value] of Object.entries(direct as Record<string, unknown>)) expect(body[key]).toEqual(value);
    expect(body.attribution).toEqual({ name: 'Public Stats Service', url: siteUrl, cite: expect.stringContaining('updated_at') });
    expect(body.notes.gross_not_profit).toMatch(/not report them as profit/);
    expect(body.notes.accrual_is_estimate).toMatch(/estimate/);
    expect(body.notes.no_annualising).toMatch(/annualise/);
    expect(body.notes.demo_data).toBeUndefined();
    // No attestation is published on a fresh stack: the field is there, null, and its rule beside it.
    expect(body).toHaveProperty('audit', null);
    expect(body).toHaveProperty('audits_unfinished', 0);
    expect(body.notes.audit_scope).toMatch(/do not report the figures as audited/);
  });

  it('has /log/audits answer {"audits": []} before any attestation, never kept while the log is unsigned', async () => {
    const res = await fetch(`${siteUrl}/log/audits`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.json()).toEqual({ audits: [] });
  });

  it('has a strong ETag (weak once compressed) and answers If-None-Match with 304 at the site host', async () => {
    const identity = await fetch(`${siteUrl}/api/stats`, { headers: { 'accept-encoding': 'identity' } });
    expect(identity.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]+"$/);
    // fetch asks for gzip: the compressed variant's validator is the weak form of the same one.
    const first = await fetch(`${siteUrl}/api/stats`);
    const etag = first.headers.get('etag');
    expect(etag).toBe(`W/${identity.headers.get('etag')}`);
    const again = await fetch(`${siteUrl}/api/stats`, { headers: { 'if-none-match': etag! } });
    expect(again.status).toBe(304);
    expect(again.headers.get('etag')).toBe(etag);
    expect(await again.text()).toBe('');
    const other = await fetch(`${siteUrl}/api/stats`, { headers: { 'if-none-match': '"something-else"' } });
    expect(other.status).toBe(200);
    expect(other.headers.get('etag')).toBe(etag);
  });

  it('is cached by the gateway (X-Cache-Status) and answers CORS preflight', async () => {
    await fetch(`${siteUrl}/api/stats`);
    const hit = await fetch(`${siteUrl}/api/stats`);
    expect(['HIT', 'STALE', 'UPDATING']).toContain(hit.headers.get('x-cache-status'));
    const preflight = await fetch(`${siteUrl}/api/stats`, {
      method: 'OPTIONS',
      headers: { origin: 'https://example.org', 'access-control-request-method': 'GET', 'access-control-request-headers': 'if-none-match' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/if-none-match/);
  });

  it('answers other methods with a JSON 405 naming the allowed ones', async () => {
    const res = await fetch(`${siteUrl}/api/stats`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    expect((await res.json()).message).toMatch(/Method not allowed/);
  });
});

describe('the edge alone (in-process app, same code as the stack runs)', () => {
  let proxy: Awaited<ReturnType<typeof countingProxy>>;
  let edge: Listening;
  beforeAll(async () => {
    proxy = await countingProxy(apiUrl);
    edge = await serveEdge(edgeConfig({ apiUpstream: proxy.url, anonKey, siteUrl }));
  });
  afterAll(async () => {
    await edge?.close();
    await proxy?.close();
  });

  it('a burst of 200 concurrent /api/stats requests reaches the API host once', async () => {
    const responses = await Promise.all(Array.from({ length: 200 }, () => fetch(`${edge.url}/api/stats`)));
    const bodies = await Promise.all(responses.map((r) => r.text()));
    expect(responses.every((r) => r.status === 200)).toBe(true);
    expect(new Set(bodies).size).toBe(1);
    expect(proxy.counts.get('/rest/v1/rpc/landing_stats')).toBe(1);
  });

  it('answers If-None-Match with 304 itself, without the gateway', async () => {
    const etag = (await fetch(`${edge.url}/api/stats`)).headers.get('etag')!;
    const res = await fetch(`${edge.url}/api/stats`, { headers: { 'if-none-match': `W/${etag}, "x"` } });
    expect(res.status).toBe(304);
  });

  it('rejects a body over the limit with 413 and never shows a stack trace', async () => {
    const res = await fetch(`${edge.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(70_000) } }),
    });
    expect(res.status).toBe(413);
    const text = await res.text();
    expect(JSON.parse(text).message).toMatch(/too large/);
    expect(text).not.toMatch(/at .*\.ts:\d+/);
  });
});

describe('GET /api/health', () => {
  it('answers 200 with the health record and whether the API host answered, cached for seconds only', async () => {
    const res = await fetch(`${siteUrl}/api/health`);
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const maxAge = Number(/max-age=(\d+)/.exec(res.headers.get('cache-control') ?? '')?.[1]);
    expect(maxAge).toBeLessThanOrEqual(5);
    const body = await res.json();
    expect(body.api_host_reachable).toBe(true);
    // The shared stack's database is empty: nothing is fresh, so the SQL says "degraded".
    expect(body.status).toBe('degraded');
    expect(body.data).toMatchObject({ last_payout_date: null, fresh: false });
    expect(body.writer).toMatchObject({ alive: false });
    expect(Date.parse(body.checked_at)).toBeGreaterThan(Date.now() - 60_000);
  });
});

describe('the page for agents: Link header and Markdown negotiation', () => {
  const expectedLink = [
    `<${siteUrl}/.well-known/api-catalog>; rel="api-catalog"; type="application/linkset+json"`,
    `<${siteUrl}/openapi.json>; rel="service-desc"; type="application/json"`,
    `<${siteUrl}/openapi-keyless.json>; rel="service-desc"; type="application/json"`,
    `<${siteUrl}/api-docs>; rel="service-doc"; type="text/html"`,
    `<${siteUrl}/llms.txt>; rel="describedby"; type="text/plain"`,
    `<${siteUrl}/index.md>; rel="alternate"; type="text/markdown"`,
  ].join(', ');

  it('serves HTML by default with the Link header and Vary: Accept (GET and HEAD)', async () => {
    for (const method of ['GET', 'HEAD']) {
      const res = await fetch(`${siteUrl}/`, { method, headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('link')).toBe(expectedLink);
      expect(res.headers.get('vary')).toMatch(/Accept/);
    }
  });

  it('serves Markdown for Accept: text/markdown (any query string), with a token estimate', async () => {
    const res = await fetch(`${siteUrl}/?x=1`, { headers: { accept: 'text/markdown' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    expect(res.headers.get('vary')).toMatch(/Accept/);
    expect(res.headers.get('link')).toBe(expectedLink);
    const body = await res.text();
    expect(body.startsWith('# Public Stats Service\n')).toBe(true);
    expect(Number(res.headers.get('x-markdown-tokens'))).toBe(Math.ceil(body.length / 4));
    expect(body).toContain(`${siteUrl}/.well-known/agent-card.json`);
    expect(await (await fetch(`${siteUrl}/index.md`)).text()).toBe(body);
  });

  it('keeps HTML when the client likes HTML better than Markdown', async () => {
    const res = await fetch(`${siteUrl}/`, { headers: { accept: 'text/html, text/markdown;q=0.5' } });
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
  });
});

describe('unknown paths and wrong methods', () => {
  it('answers a JSON 404 to API clients and an HTML 404 to browsers', async () => {
    const json = await fetch(`${siteUrl}/no/such/thing`);
    expect(json.status).toBe(404);
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    expect((await json.json()).message).toMatch(/Not found/);
    const html = await fetch(`${siteUrl}/no/such/page`, { headers: { accept: 'text/html,*/*;q=0.8' } });
    expect(html.status).toBe(404);
    expect(html.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await html.text()).toContain('<h1>Not found</h1>');
    const api = await fetch(`${siteUrl}/api/nope`);
    expect(api.status).toBe(404);
    expect(api.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('answers 405 for wrong methods on the page, /a2a and the agent card', async () => {
    for (const [method, path, allow] of [['POST', '/', 'GET, HEAD, OPTIONS'], ['GET', '/a2a', 'POST, OPTIONS'], ['PUT', '/.well-known/agent-card.json', 'GET, HEAD, OPTIONS']] as const) {
      const res = await fetch(`${siteUrl}${path}`, { method });
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.headers.get('allow')).toBe(allow);
    }
  });
});
