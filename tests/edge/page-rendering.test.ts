// The landing page in headless Chromium on two private stacks (demo data, real-looking imported rows)
// as people, agents and caches meet it: phone and desktop widths, light and dark, charts, the share
// card, WCAG (axe-core), WebMCP and validators. Screenshots go to test-output/edge/ for review.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wcagViolations } from '../support/axe.ts';
import type { TestStack } from '../support/stack.ts';
import { OUT_DIR, readable, startLandingStacks, stopLandingStacks, usd } from '../support/landing-stacks.ts';

let browser: Browser;
let demo: TestStack;
let imported: TestStack;

beforeAll(async () => {
  ({ demo, imported, browser } = await startLandingStacks());
}, 120_000);

afterAll(() => stopLandingStacks({ demo, imported, browser }));

describe('the landing page on a phone', () => {
  it('fits a narrow screen without sideways scrolling', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true });
    try {
      const page = await context.newPage();
      await page.goto(demo.cfg.siteUrl);
      const widths = await page.evaluate(() => ({ doc: document.documentElement.scrollWidth, view: window.innerWidth }));
      expect(widths.doc).toBeLessThanOrEqual(widths.view);
      const charts = page.locator('svg.chart');
      expect(await charts.count()).toBe(2);
      for (const chart of await charts.all()) expect((await chart.boundingBox())!.width).toBeLessThanOrEqual(widths.view);
      await page.screenshot({ path: path.join(OUT_DIR, 'landing-demo-phone.png'), fullPage: true });
    } finally {
      await context.close();
    }
  });
});

describe('the page read by a person at 390 px and 1280 px, light and dark', () => {
  for (const width of [390, 1280]) {
    for (const colorScheme of ['light', 'dark'] as const) {
      it(`${width} px, ${colorScheme}: timestamps as a person reads them in <time datetime>, chart labels at the page's text size`, async () => {
        const context = await browser.newContext({ viewport: { width, height: 900 }, colorScheme, deviceScaleFactor: width === 390 ? 2 : 1, isMobile: width === 390 });
        try {
          const page = await context.newPage();
          await page.goto(imported.cfg.siteUrl);
          const view = await page.evaluate(() => ({ doc: document.documentElement.scrollWidth, width: window.innerWidth }));
          expect(view.doc).toBeLessThanOrEqual(view.width);

          // Every instant: the exact ISO value in datetime, the words a person reads in the text.
          const times = await page.locator('time').evaluateAll((els) => els.map((e) => ({ datetime: e.getAttribute('datetime'), text: e.textContent, lines: e.getClientRects().length })));
          // None is broken across lines (an ISO token broke at its hyphens before).
          expect(times.filter((t) => t.lines !== 1)).toEqual([]);
          const instants = times.filter((t) => t.datetime!.includes('T'));
          expect(instants.length).toBeGreaterThanOrEqual(4); // capital (card and section), updated_at, health check, latest accrual
          for (const t of instants) {
            expect(t.datetime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
            expect(t.text).toBe(readable(t.datetime!));
          }
          const stats = await (await fetch(`${imported.cfg.siteUrl}/api/stats`)).json() as { capital: { as_of: string } };
          const card = page.locator('.figures .note time');
          expect(await card.getAttribute('datetime')).toBe(stats.capital.as_of);
          expect(await page.locator('.figures').innerText()).not.toContain(stats.capital.as_of);
          // No key-figure card is wider than its box (a long token would push past it).
          const overflowing = await page.locator('.figures > div').evaluateAll((els) => els.filter((e) => e.scrollWidth > e.clientWidth).length);
          expect(overflowing).toBe(0);

          // The charts' labels: HTML text at the page's size, inside the screen, first and last date apart.
          const labels = await page.locator('.plot .y span, .plot .x span').evaluateAll((els) => els.map((e) => {
            const box = e.getBoundingClientRect();
            return { text: e.textContent, size: parseFloat(getComputedStyle(e).fontSize), left: box.left, right: box.right, top: box.top };
          }));
          expect(labels).toHaveLength(8); // two charts, a top value, $0 and two dates each
          for (const label of labels) {
            expect(label.size, label.text!).toBeGreaterThanOrEqual(12);
            expect(label.left).toBeGreaterThanOrEqual(0);
            expect(label.right).toBeLessThanOrEqual(view.width);
          }
          for (const i of [2, 6]) expect(labels[i]!.right).toBeLessThan(labels[i + 1]!.left);
          // The drawing fills the width beside its value labels.
          for (const chart of await page.locator('svg.chart').all()) expect((await chart.boundingBox())!.width).toBeGreaterThan(width * 0.6);
          expect(await wcagViolations(page)).toEqual([]);
          await page.screenshot({ path: path.join(OUT_DIR, `reader-${width}-${colorScheme}.png`), fullPage: true });
        } finally {
          await context.close();
        }
      }, 60_000);
    }
  }
});

describe('WebMCP on the page', () => {
  it('registers get_stats, get_history and get_health when navigator.modelContext exists, and they answer', async () => {
    const siteUrl = imported.cfg.siteUrl;
    const context = await browser.newContext();
    try {
      // The browser's side of WebMCP: collect what the page registers.
      await context.addInitScript(() => {
        const tools: unknown[] = [];
        Object.assign(window, { __webmcpTools: tools });
        Object.defineProperty(navigator, 'modelContext', { value: { registerTool: (tool: unknown) => tools.push(tool) } });
      });
      const page = await context.newPage();
      await page.goto(siteUrl);
      const names = await page.evaluate(() => (window as unknown as { __webmcpTools: { name: string }[] }).__webmcpTools.map((t) => t.name));
      expect(names).toEqual(['get_stats', 'get_history', 'get_health']);
      const text = await page.evaluate(async () => {
        const tool = (window as unknown as { __webmcpTools: { name: string; annotations: { readOnlyHint: boolean }; execute(): Promise<{ content: { text: string }[] }> }[] }).__webmcpTools[0]!;
        if (!tool.annotations.readOnlyHint) throw new Error('not read-only');
        return (await tool.execute()).content[0]!.text;
      });
      expect(JSON.parse(text)).toEqual(await (await fetch(`${siteUrl}/api/stats`)).json());
    } finally {
      await context.close();
    }
  });
});

describe('the page as a cacheable resource', () => {
  it('sends validators taken from updated_at, answers If-None-Match with 304, and states its length on HEAD', async () => {
    const stats = await (await fetch(`${imported.cfg.siteUrl}/api/stats`)).json() as { updated_at: string };
    for (const accept of ['text/html', 'text/markdown']) {
      const get = await fetch(`${imported.cfg.siteUrl}/`, { headers: { accept } });
      const body = await get.text();
      const etag = get.headers.get('etag')!;
      expect(etag).toMatch(/^W\/".+"$/);
      expect(etag).toContain(stats.updated_at);
      expect(Date.parse(get.headers.get('last-modified')!)).toBe(Date.parse(stats.updated_at));
      // The length of the identity representation; a compressed one is sent chunked.
      const head = await fetch(`${imported.cfg.siteUrl}/`, { method: 'HEAD', headers: { accept, 'accept-encoding': 'identity' } });
      expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(body)));
      const again = await fetch(`${imported.cfg.siteUrl}/`, { headers: { accept, 'if-none-match': etag } });
      expect(again.status).toBe(304);
      expect(await again.text()).toBe('');
    }
  });
});

describe('the whole record on the page, the share card and the colour scheme', () => {
  for (const colorScheme of ['light', 'dark'] as const) {
    it(`${colorScheme}: the running-total chart beside the 16-night bars, a table fallback, and no WCAG A/AA violation (axe-core)`, async () => {
      for (const stack of [demo, imported]) {
        const context = await browser.newContext({ colorScheme, viewport: { width: 1000, height: 900 } });
        try {
          const page = await context.newPage();
          await page.goto(`${stack.cfg.siteUrl}/`, { waitUntil: 'networkidle' });
          const history = await (await fetch(`${stack.cfg.siteUrl}/api/history`)).json() as { nights: { date: string; total_usd: number }[] };
          expect(await page.locator('svg.chart rect.bar').count()).toBe(Math.min(16, history.nights.length));
          expect(await page.locator('svg.chart.cumulative path.line').count()).toBe(1);
          expect(await page.locator('svg.chart.cumulative title').textContent()).toContain(history.nights.at(-1)!.date);
          // The table fallback ends on the latest running total.
          const lastRow = page.locator('#history-table tbody tr').last();
          expect(await lastRow.locator('td').last().textContent()).toBe(usd(history.nights.at(-1)!.total_usd));
          // The page follows the reader's colour scheme.
          const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
          expect(background).toBe(colorScheme === 'dark' ? 'rgb(15, 20, 26)' : 'rgb(255, 255, 255)');
          expect(await wcagViolations(page)).toEqual([]);
          await page.screenshot({ path: path.join(OUT_DIR, `page-${colorScheme}-${stack === demo ? 'demo' : 'imported'}.png`), fullPage: true });
        } finally {
          await context.close();
        }
      }
    }, 60_000);
  }

  it('names the share card in Open Graph and Twitter tags; /og.png is a 1200×630 PNG that says demo while the data is', async () => {
    for (const stack of [demo, imported]) {
      const html = await (await fetch(`${stack.cfg.siteUrl}/`)).text();
      expect(html).toContain(`<meta property="og:image" content="${stack.cfg.siteUrl}/og.png">`);
      expect(html).toContain('<meta name="twitter:card" content="summary_large_image">');
      expect(html).toContain(`<link rel="alternate" type="application/atom+xml"`);
      const res = await fetch(`${stack.cfg.siteUrl}/og.png`);
      expect(res.headers.get('content-type')).toBe('image/png');
      const png = Buffer.from(await res.arrayBuffer());
      expect(png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(true);
      // IHDR: width and height, big-endian, right after the chunk header.
      expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1200, 630]);
      const ogAlt = /<meta property="og:image:alt" content="([^"]*)">/.exec(html)![1]!;
      expect(ogAlt.includes('demo data')).toBe(stack === demo);
      writeFileSync(path.join(OUT_DIR, `og-${stack === demo ? 'demo' : 'imported'}.png`), png);
      const again = await fetch(`${stack.cfg.siteUrl}/og.png`, { headers: { 'if-none-match': res.headers.get('etag')! } });
      expect(again.status).toBe(304);
    }
  });
});
