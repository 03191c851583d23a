// /api-docs in headless Chromium: a small page whose script draws both hosts' OpenAPI descriptions
// with Redoc's versioned bundle. It renders every operation with nothing fetched from elsewhere,
// under a Content-Security-Policy that refuses inline scripts; axe-core finds no WCAG 2.x A/AA
// violation, html-validate no error, and every link to this site answers.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { HtmlValidate } from 'html-validate';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { REDOC_VERSION, SITE_PATHS } from '../../contract/paths.ts';
import { wcagViolations } from '../support/axe.ts';
import { get } from '../support/discovery.ts';

let browser: Browser;

beforeAll(async () => {
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}, 60_000);

afterAll(async () => { await browser?.close(); });

/** Loads /api-docs until Redoc has drawn the last expected string. */
async function openReference(options: { bypassCSP: boolean }) {
  const { siteUrl } = inject('stack');
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: options.bypassCSP });
  const page = await context.newPage();
  const requests: string[] = [];
  const problems: string[] = [];
  page.on('request', (req) => requests.push(req.url()));
  page.on('console', (msg) => { if (msg.type() === 'error') problems.push(msg.text()); });
  page.on('pageerror', (error) => problems.push(error.message));
  // Anything outside the site host fails, as it would offline.
  await context.route((url) => url.origin !== siteUrl, (route) => route.abort());
  const res = await page.goto(`${siteUrl}${SITE_PATHS.API_DOCS}`, { waitUntil: 'networkidle' });
  await page.waitForFunction(() => document.body.innerText.includes('/api/health'), undefined, { timeout: 20_000 });
  return { context, page, res, requests, problems };
}

describe('/api-docs', () => {
  it('draws every operation of both hosts and the key, fetching nothing from elsewhere, under a CSP without inline scripts', async () => {
    const { siteUrl, anonKey } = inject('stack');
    const { context, page, res, requests, problems } = await openReference({ bypassCSP: false });
    try {
      expect(res?.status()).toBe(200);
      expect(res?.headers()['content-security-policy']).toMatch(/script-src 'self'(;|$)/);
      expect(res?.headers()['content-security-policy']).not.toMatch(/script-src[^;]*unsafe-inline/);
      const text = await page.locator('body').innerText();
      expect(text).toContain(anonKey);
      // Redoc lists each operation in the sidebar by its summary under its tag (one tag open at a time).
      const tags = { 'API host': ['Stats record', 'Stats record (POST)', 'Health record'], Keyless: ['Stats record (keyless)', 'Health record (keyless)'] };
      for (const [tag, summaries] of Object.entries(tags)) {
        await page.getByRole('menuitem', { name: tag }).first().click();
        const sidebar = await page.locator('.menu-content').first().innerText();
        for (const summary of summaries) expect(sidebar, tag).toContain(summary);
      }
      // Each operation shows its own host: the API host's paths and the site's.
      const body = await page.locator('body').innerText();
      for (const p of ['/rest/v1/rpc/landing_stats', '/rest/v1/rpc/landing_health', '/api/stats', '/api/health']) expect(body).toContain(p);
      const external = requests.filter((u) => !u.startsWith(siteUrl) && !u.startsWith('data:') && !u.startsWith(`blob:${siteUrl}`));
      expect(external).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);

  it('has no WCAG 2.x A or AA violation (axe-core) once drawn', async () => {
    // axe is injected as a script, which the page's own CSP would rightly refuse.
    const { context, page } = await openReference({ bypassCSP: true });
    try {
      expect(await wcagViolations(page)).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);

  it('is valid HTML (html-validate), small, and every link to this site answers 200', async () => {
    const { siteUrl } = inject('stack');
    const res = await get(`${siteUrl}${SITE_PATHS.API_DOCS}`);
    const html = await res.text();
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(html.length).toBeLessThan(8 * 1024);
    const report = await new HtmlValidate({ extends: ['html-validate:recommended'] }).validateString(html);
    expect(report.results.flatMap((r) => r.messages.map((m) => `${m.ruleId}: ${m.message}`))).toEqual([]);

    const { context, page } = await openReference({ bypassCSP: false });
    try {
      const hrefs = await page.evaluate(() => [...document.querySelectorAll('a[href]')].map((a) => (a as HTMLAnchorElement).href));
      const ownPages = [...new Set(hrefs.filter((h) => h.startsWith(siteUrl)).map((h) => h.split('#')[0]!))];
      expect(ownPages).toContain(`${siteUrl}${SITE_PATHS.OPENAPI_KEYLESS}`);
      for (const href of ownPages) expect((await get(href)).status, href).toBe(200);
    } finally {
      await context.close();
    }
  }, 60_000);

  it('loads its own script under a name that is the digest of its bytes, immutable, and nothing under the old fixed name', async () => {
    const { siteUrl } = inject('stack');
    const html = await (await get(`${siteUrl}${SITE_PATHS.API_DOCS}`)).text();
    const src = /<script src="(\/assets\/api-docs\.([0-9a-f]{16})\.js)" type="module">/.exec(html);
    expect(src, html).not.toBeNull();
    const res = await get(`${siteUrl}${src![1]}`, { headers: { 'accept-encoding': 'identity' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(createHash('sha256').update(bytes).digest('hex').slice(0, 16)).toBe(src![2]);
    expect(bytes.equals(readFileSync(new URL('../../site/documents/api-docs.js', import.meta.url)))).toBe(true);
    expect((await get(`${siteUrl}/assets/api-docs.js`)).status).toBe(404);
  });

  it('loads the renderer as a versioned, immutable, compressed asset from its npm package', async () => {
    const { siteUrl } = inject('stack');
    const html = await (await get(`${siteUrl}${SITE_PATHS.API_DOCS}`)).text();
    expect(html).toContain(`src="${SITE_PATHS.REDOC_BUNDLE}"`);
    expect(SITE_PATHS.REDOC_BUNDLE).toContain(REDOC_VERSION);
    for (const encoding of ['gzip', 'br']) {
      const res = await get(`${siteUrl}${SITE_PATHS.REDOC_BUNDLE}`, { headers: { 'accept-encoding': encoding } });
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(res.headers.get('content-encoding')).toBe(encoding);
      expect(Number(res.headers.get('content-length'))).toBeLessThan(400_000);
    }
  });
});
