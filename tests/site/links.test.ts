// Link checker: follows every URL in every discovery document and in llms.txt on the running stack,
// as an agent would (the public key on the API host, POST for the JSON-RPC endpoints), and expects
// 2xx with the media type the link or the document table promises. What it cannot follow, and
// why, is listed in the test output (and asserted to be only what is expected to be unfollowable).
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SITE_DOCUMENTS } from '../../contract/documents.ts';
import { SITE_PATHS } from '../../contract/paths.ts';
import { essence, get } from '../support/discovery.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/** Documents whose links are checked: every row of the documents table but the API reference page. */
const SOURCES = SITE_DOCUMENTS.filter((d) => d.path !== '/api-docs').map((d) => d.path);

/** Routes of the edge server and the media type each answers with (the demo log's, under /log/demo/, as the real log's). */
const EDGE_ROUTES: Record<string, string> = {
  '/': 'text/html',
  '/index.md': 'text/markdown',
  '/api/stats': 'application/json',
  '/api/health': 'application/json',
  '/api/history': 'application/json',
  '/api/history.csv': 'text/csv',
  '/feed.xml': 'application/atom+xml',
  '/badge.svg': 'image/svg+xml',
  '/og.png': 'image/png',
  '/.well-known/agent-card.json': 'application/json',
  '/log/': 'text/html',
  '/log/checkpoint': 'text/plain',
  '/log/checkpoint/': 'application/json',
  '/log/policy': 'text/plain',
  '/log/proof/': 'application/json',
  '/log/audits': 'application/json',
};

interface Link { url: string; sources: Set<string>; typeHint?: string; anchorOnly: boolean }

/** One walk over the links: what was found, followed and not followed. */
let links = new Map<string, Link>();
let skipped: string[] = [];
let checked: string[] = [];

function add(url: string, source: string, typeHint?: string, anchor = false) {
  const link = links.get(url) ?? { url, sources: new Set(), anchorOnly: true };
  link.sources.add(source);
  if (!anchor) link.anchorOnly = false;
  if (typeHint) link.typeHint = typeHint;
  links.set(url, link);
}

function collectJson(value: unknown, source: string, key = '', parent?: Record<string, unknown>) {
  if (typeof value === 'string') {
    for (const url of value.match(/https?:\/\/[^\s"'`<>)\]]+/g) ?? []) {
      add(url.replace(/[.,;:]+$/, ''), source, key === 'href' && typeof parent?.type === 'string' ? parent.type : undefined, key === 'anchor');
    }
  } else if (Array.isArray(value)) {
    for (const item of value) collectJson(item, source, key, parent);
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) collectJson(v, source, k, value as Record<string, unknown>);
  }
}

function collectText(text: string, source: string) {
  for (const url of text.match(/https?:\/\/[^\s"'`<>)\]]+/g) ?? []) add(url.replace(/[.,;:]+$/, ''), source);
}

/** A GET that follows one redirect on this site: the log's paths lead to the demo log's while the figures are demo data. */
async function getOnSite(url: string, siteUrl: string): Promise<Response> {
  const res = await get(url);
  const location = res.headers.get('location');
  return [302, 307].includes(res.status) && location && new URL(location, url).origin === siteUrl ? get(new URL(location, url).href) : res;
}

async function check(link: Link, siteUrl: string, apiUrl: string, anonKey: string): Promise<void> {
  const url = new URL(link.url);
  const from = [...link.sources].join(', ');
  if (url.origin !== siteUrl && url.origin !== apiUrl) {
    // Schema and profile identifiers of the standards ($schema, the linkset profile, sitemap xmlns):
    // names, not resources of this service; the test machine has no outside network.
    skipped.push(`${link.url} (outside identifier, in ${from})`);
    return;
  }
  if (link.anchorOnly) {
    skipped.push(`${link.url} (a linkset anchor: a context identifier, not a link, in ${from})`);
    return;
  }
  if (url.origin === apiUrl && url.pathname.startsWith('/auth/v1')) {
    skipped.push(`${link.url} (operator login server: not run locally; in ${from})`);
    return;
  }
  if (url.origin === apiUrl && url.pathname === '/') {
    skipped.push(`${link.url} (the API host's base URL, not a resource; in ${from})`);
    return;
  }
  let res: Response;
  let expected: string | undefined;
  const doc = SITE_DOCUMENTS.find((d) => url.origin === siteUrl && d.path === url.pathname);
  if (url.origin === apiUrl) {
    res = await get(link.url, { headers: { apikey: anonKey } });
    expected = 'application/json';
  } else if (url.pathname === '/mcp') {
    res = await get(link.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expected = essence(res.headers.get('content-type')) === 'text/event-stream' ? 'text/event-stream' : 'application/json';
  } else if (url.pathname === '/a2a') {
    res = await get(link.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: { kind: 'message', role: 'user', messageId: 'link-check', parts: [{ kind: 'text', text: 'health' }] } } }),
    });
    expected = 'application/json';
  } else {
    res = await getOnSite(link.url, siteUrl);
    expected = doc ? essence(doc.mediaType)
      : url.pathname.endsWith('/SKILL.md') ? 'text/markdown'
      : EDGE_ROUTES[url.pathname.replace(SITE_PATHS.LOG_DEMO, SITE_PATHS.LOG)];
  }
  if ((res.status === 404 || res.status === 502 || res.status === 503) && url.origin === siteUrl && !doc && (url.pathname in EDGE_ROUTES || ['/mcp', '/a2a'].includes(url.pathname))) {
    skipped.push(`${link.url} (edge route not served yet: HTTP ${res.status}; in ${from})`);
    return;
  }
  expect(res.status, `${link.url} (in ${from})`).toBeGreaterThanOrEqual(200);
  expect(res.status, `${link.url} (in ${from})`).toBeLessThan(300);
  const type = essence(res.headers.get('content-type'));
  expect(expected, `${link.url}: no expected media type known`).toBeDefined();
  expect(type, `${link.url} (in ${from})`).toBe(expected);
  if (link.typeHint) expect(type, `${link.url}: type hint in ${from}`).toBe(essence(link.typeHint));
  checked.push(`${link.url} -> ${res.status} ${type}`);
}

/**
 * Follows every link of every document on the stack at `siteUrl`; `logSigned`: the database holds a
 * signed log, so every route of the edge must answer.
 */
async function walkLinks(siteUrl: string, apiUrl: string, anonKey: string, logSigned: boolean): Promise<void> {
  links = new Map();
  skipped = [];
  checked = [];
  try {
    await walk(siteUrl, apiUrl, anonKey, logSigned);
  } finally {
    console.info(`Link checker on ${siteUrl}: ${checked.length} followed:\n  ${checked.join('\n  ')}\n${skipped.length} not followed:\n  ${skipped.join('\n  ')}`);
  }
}

async function walk(siteUrl: string, apiUrl: string, anonKey: string, logSigned: boolean): Promise<void> {
  collectJson(JSON.parse(await (await get(`${apiUrl}/.well-known/oauth-protected-resource`)).text()), 'API host PRM');
  for (const p of SOURCES) {
    const res = await getOnSite(siteUrl + p, siteUrl);
    if (p === '/.well-known/agent-card.json' && res.status !== 200) {
      skipped.push(`${siteUrl}${p} itself (edge server not serving it: HTTP ${res.status})`);
      continue;
    }
    expect(res.status, p).toBe(200);
    const text = await res.text();
    if (essence(res.headers.get('content-type')).endsWith('json')) collectJson(JSON.parse(text), p);
    else collectText(text, p);
  }
  // The documents themselves are links too (from the sitemap, llms.txt, the catalog).
  expect(links.size).toBeGreaterThan(20);
  for (const link of links.values()) await check(link, siteUrl, apiUrl, anonKey);
  expect(checked.length).toBeGreaterThan(20);
  // Only the expected kinds of URL go unfollowed.
  for (const reason of skipped) {
    expect(reason).toMatch(/outside identifier|linkset anchor|operator login server|API host's base URL|edge route not served|edge server not serving/);
  }
  // Every document this repo renders was reached by some link (robots.txt and favicon.ico are found by convention).
  // Scripts under /assets/ are reached through the page that loads them (the api-docs test).
  for (const doc of SITE_DOCUMENTS.filter((d) => d.path !== '/robots.txt' && d.path !== '/favicon.ico' && !d.path.startsWith('/assets/'))) expect(checked.some((c) => c.startsWith(`${siteUrl}${doc.path} `)), doc.path).toBe(true);
  if (logSigned) expect(skipped.filter((reason) => /edge route not served|edge server not serving/.test(reason))).toEqual([]);
}

describe('link checker', () => {
  it('every URL in every discovery document and llms.txt answers 2xx with the expected media type', async () => {
    const { siteUrl, apiUrl, anonKey } = inject('stack');
    await walkLinks(siteUrl, apiUrl, anonKey, false);
  });

  describe('on demo data, as a fresh `npm start` serves them', () => {
    let stack: TestStack;
    beforeAll(async () => { stack = await startTestStack({ seedDemo: true }); }, 120_000);
    afterAll(async () => { await stack?.destroy(); });

    it('every URL answers 2xx, the log\'s among them: no route of the edge goes unfollowed', async () => {
      await walkLinks(stack.cfg.siteUrl, stack.cfg.apiUrl, stack.cfg.ANON_KEY, true);
    }, 120_000);
  });
});
