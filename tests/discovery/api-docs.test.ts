// /api-docs in headless Chromium: the reference generated from openapi.json renders every
// operation and the current key with no request leaving the site (it must work offline, no CDN),
// and without violating its own Content-Security-Policy.
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

let browser: Browser;

beforeAll(async () => {
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}, 60_000);

afterAll(async () => { await browser?.close(); });

describe('/api-docs', () => {
  it('renders every operation and the key offline: no request leaves the site host, no CSP violation', async () => {
    const { siteUrl, anonKey } = inject('stack');
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const page = await context.newPage();
      const requests: string[] = [];
      const problems: string[] = [];
      page.on('request', (req) => requests.push(req.url()));
      page.on('console', (msg) => { if (msg.type() === 'error') problems.push(msg.text()); });
      page.on('pageerror', (error) => problems.push(error.message));
      // Anything outside the site host fails, as it would offline.
      await context.route((url) => url.origin !== siteUrl && url.protocol !== 'data:', (route) => route.abort());
      const res = await page.goto(`${siteUrl}/api-docs`, { waitUntil: 'networkidle' });
      expect(res?.status()).toBe(200);
      expect(res?.headers()['content-type']).toBe('text/html; charset=utf-8');
      expect(await page.locator('body').innerText()).toContain(anonKey);
      // Redoc routes by fragment: each tag's page lists its operations, also on a fresh load.
      const pages: Record<string, string[]> = {
        'api-host': ['Stats record', 'Stats record (POST)', 'Health record', '/rest/v1/rpc/landing_stats', '/rest/v1/rpc/landing_health'],
        keyless: ['Stats record (keyless)', 'Health record (keyless)', '/api/stats', '/api/health'],
      };
      for (const [route, summaries] of Object.entries(pages)) {
        await page.goto(`${siteUrl}/api-docs#/${route}`, { waitUntil: 'networkidle' });
        await page.reload({ waitUntil: 'networkidle' });
        // The route's content renders after hydration; its last expected string (an operation path) marks it.
        await page.waitForFunction((marker) => document.body.innerText.includes(marker), summaries.at(-1)!, { timeout: 20_000 });
        const text = await page.locator('body').innerText();
        for (const summary of summaries) expect(text, `${route}: ${summary}`).toContain(summary);
      }
      // The page is interactive (hydrated), not just prerendered markup.
      expect(await page.locator('script').count()).toBeGreaterThan(0);
      expect(requests.filter((u) => !u.startsWith(siteUrl) && !u.startsWith('data:'))).toEqual([]);
      expect(problems.filter((p) => /Content Security Policy|Refused to/i.test(p))).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);
});
