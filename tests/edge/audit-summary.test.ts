// What the landing page says of the independent audits, asked through app.request() with no port, from
// fixed records: none yet, the latest one, demo data, the page's validator, and the agents' summary.
import { describe, expect, it } from 'vitest';
import { SITE_PATHS } from '../../contract/paths.ts';
import { cfg, htmlProblems, text, upstreamOf } from '../support/landing-summary.ts';
import { appOf, type FixedRecords } from './fixed-app.ts';
import { auditOf, fixedHistory, fixedLog, fixedStats } from '../support/records.ts';

describe("the page's account of the audits", () => {
  const NONE = [
    'No independent audit has been published yet.',
    "Each night's log entry carries a commitment to that night's reward transfers (transfers in the entry), so an auditor shown what a night commits to can check it against the chain without the wallet ever being published.",
  ];
  const DEMO = 'Demo data, like the rest of this page: an audit shown here is of the demo log, not of the real account.';
  const audit = auditOf({ origin: 'stats.example.org/log', size: 17, root: '', nights: ['2025-03-02', '2025-03-07', '2025-03-12'], matched: 2, date: '2025-03-20', auditor: 'auditor.example' }, '2025-03-20T07:00:00Z');

  /** The section's paragraphs in both forms, as text (links in Markdown's form), its links, and the page's validator. */
  async function auditShown(stats: Awaited<ReturnType<FixedRecords['stats']>>) {
    const app = appOf(cfg, { ...upstreamOf(fixedHistory(), async () => fixedLog(cfg.siteUrl)), stats: async () => stats });
    const htmlRes = await app.request(SITE_PATHS.HOME);
    const html = await htmlRes.text();
    const markdown = await (await app.request(SITE_PATHS.INDEX_MD)).text();
    const section = /<section aria-labelledby="h-audit" id="audit"><h2 id="h-audit">Independent audit<\/h2>([\s\S]*?)<\/section>/.exec(html)![1]!;
    const md = markdown.slice(markdown.indexOf('## Independent audit\n'), markdown.indexOf('## Verify these figures'));
    expect(await htmlProblems(html)).toEqual([]);
    return {
      html: [...section.matchAll(/<p>([\s\S]*?)<\/p>/g)].map((m) => text(m[1]!)),
      links: [...section.matchAll(/<a href="([^"]*)">/g)].map((m) => m[1]!),
      times: [...section.matchAll(/<time datetime="([^"]*)">/g)].map((m) => m[1]!),
      markdown: md.split('\n').slice(1).filter(Boolean),
      etag: htmlRes.headers.get('etag')!,
    };
  }

  it('says plainly that none is published yet, and that the nights carry commitments an auditor can check against the chain', async () => {
    const shown = await auditShown(fixedStats());
    expect(shown.html).toEqual([...NONE, 'Every attestation, verbatim and signed by its auditor: the published audits.']);
    expect(shown.links).toEqual([SITE_PATHS.LOG_AUDITS]);
    expect(shown.markdown).toEqual([
      NONE[0], NONE[1]!.replace('(transfers', '(`transfers`'),
      `Every attestation, verbatim and signed by its auditor: [the published audits](${cfg.siteUrl}${SITE_PATHS.LOG_AUDITS}).`,
    ]);
  });

  it('shows the latest audit: who, when, how many random nights matched of how many, against which checkpoint, and what did not match', async () => {
    const shown = await auditShown(fixedStats('polymarket', audit));
    const facts = [
      "Audited on 2025-03-20 by auditor.example: 2 of 3 nights drawn at random matched the reward transfers on the chain, checked against the log's checkpoint of 17 entries; published 20 Mar 2025, 07:00 UTC.",
      '1 night did not match.',
      'An audit covers the nights it checked, not the figures as a whole.',
    ];
    expect(shown.html).toEqual([...facts, 'Every attestation, verbatim and signed by its auditor: the published audits.']);
    expect(shown.times).toEqual([audit.published_at]);
    expect(shown.markdown.slice(0, 3)).toEqual(facts);
    // Every node of it matched: no sentence about a mismatch.
    expect((await auditShown(fixedStats('polymarket', { ...audit, nights_matched: 3 }))).html[1]).toBe('An audit covers the nights it checked, not the figures as a whole.');
  });

  it('says it is demo data on demo data, and links the demo log\'s attestations', async () => {
    for (const a of [null, audit]) {
      const shown = await auditShown(fixedStats('demo', a));
      expect(shown.html[0]).toBe(DEMO);
      expect(shown.markdown[0]).toBe(DEMO);
      expect(shown.links).toEqual([`${SITE_PATHS.LOG_DEMO}audits`]);
    }
  });

  it("changes the page's validator when an audit is published", async () => {
    expect((await auditShown(fixedStats('polymarket', audit))).etag).not.toBe((await auditShown(fixedStats())).etag);
  });

  it('gives agents the audit in one clause of the stats summary: MCP get_stats and A2A', async () => {
    const app = appOf(cfg, { ...upstreamOf(fixedHistory(), async () => fixedLog(cfg.siteUrl)), stats: async () => fixedStats('polymarket', audit) });
    const json = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const clause = 'Unaudited as a whole: the latest independent audit (2025-03-20, by auditor.example) matched 2 of 3 nights drawn at random against the chain; not financial advice.';
    const tool = await (await app.request(SITE_PATHS.MCP, {
      method: 'POST', headers: json, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_stats', arguments: {} } }),
    })).json();
    expect(tool.result.structuredContent.audit).toEqual(audit);
    expect(tool.result.content[0].text.split('\n').at(-1)!.startsWith(`${clause} `)).toBe(true);
    const reply = await (await app.request(SITE_PATHS.A2A, {
      method: 'POST', headers: json,
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'message/send', params: { message: { kind: 'message', messageId: 'm1', role: 'user', parts: [{ kind: 'text', text: 'latest stats' }] } } }),
    })).json();
    expect(reply.result.parts[0].text).toContain(clause);
    const none = appOf(cfg, upstreamOf(fixedHistory(), async () => fixedLog(cfg.siteUrl)));
    const noneTool = await (await none.request(SITE_PATHS.MCP, {
      method: 'POST', headers: json, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_stats', arguments: {} } }),
    })).json();
    expect(noneTool.result.content[0].text).toContain('Unaudited: no independent audit published yet; not financial advice.');
  });
});
