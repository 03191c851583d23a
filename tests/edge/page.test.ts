// The landing page in headless Chromium (Debian's chromium driven by playwright-core), on two
// private stacks: one with the demo dataset, one with real-looking imported rows. The page must
// read without JavaScript, show the figures /api/stats serves, chart every night, and carry the
// demo banner only for demo data. Screenshots go to test-output/edge/ for review.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../config/checkout.ts';
import { wcagViolations } from '../support/axe.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { SITE_DOCUMENTS } from '../../contract/documents.ts';
import { SITE_PATHS } from '../../contract/paths.ts';
import { PRIVACY } from '../../contract/texts/rules.ts';
import { AuditSchema } from '../../contract/records.ts';
import { esc } from '../../edge/page/escape.ts';
import { query } from '../support/db.ts';
import { eventually } from '../support/edge.ts';
import { signedAttestation, type AttestationFacts } from '../support/records.ts';

const OUT_DIR = path.join(ROOT_DIR, 'test-output', 'edge');
/** Every titled row of the documents table is linked from the page. */
const DISCOVERY = SITE_DOCUMENTS.filter((d) => d.title).map((d) => d.path);

/** 20 settled nights of non-demo rows, as an import would leave them. */
async function importRealLookingData(adminUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`
      insert into stats.payout (date, usd, is_demo)
        select (now() at time zone 'utc')::date - i, 30 + (i * 7 % 23) + 0.125, false from generate_series(0, 19) i;
      insert into stats.trading_cost (date, usd, is_demo)
        select (now() at time zone 'utc')::date - i, 4 + (i % 5), false from generate_series(0, 19) i;
      insert into stats.capital (observed_at, cash_usd, inventory_usd, positions, is_demo)
        values (now() - interval '2 minutes', 5000.5, 1234.25, 12, false);
      insert into stats.accrual (observed_at, usd, markets, is_demo) values (now() - interval '1 minute', 12.34, 17, false);
      insert into stats.breadth (observed_at, markets_quoted_24h, is_demo) values (now() - interval '1 minute', 29, false);
      insert into stats.heartbeat (at, is_demo) values (now(), false);
      update stats.settings set data_source = 'import';`);
  } finally {
    await client.end();
  }
}

const usd = (n: number) => `$${n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
/** An ISO instant as the page should show it to a person: "26 Nov 2026, 07:27 UTC". */
const readable = (iso: string) => {
  const t = new Date(iso);
  const month = t.toLocaleString('en-GB', { month: 'short', timeZone: 'UTC' });
  return `${t.getUTCDate()} ${month} ${t.getUTCFullYear()}, ${String(t.getUTCHours()).padStart(2, '0')}:${String(t.getUTCMinutes()).padStart(2, '0')} UTC`;
};

let browser: Browser;
let demo: TestStack;
let imported: TestStack;

beforeAll(async () => {
  mkdirSync(OUT_DIR, { recursive: true });
  [demo, imported, browser] = await Promise.all([
    startTestStack({ seedDemo: true }),
    startTestStack().then(async (s) => { await importRealLookingData(s.db.adminUrl); return s; }),
    chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    }),
  ]);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all([demo?.destroy(), imported?.destroy()]);
});

async function openWithoutJs(siteUrl: string): Promise<{ page: Page; requested: string[]; close(): Promise<void> }> {
  const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1000, height: 900 } });
  const page = await context.newPage();
  const requested: string[] = [];
  page.on('request', (req) => requested.push(req.url()));
  const res = await page.goto(siteUrl);
  expect(res?.status()).toBe(200);
  return { page, requested, close: () => context.close() };
}

for (const kind of ['demo', 'import'] as const) {
  describe(`the landing page with ${kind} data`, () => {
    const stack = () => (kind === 'demo' ? demo : imported);

    it('shows the figures /api/stats serves, 16 bars for 16 nights, and the banner only for demo data', async () => {
      const siteUrl = stack().cfg.siteUrl;
      const stats = await (await fetch(`${siteUrl}/api/stats`)).json();
      expect(stats.data_source).toBe(kind);
      expect(stats.daily).toHaveLength(16);
      const { page, requested, close } = await openWithoutJs(siteUrl);
      try {
        // No external assets: everything the page loads comes from the site itself.
        expect(requested.every((url) => url.startsWith(siteUrl))).toBe(true);

        const values: [string, number | null][] = [
          ['last_night_usd', stats.last_night_usd], ['accrued_today_usd', stats.accrued_today_usd], ['total_usd', stats.total_usd],
          ['best_day_usd', stats.best_day_usd], ['at_stake_usd', stats.capital.at_stake_usd],
          ['returns.rewards_usd', stats.returns.rewards_usd], ['returns.trading_costs_usd', stats.returns.trading_costs_usd], ['returns.net_usd', stats.returns.net_usd],
        ];
        for (const [field, value] of values) {
          const el = page.locator(`data[data-field="${field}"]`);
          expect(Number(await el.getAttribute('value')), field).toBe(value);
          expect((await el.textContent())?.trim(), field).toBe(usd(value!));
        }
        expect(await page.locator('data[data-field="markets_quoted_24h"]').getAttribute('value')).toBe(String(stats.markets_quoted_24h));
        const updated = page.locator('time[data-field="updated_at"]');
        expect(await updated.getAttribute('datetime')).toBe(stats.updated_at);
        expect(await updated.textContent()).toBe(readable(stats.updated_at));
        const body = await page.locator('body').innerText();
        expect(body).toContain(`Last night's payout (${stats.last_night_date})`);
        expect(body).toMatch(/Today's accrual \(estimate\)/i);
        expect(body).toMatch(/not financial advice/);

        const bars = page.locator('svg.chart rect.bar');
        expect(await bars.count()).toBe(16);
        expect(await bars.evaluateAll((els) => els.map((e) => e.getAttribute('data-date')))).toEqual(stats.daily.map((d: { date: string }) => d.date));
        expect(await page.locator('#nights-table tbody tr').count()).toBe(16);

        expect(await page.locator('#demo-banner').count()).toBe(kind === 'demo' ? 1 : 0);
        if (kind === 'demo') expect(await page.locator('#demo-banner').isVisible()).toBe(true);

        for (const href of DISCOVERY) expect(await page.locator(`a[href="${href}"]`).count(), href).toBeGreaterThanOrEqual(1);
        expect(await page.locator('h1').count()).toBe(1);
        expect(await page.locator('html').getAttribute('lang')).toBe('en');

        const ld = JSON.parse((await page.locator('script[type="application/ld+json"]').textContent())!);
        expect(ld).toMatchObject({ '@context': 'https://schema.org', '@type': 'Dataset', dateModified: stats.updated_at, url: siteUrl, license: 'https://creativecommons.org/licenses/by/4.0/' });
        // POST-only endpoints are named, not linked: a GET there is a 405.
        for (const postOnly of ['/mcp', '/a2a']) {
          expect(await page.locator(`a[href="${postOnly}"]`).count(), postOnly).toBe(0);
          expect(await page.locator('code', { hasText: postOnly }).count(), postOnly).toBeGreaterThanOrEqual(1);
        }
        // Demo data is never described as the real account, not even to crawlers.
        if (kind === 'demo') {
          expect(ld.description).toMatch(/^DEMO DATA/);
          expect(ld.description).not.toMatch(/real production account/);
          expect(await page.locator('.lede').textContent()).toMatch(/demo data/);
        } else {
          expect(ld.description).toMatch(/one real production account/);
          expect(ld.description).not.toMatch(/DEMO/);
        }

        await page.screenshot({ path: path.join(OUT_DIR, `landing-${kind}.png`), fullPage: true });
      } finally {
        await close();
      }
    });
  });
}

describe("the page's account of the log", () => {
  // The demo seed's writer logs the final nights; the imported rows bypass it, so nothing is logged.
  for (const kind of ['demo', 'import'] as const) {
    it(`${kind}: counts the logged nights /api/history serves, says they are not witnessed without a policy, and links the log in use once it is signed, and the verifier`, async () => {
      const siteUrl = (kind === 'demo' ? demo : imported).cfg.siteUrl;
      const history = await (await fetch(`${siteUrl}${SITE_PATHS.SITE_HISTORY}`)).json() as { nights: { log_index: number | null }[] };
      const logged = history.nights.filter((n) => n.log_index !== null).length;
      expect(logged > 0).toBe(kind === 'demo');
      const { page, close } = await openWithoutJs(siteUrl);
      try {
        const section = page.locator('section[aria-labelledby="h-verify"]');
        const facts = await section.locator('#log-summary li').allInnerTexts();
        expect(facts[0]).toBe(kind === 'demo'
          ? `${logged} nights logged, ${logged} of them not witnessed: nobody else holds these checkpoints.`
          : 'No night logged yet; the log is not witnessed: nobody else would hold its checkpoints.');
        expect(await section.locator('code').innerText()).toBe(`node verify.mjs --site ${siteUrl} --state verify-state.json`);
        await section.screenshot({ path: path.join(OUT_DIR, `verify-${kind}.png`) });
        const links = await section.locator('a').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
        expect(links).toEqual(kind === 'demo' ? [SITE_PATHS.LOG_DEMO, SITE_PATHS.LOG_VERIFIER] : [SITE_PATHS.LOG_VERIFIER]);
        if (kind === 'demo') {
          await section.getByRole('link', { name: "the log's page" }).click();
          expect(page.url()).toBe(`${siteUrl}${SITE_PATHS.LOG_DEMO}`);
          expect(await page.locator('h1').innerText()).toBe('Transparency log of the nightly figures');
        }
      } finally {
        await close();
      }
    });
  }
});

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

describe('what the page promises', () => {
  it('says in HTML and Markdown what the figures let anyone find out, beside the privacy promise', async () => {
    const html = await (await fetch(`${imported.cfg.siteUrl}/`, { headers: { accept: 'text/html' } })).text();
    expect(html).toContain(esc(PRIVACY));
    const markdown = await (await fetch(`${imported.cfg.siteUrl}/`, { headers: { accept: 'text/markdown' } })).text();
    expect(markdown).toContain(PRIVACY);
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

// Last in this file: it publishes an attestation on the demo stack.
describe('the latest independent audit: /api/stats, the page and /log/audits', () => {
  const NONE = 'No independent audit has been published yet.';
  const DEMO = 'Demo data, like the rest of this page: an audit shown here is of the demo log, not of the real account.';

  it('on fresh demo data: audit is null, the page says none is published yet and that it is demo data, and /log/audits lists none', async () => {
    const siteUrl = demo.cfg.siteUrl;
    const stats = await (await fetch(`${siteUrl}${SITE_PATHS.SITE_STATS}`)).json();
    expect(stats).toHaveProperty('audit', null);
    const direct = await (await fetch(`${demo.cfg.apiUrl}/rest/v1/rpc/landing_stats`, { headers: { apikey: demo.cfg.ANON_KEY } })).json();
    expect(direct).toHaveProperty('audit', null);
    // While the figures are demo data the real log's paths lead to the demo log's.
    const audits = await fetch(`${siteUrl}${SITE_PATHS.LOG_AUDITS}`);
    expect(audits.status).toBe(200);
    expect(new URL(audits.url).pathname).toBe(`${SITE_PATHS.LOG_DEMO}audits`);
    expect(audits.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await audits.json()).toEqual({ audits: [] });
    const { page, close } = await openWithoutJs(siteUrl);
    try {
      const section = page.locator('section[aria-labelledby="h-audit"]');
      expect(await section.locator('h2').innerText()).toBe('Independent audit');
      const paragraphs = await section.locator('p').allInnerTexts();
      expect(paragraphs.slice(0, 2)).toEqual([DEMO, NONE]);
      expect(paragraphs[2]).toMatch(/commitment to that night's reward transfers \(transfers in the entry\)/);
      expect(await section.locator('a').getAttribute('href')).toBe(`${SITE_PATHS.LOG_DEMO}audits`);
    } finally {
      await close();
    }
    // The imported rows have no log and so no audit: the page says so, without the demo note.
    const importedMarkdown = await (await fetch(`${imported.cfg.siteUrl}/`, { headers: { accept: 'text/markdown' } })).text();
    expect(importedMarkdown).toContain(`## Independent audit\n\n${NONE}\n`);
    expect(importedMarkdown).not.toContain(DEMO);
  });

  it('an attestation published through stats.publish_audit: on /api/stats and the API host, on the page (HTML and Markdown) and verbatim at /log/audits', async () => {
    const { siteUrl, apiUrl, ANON_KEY } = demo.cfg;
    const adminUrl = demo.db.adminUrl;
    const [head] = await query<{ size: number; root: string; origin: string }>(adminUrl,
      `select size::int as size, root, split_part(note, E'\n', 1) as origin from stats.log_checkpoint order by size desc limit 1`);
    const nights = (await query<{ date: string }>(adminUrl,
      `select distinct date::text as date from stats.log_entry where date is not null and idx < $1 order by date limit 3`, [head!.size])).map((r) => r.date);
    expect(nights).toHaveLength(3);
    const facts: AttestationFacts = { origin: head!.origin, size: head!.size, root: head!.root, nights, matched: 2, date: new Date().toISOString().slice(0, 10), auditor: 'auditor.example' };
    const note = await signedAttestation(facts);
    const [published] = await query<{ published_at: Date }>(adminUrl, 'select published_at from stats.publish_audit($1)', [note]);
    const publishedAt = published!.published_at;

    const stats = await eventually(async () => (await (await fetch(`${siteUrl}${SITE_PATHS.SITE_STATS}`)).json()) as { audit: Record<string, unknown> | null }, (s) => s.audit !== null, 60_000);
    expect(Object.keys(stats.audit!).sort()).toEqual(Object.keys(AuditSchema.shape).sort());
    expect(stats.audit).toMatchObject({ date: facts.date, auditor: 'auditor.example', nights_checked: 3, nights_matched: 2, checkpoint_size: head!.size });
    const at = stats.audit!.published_at as string;
    // Published at the database clock, said to the second.
    expect(Math.abs(Date.parse(at) - publishedAt.getTime())).toBeLessThan(1000);
    const direct = await eventually(async () => (await (await fetch(`${apiUrl}/rest/v1/rpc/landing_stats`, { headers: { apikey: ANON_KEY } })).json()) as { audit: unknown }, (s) => s.audit !== null, 60_000);
    expect(direct.audit).toEqual(stats.audit);

    // The attestation as its auditor signed it, with when it was published; the stats record named it, so the log serves it.
    const audits = await fetch(`${siteUrl}${SITE_PATHS.LOG_AUDITS}`);
    expect(await audits.json()).toEqual({ audits: [{ note, published_at: at }] });
    const etag = audits.headers.get('etag');
    expect(etag).toBeTruthy();
    const again = await fetch(`${siteUrl}${SITE_PATHS.LOG_DEMO}audits`, { headers: { 'if-none-match': etag! } });
    expect(again.status).toBe(304);

    const { page, close } = await openWithoutJs(siteUrl);
    try {
      const section = page.locator('section[aria-labelledby="h-audit"]');
      const paragraphs = await section.locator('p').allInnerTexts();
      expect(paragraphs.slice(0, 4)).toEqual([
        DEMO,
        `Audited on ${facts.date} by auditor.example: 2 of 3 nights drawn at random matched the reward transfers on the chain, checked against the log's checkpoint of ${head!.size} entries; published ${readable(at)}.`,
        '1 night did not match.',
        'An audit covers the nights it checked, not the figures as a whole.',
      ]);
      expect(await section.locator('time').getAttribute('datetime')).toBe(at);
      await section.screenshot({ path: path.join(OUT_DIR, 'audit-demo.png') });
    } finally {
      await close();
    }
    // axe runs as a script: a context that allows it.
    const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
    try {
      const page = await context.newPage();
      await page.goto(`${siteUrl}/`, { waitUntil: 'networkidle' });
      expect(await wcagViolations(page)).toEqual([]);
    } finally {
      await context.close();
    }
    const markdown = await (await fetch(`${siteUrl}${SITE_PATHS.INDEX_MD}`)).text();
    expect(markdown).toContain(`by auditor.example: 2 of 3 nights drawn at random matched the reward transfers on the chain`);
  }, 120_000);
});
