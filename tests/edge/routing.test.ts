// The edge app's routing and content negotiation, asked through app.request() with no port: methods,
// not found, the page, validators, the records and their failures, the API host's signing route
// (reaching a PostgREST stand-in through the app's fetch option) and the figures option.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EDGE_PATHS, SITE_PATHS } from '../../contract/paths.ts';
import { UNAVAILABLE } from '../../contract/texts/rules.ts';
import { createApp } from '../../edge/app.ts';
import { createFigures, publishStats } from '../../edge/figures.ts';
import { createLogReader } from '../../edge/log-views.ts';
import { app, appWith, cfg, downUpstream, fixedUpstream } from '../support/fixed-edge.ts';
import { FIXED_LOG_HEAD, fixedLog, fixedStats } from '../support/records.ts';
import { fixedLogHolder } from './fixed-app.ts';

const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

const GET_ROUTES = [
  SITE_PATHS.HOME, SITE_PATHS.INDEX_MD, SITE_PATHS.SITE_STATS, SITE_PATHS.SITE_HISTORY, SITE_PATHS.SITE_HISTORY_CSV, SITE_PATHS.SITE_HEALTH,
  SITE_PATHS.FEED, SITE_PATHS.BADGE, SITE_PATHS.OG_IMAGE, SITE_PATHS.AGENT_CARD, SITE_PATHS.SIG_DIRECTORY,
];

describe('methods', () => {
  it.each(GET_ROUTES)('%s answers GET and HEAD, and 405 with Allow to every other method', async (path) => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const res = await app.request(path, { method });
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
      expect(await res.json()).toEqual({ message: 'Method not allowed: use GET, HEAD.' });
    }
    const head = await app.request(path, { method: 'HEAD' });
    // The share card needs a PNG renderer, which this app was not given: 404 for GET and HEAD alike.
    expect(head.status).toBe(path === SITE_PATHS.OG_IMAGE ? 404 : 200);
    expect(await head.text()).toBe('');
  });

  it('answers POST on /mcp and /a2a, and 405 with Allow to GET (JSON-RPC shaped on /mcp)', async () => {
    const a2a = await app.request(SITE_PATHS.A2A);
    expect(a2a.status).toBe(405);
    expect(a2a.headers.get('allow')).toBe('POST, OPTIONS');
    expect(await a2a.json()).toEqual({ message: 'Method not allowed: use POST.' });
    const mcp = await app.request(SITE_PATHS.MCP, { method: 'PUT' });
    expect(mcp.status).toBe(405);
    expect(mcp.headers.get('allow')).toBe('POST, OPTIONS');
    expect(await mcp.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } });
    const list = await app.request(SITE_PATHS.MCP, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(list.status).toBe(200);
    expect((await list.json()).result.tools.map((t: { name: string }) => t.name)).toEqual(['get_stats', 'get_history', 'get_health']);
  });

  it('answers a CORS preflight on any route with 204, and refuses a body over 64 KiB on the JSON-RPC routes', async () => {
    const preflight = await app.request(SITE_PATHS.SITE_STATS, { method: 'OPTIONS', headers: { origin: 'https://elsewhere.example', 'access-control-request-method': 'GET' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    const big = await app.request(SITE_PATHS.A2A, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(65 * 1024) }, body: ' '.repeat(65 * 1024) });
    expect(big.status).toBe(413);
  });
});

describe('not found', () => {
  it('is a page for a browser and JSON naming the routes for anything else', async () => {
    const page = await app.request('/no/such/page', { headers: { accept: BROWSER } });
    expect(page.status).toBe(404);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await page.text()).toContain(`<a href="${SITE_PATHS.HOME}">home page</a>`);
    for (const accept of ['application/json', '*/*', undefined]) {
      const res = await app.request('/no/such/page', { headers: accept ? { accept } : {} });
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      const { message } = await res.json();
      for (const p of [SITE_PATHS.SITE_STATS, SITE_PATHS.SITE_HISTORY, SITE_PATHS.SITE_HEALTH, SITE_PATHS.MCP, SITE_PATHS.A2A]) expect(message).toContain(` ${p}`);
    }
  });

  it('holds for the internal signing route asked with GET or for a function it does not sign', async () => {
    expect((await app.request(`${EDGE_PATHS.API_HOST_RPC}landing_stats`)).status).toBe(404);
    expect((await app.request(`${EDGE_PATHS.API_HOST_RPC}landing_health`, { method: 'POST', body: '{}' })).status).toBe(404);
  });
});

describe('the page', () => {
  it('is HTML for a browser and for no Accept, Markdown for a client that prefers it and always at /index.md', async () => {
    const cases: [string, Record<string, string>, string][] = [
      [SITE_PATHS.HOME, { accept: BROWSER }, 'text/html; charset=utf-8'],
      [SITE_PATHS.HOME, {}, 'text/html; charset=utf-8'],
      [SITE_PATHS.HOME, { accept: 'text/markdown, text/html;q=0.9' }, 'text/markdown; charset=utf-8'],
      [SITE_PATHS.HOME, { accept: 'text/html, text/markdown;q=0.5' }, 'text/html; charset=utf-8'],
      [SITE_PATHS.INDEX_MD, { accept: BROWSER }, 'text/markdown; charset=utf-8'],
    ];
    for (const [path, headers, type] of cases) {
      const res = await app.request(path, { headers });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type'), `${path} ${JSON.stringify(headers)}`).toBe(type);
      expect(res.headers.get('vary')).toBe('Accept');
      expect(res.headers.get('link')).toContain(`<${cfg.siteUrl}${SITE_PATHS.INDEX_MD}>; rel="alternate"`);
      const body = await res.text();
      expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(body)));
      if (type.startsWith('text/markdown')) {
        expect(body.startsWith('# Public Stats Service\n')).toBe(true);
        expect(res.headers.get('x-markdown-tokens')).toBe(String(Math.ceil(body.length / 4)));
      } else {
        expect(body.startsWith('<!doctype html>')).toBe(true);
        expect(res.headers.get('x-markdown-tokens')).toBeNull();
      }
    }
  });

  it('is 503, not cached, while the stats cannot be read', async () => {
    const res = await appWith(downUpstream).request(SITE_PATHS.HOME);
    expect(res.status).toBe(503);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('retry-after')).toBe('30');
    expect(await res.text()).toContain('Figures unavailable');
  });
});

describe('validators', () => {
  it.each([SITE_PATHS.SITE_STATS, SITE_PATHS.SITE_HISTORY, SITE_PATHS.SITE_HISTORY_CSV, `${SITE_PATHS.SITE_HISTORY}?from=2025-03-10`, SITE_PATHS.FEED, SITE_PATHS.BADGE, SITE_PATHS.HOME, SITE_PATHS.INDEX_MD, SITE_PATHS.AGENT_CARD])(
    '%s answers If-None-Match with its validator 304 and no body, and another validator 200',
    async (path) => {
      const first = await app.request(path);
      expect(first.status).toBe(200);
      const etag = first.headers.get('etag')!;
      expect(etag).toMatch(/^(W\/)?"[^"]+"$/);
      const again = await app.request(path, { headers: { 'if-none-match': etag } });
      expect(again.status).toBe(304);
      expect(again.headers.get('etag')).toBe(etag);
      expect(await again.text()).toBe('');
      const other = await app.request(path, { headers: { 'if-none-match': '"another"' } });
      expect(other.status).toBe(200);
    },
  );
});

describe('the records', () => {
  it('are the fixed records as the edge publishes them, signed, cacheable by clients and open to other origins', async () => {
    const res = await app.request(SITE_PATHS.SITE_STATS, { headers: { origin: 'https://elsewhere.example' } });
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body).toBe(`${JSON.stringify(publishStats(fixedStats(), cfg))}\n`);
    expect(res.headers.get('cache-control')).toBe('public, max-age=60, stale-while-revalidate=30');
    expect(res.headers.get('vary')).toBe('Accept-Encoding');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('content-digest')).toBe(`sha-256=:${createHash('sha256').update(body).digest('base64')}:`);
    expect(res.headers.get('signature')).toMatch(/^answer=:/);
    // The log state the record was computed against, named and covered by the signature.
    expect(res.headers.get('log-checkpoint')).toBe(`origin="${FIXED_LOG_HEAD.origin}", size=${FIXED_LOG_HEAD.size}, root=:${FIXED_LOG_HEAD.root}:`);
    expect(res.headers.get('signature-input')).toContain('"log-checkpoint"');
  });

  it('go to a gateway filling its cache with only the representation\'s own headers, whole even when its validator matches', async () => {
    const plain = await app.request(SITE_PATHS.SITE_STATS);
    const etag = plain.headers.get('etag')!;
    const fill = await app.request(SITE_PATHS.SITE_STATS, { headers: { 'x-cache-fill': '1', origin: 'https://elsewhere.example', 'if-none-match': etag } });
    expect(fill.status).toBe(200);
    expect([...fill.headers.keys()].sort()).toEqual(['content-digest', 'content-type', 'etag', 'log-checkpoint', 'signature', 'signature-input']);
    expect(fill.headers.get('etag')).toBe(etag);
    expect(await fill.text()).toBe(await plain.text());
  });

  it('narrow the track record by from/to and refuse a bad date with a JSON 400', async () => {
    const narrowed = await (await app.request(`${SITE_PATHS.SITE_HISTORY}?from=2025-03-05&to=2025-03-07`)).json();
    expect(narrowed.nights.map((n: { date: string }) => n.date)).toEqual(['2025-03-05', '2025-03-06', '2025-03-07']);
    const csv = await (await app.request(`${SITE_PATHS.SITE_HISTORY_CSV}?from=2025-03-19`)).text();
    expect(csv.trim().split('\n')).toHaveLength(3);
    const bad = await app.request(`${SITE_PATHS.SITE_HISTORY}?from=March`);
    expect(bad.status).toBe(400);
    expect((await bad.json()).message).toMatch(/from/);
  });

  it('are 503 with the unavailable sentence while the figures cannot be read; health stays 200 "down", the badge says "no data"', async () => {
    const down = appWith(downUpstream);
    for (const path of [SITE_PATHS.SITE_STATS, SITE_PATHS.SITE_HISTORY, SITE_PATHS.SITE_HISTORY_CSV, SITE_PATHS.FEED, SITE_PATHS.LOG_CHECKPOINT]) {
      const res = await down.request(path);
      expect(res.status, path).toBe(503);
      expect(res.headers.get('retry-after')).toBe('30');
      expect(await res.json()).toEqual({ message: UNAVAILABLE.http });
    }
    const health = await down.request(SITE_PATHS.SITE_HEALTH);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'down', api_host_reachable: false });
    expect(await (await down.request(SITE_PATHS.BADGE)).text()).toContain('no data');
  });

  it("say so in the agents' words: an MCP tool error, and an A2A reply whose data part is the health record", async () => {
    const down = appWith(downUpstream);
    const json = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const tool = await (await down.request(SITE_PATHS.MCP, {
      method: 'POST', headers: json, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_stats', arguments: {} } }),
    })).json();
    expect(tool.result).toEqual({ isError: true, content: [{ type: 'text', text: UNAVAILABLE.mcpTool }] });
    const reply = await (await down.request(SITE_PATHS.A2A, {
      method: 'POST', headers: json,
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'message/send', params: { message: { kind: 'message', messageId: 'm1', role: 'user', parts: [{ kind: 'text', text: 'latest stats' }] } } }),
    })).json();
    expect(reply.result.parts[0]).toEqual({ kind: 'text', text: UNAVAILABLE.a2a });
    expect(reply.result.parts[1].data).toMatchObject({ status: 'down', api_host_reachable: false });
  });
});

describe("the API host's signing route", () => {
  it('signs what PostgREST answers for the records it names, and passes a refusal through unsigned', async () => {
    const called: string[] = [];
    const record = JSON.stringify(fixedStats());
    const postgrest = (async (input: string | URL | Request) => {
      const url = String(input);
      called.push(url);
      return url.endsWith('/rpc/landing_history')
        ? new Response('{"message":"no"}', { status: 400, headers: { 'content-type': 'application/json' } })
        : new Response(record, { headers: { 'content-type': 'application/json; charset=utf-8', etag: '"fixed"' } });
    }) as typeof fetch;
    const signing = appWith(fixedUpstream, postgrest);
    const res = await signing.request(`${EDGE_PATHS.API_HOST_RPC}landing_stats`, { method: 'POST', body: '{}', headers: { 'x-cache-fill': '1' } });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(record);
    expect(res.headers.get('etag')).toBe('"fixed"');
    expect(res.headers.get('signature-input')).toMatch(/"@path"/);
    expect(res.headers.get('cache-control')).toBeNull();
    const refused = await signing.request(`${EDGE_PATHS.API_HOST_RPC}landing_history`, { method: 'POST', body: '{}' });
    expect(refused.status).toBe(400);
    expect(refused.headers.get('cache-control')).toBe('no-store');
    expect(refused.headers.get('signature')).toBeNull();
    expect(called).toEqual([`${cfg.postgrestUpstream}/rpc/landing_stats`, `${cfg.postgrestUpstream}/rpc/landing_history`]);
  });
});

describe('the figures option', () => {
  it('is what every surface reads: the page, the records and the log', async () => {
    let reads = 0;
    const logSource = fixedLogHolder(() => fixedLog());
    const counted = createFigures(cfg, { ...fixedUpstream, stats: async () => { reads++; return fixedStats('demo'); } }, createLogReader(logSource));
    const demo = createApp(cfg, { figures: counted, logSource });
    expect(await (await demo.request(SITE_PATHS.HOME)).text()).toContain('id="demo-banner"');
    expect((await (await demo.request(SITE_PATHS.SITE_STATS)).json()).data_source).toBe('demo');
    expect(reads).toBe(1);
    const checkpoint = await (await demo.request(SITE_PATHS.LOG_CHECKPOINT)).text();
    expect(checkpoint.split('\n').slice(0, 2)).toEqual([`${new URL(cfg.siteUrl).host}${SITE_PATHS.LOG.replace(/\/$/, '')}`, String((await fixedLog()).entries.length)]);
  });
});
