// What the landing page says, read in headless Chromium on two private stacks (demo data, real-looking
// imported rows): the figures /api/stats serves, a bar a night, the demo banner only for demo data,
// the account of the log, the privacy promise and the latest independent audit.
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wcagViolations } from '../support/axe.ts';
import type { TestStack } from '../support/stack.ts';
import { SITE_DOCUMENTS } from '../../contract/documents.ts';
import { SITE_PATHS } from '../../contract/paths.ts';
import { PRIVACY } from '../../contract/texts/rules.ts';
import { AuditSchema } from '../../contract/records.ts';
import { esc } from '../../edge/page/escape.ts';
import { query } from '../support/db.ts';
import { eventually } from '../support/edge.ts';
import { OUT_DIR, readable, startLandingStacks, stopLandingStacks, usd } from '../support/landing-stacks.ts';
import { signedAttestation, type AttestationFacts } from '../support/records.ts';

/** Every titled row of the documents table is linked from the page. */
const DISCOVERY = SITE_DOCUMENTS.filter((d) => d.title).map((d) => d.path);

let browser: Browser;
let demo: TestStack;
let imported: TestStack;

beforeAll(async () => {
  ({ demo, imported, browser } = await startLandingStacks());
}, 120_000);

afterAll(() => stopLandingStacks({ demo, imported, browser }));

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

describe('what the page promises', () => {
  it('says in HTML and Markdown what the figures let anyone find out, beside the privacy promise', async () => {
    const html = await (await fetch(`${imported.cfg.siteUrl}/`, { headers: { accept: 'text/html' } })).text();
    expect(html).toContain(esc(PRIVACY));
    const markdown = await (await fetch(`${imported.cfg.siteUrl}/`, { headers: { accept: 'text/markdown' } })).text();
    expect(markdown).toContain(PRIVACY);
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
