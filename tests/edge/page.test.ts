// What the landing page says, read in headless Chromium on two private stacks (demo data, real-looking
// imported rows): the figures /api/stats serves, a bar a night, the demo banner only for demo data,
// the account of the log, the privacy promise and the latest independent audit (by an auditor the
// log's policy lists).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wcagViolations } from '../support/axe.ts';
import type { TestStack } from '../support/stack.ts';
import { SITE_DOCUMENTS } from '../../contract/documents.ts';
import { logIdentity, SITE_PATHS } from '../../contract/paths.ts';
import { parseVerifierKey } from '../../contract/tlog/vkey.ts';
import { PRIVACY } from '../../contract/texts/rules.ts';
import { AuditSchema } from '../../contract/records.ts';
import { esc } from '../../edge/page/escape.ts';
import { query } from '../support/db.ts';
import { eventually } from '../support/edge.ts';
import { OUT_DIR, readable, startLandingStacks, stopLandingStacks, usd } from '../support/landing-stacks.ts';
import { signedAttestation, type AttestationFacts } from '../support/records.ts';
import { cliEnv, runCli } from '../support/writer.ts';
import { newAuditorKey, type AuditorKey } from '../../contract/audit/attestation.ts';
import { nonceSha256 } from '../../contract/audit/opening.ts';
import { drawNights, sampleCandidates } from '../../contract/audit/sample.ts';

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

// Last in this file: it opens audits and publishes attestations on the demo stack.
describe('the latest independent audit: /api/stats, the page and /log/audits', () => {
  const NONE = "No independent audit by an auditor the log's policy lists has been published yet.";
  const DEMO = 'Demo data, like the rest of this page: an audit shown here is of the demo log, not of the real account.';

  it('on fresh demo data: audit is null, none is opened, the page says none is published yet and that it is demo data, and /log/audits lists none', async () => {
    const siteUrl = demo.cfg.siteUrl;
    const stats = await (await fetch(`${siteUrl}${SITE_PATHS.SITE_STATS}`)).json();
    expect(stats).toHaveProperty('audit', null);
    expect(stats).toHaveProperty('audits_unfinished', 0);
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

  it('audits opened with stats.open_audit and signed into the log by the writer, then attested: a failed one by an auditor the policy lists on /api/stats, the API host and the page; one by a key it does not list only at /log/audits', async () => {
    const { siteUrl, apiUrl, ANON_KEY } = demo.cfg;
    const adminUrl = demo.db.adminUrl;
    const [head] = await query<{ size: number; root: string; origin: string; vkey: string }>(adminUrl,
      `select size::int as size, root, split_part(note, E'\n', 1) as origin, vkey from stats.log_checkpoint order by size desc limit 1`);
    const auditor = await newAuditorKey('auditor.example');
    const stranger = await newAuditorKey('stranger.example');
    // The owner's policy lists the one auditor (and no witness); the writer records it as it signs.
    const real = await logIdentity(demo.cfg, (await parseVerifierKey(head!.vkey)).publicKey, false);
    const policy = `log ${real.vkey}\nquorum none\nauditor ${auditor.verifierKey}\n`;
    const policyDir = mkdtempSync(path.join(tmpdir(), 'audit-policy-'));
    writeFileSync(path.join(policyDir, 'log.policy'), policy);
    // Each auditor hands the owner its nonce's SHA-256; the owner opens the audits, and the writer signs them into the log.
    const nonces = [randomBytes(16).toString('hex'), randomBytes(16).toString('hex')] as const;
    const open = async (key: string, nonce: string, k: number) => (await query<{ idx: number }>(adminUrl,
      'select stats.open_audit($1, $2, $3::bigint, $4::integer, null)::int as idx', [key, nonceSha256(nonce), head!.size, k]))[0]!.idx;
    const openings = [await open(auditor.verifierKey, nonces[0], 3), await open(stranger.verifierKey, nonces[1], 1)] as const;
    const signed = await runCli(['sign'], cliEnv(demo, { ENV_FILE: '/dev/null', LOG_POLICY: path.join(policyDir, 'log.policy') }));
    rmSync(policyDir, { recursive: true });
    expect(signed.code, signed.stdout + signed.stderr).toBe(0);
    expect(await query(adminUrl, 'select policy from stats.log_policy order by recorded_at desc limit 1')).toEqual([{ policy }]);
    const [{ size }] = await query<{ size: number }>(adminUrl, 'select max(size)::int as size from stats.log_checkpoint') as [{ size: number }];
    expect(size).toBeGreaterThan(openings[1]);
    const opened = await eventually(async () => (await (await fetch(`${siteUrl}${SITE_PATHS.SITE_STATS}`)).json()) as { audit: unknown; audits_unfinished: number }, (s) => s.audits_unfinished === 2, 60_000);
    expect(opened.audit).toBeNull();

    // The nights each draws, by rule v2, from the checkpoint's root and its nonce; each at its latest entry within the checkpoint.
    const entries = await query<{ index: number; date: string | null; kind: string | null }>(adminUrl,
      `select idx::int as index, date::text as date, entry::jsonb ->> 'kind' as kind from stats.log_entry where idx < $1 order by idx`, [head!.size]);
    const latest = (date: string) => entries.filter((e) => e.date === date).at(-1)!.index;
    const candidates = sampleCandidates(entries.map((e) => ({ ...e, kind: e.kind ?? undefined })));
    const drawn = (nonce: string, k: number) => drawNights(Buffer.from(head!.root, 'base64'), nonce, candidates, k);
    const facts = (key: AuditorKey, i: 0 | 1, k: number, failing: boolean): AttestationFacts => ({
      origin: head!.origin, logKey: head!.vkey, size: head!.size, root: head!.root, opening: openings[i], nonce: nonces[i],
      nights: drawn(nonces[i], k).map((date, n) => ({ date, index: latest(date), pass: !(failing && n === k - 1) })),
      date: new Date().toISOString().slice(0, 10), auditor: key.name,
    });
    // The listed auditor's audit of three nights failed: the last did not match.
    const failed = facts(auditor, 0, 3, true);
    expect(failed.nights).toHaveLength(3);
    const note = await signedAttestation(failed, auditor);
    const [published] = await query<{ published_at: Date }>(adminUrl, 'select published_at from stats.publish_audit($1)', [note]);
    const publishedAt = published!.published_at;

    const stats = await eventually(async () => (await (await fetch(`${siteUrl}${SITE_PATHS.SITE_STATS}`)).json()) as { audit: Record<string, unknown> | null; audits_unfinished: number }, (s) => s.audit !== null, 60_000);
    expect(Object.keys(stats.audit!).sort()).toEqual(Object.keys(AuditSchema.shape).sort());
    expect(stats.audit).toMatchObject({ date: failed.date, auditor: 'auditor.example', chosen: 'drawn', result: 'fail', nights_checked: 3, nights_matched: 2, checkpoint_size: head!.size });
    expect(stats.audits_unfinished).toBe(1);
    const at = stats.audit!.published_at as string;
    // Published at the database clock, said to the second.
    expect(Math.abs(Date.parse(at) - publishedAt.getTime())).toBeLessThan(1000);
    const direct = await eventually(async () => (await (await fetch(`${apiUrl}/rest/v1/rpc/landing_stats`, { headers: { apikey: ANON_KEY } })).json()) as { audit: unknown }, (s) => s.audit !== null, 60_000);
    expect(direct.audit).toEqual(stats.audit);

    // The attestation as its auditor signed it, with when it was published; the stats record named it, so the log serves it.
    const audits = await fetch(`${siteUrl}${SITE_PATHS.LOG_AUDITS}`);
    expect(await audits.json()).toEqual({ audits: [{ note, published_at: at, listed: true }] });
    const etag = audits.headers.get('etag');
    expect(etag).toBeTruthy();
    const again = await fetch(`${siteUrl}${SITE_PATHS.LOG_DEMO}audits`, { headers: { 'if-none-match': etag! } });
    expect(again.status).toBe(304);

    const { page, close } = await openWithoutJs(siteUrl);
    try {
      const section = page.locator('section[aria-labelledby="h-audit"]');
      const paragraphs = await section.locator('p').allInnerTexts();
      expect(paragraphs.slice(0, 5)).toEqual([
        DEMO,
        `Audited on ${failed.date} by auditor.example, an auditor the log's policy lists: FAILED. 2 of 3 nights drawn at random after the audit was opened in the log matched the reward transfers on the chain, judged within the log's checkpoint of ${head!.size} entries; published ${readable(at)}.`,
        '1 night did not match.',
        'An audit covers the nights it checked, not the figures as a whole.',
        '1 audit was opened in the log and has no published result yet: under way, or abandoned.',
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
    expect(markdown).toContain('by auditor.example, an auditor the log\'s policy lists: FAILED. 2 of 3 nights drawn at random after the audit was opened in the log matched the reward transfers on the chain');

    // A passing attestation by a key the policy does not list, published later: served, marked unlisted, never the audit.
    const strangers = await signedAttestation(facts(stranger, 1, 1, false), stranger);
    await query(adminUrl, 'select stats.publish_audit($1)', [strangers]);
    const after = await eventually(async () => (await (await fetch(`${siteUrl}${SITE_PATHS.SITE_STATS}`)).json()) as { audit: unknown; audits_unfinished: number }, (s) => s.audits_unfinished === 0, 60_000);
    expect(after.audit).toEqual(stats.audit);
    const served = await eventually(async () => (await (await fetch(`${siteUrl}${SITE_PATHS.LOG_AUDITS}`)).json()) as { audits: { note: string; listed: boolean }[] }, (a) => a.audits.length === 2, 30_000);
    expect(served.audits.map(({ note, listed }) => ({ note, listed }))).toEqual([{ note, listed: true }, { note: strangers, listed: false }]);
    expect((await (await fetch(`${siteUrl}${SITE_PATHS.INDEX_MD}`)).text())).not.toContain('stranger.example');
  }, 180_000);
});
