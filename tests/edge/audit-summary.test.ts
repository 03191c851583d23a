// What the landing page says of the independent audits, asked through app.request() with no port, from
// fixed records: none yet, the latest one (passed or failed, drawn or named), the audits opened with
// no result, demo data, the page's validator, and the agents' summary.
import { describe, expect, it } from 'vitest';
import { SITE_PATHS } from '../../contract/paths.ts';
import { cfg, htmlProblems, text, upstreamOf } from '../support/landing-summary.ts';
import { appOf, type FixedRecords } from './fixed-app.ts';
import { auditOf, fixedHistory, fixedLog, fixedStats } from '../support/records.ts';

describe("the page's account of the audits", () => {
  const NONE = [
    "No independent audit by an auditor the log's policy lists has been published yet.",
    "Each night's log entry carries a commitment to that night's reward transfers (transfers in the entry), so an auditor shown what a night commits to can check it against the chain without the wallet ever being published.",
  ];
  const DEMO = 'Demo data, like the rest of this page: an audit shown here is of the demo log, not of the real account.';
  const EVERY = 'Every attestation, passed or failed, verbatim and signed by its auditor: the published audits.';
  /** A drawn audit of three nights, the last of which did not match: it failed. */
  const audit = auditOf({
    origin: 'stats.example.org/log', logKey: '', size: 17, root: '', opening: 17, nonce: '0123456789abcdef0123456789abcdef', date: '2025-03-20', auditor: 'auditor.example',
    nights: [{ date: '2025-03-02', index: 1, pass: true }, { date: '2025-03-07', index: 6, pass: true }, { date: '2025-03-12', index: 11, pass: false }],
  }, '2025-03-20T07:00:00Z');

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
    expect(shown.html).toEqual([...NONE, EVERY]);
    expect(shown.links).toEqual([SITE_PATHS.LOG_AUDITS]);
    expect(shown.markdown).toEqual([
      NONE[0], NONE[1]!.replace('(transfers', '(`transfers`'),
      `Every attestation, passed or failed, verbatim and signed by its auditor: [the published audits](${cfg.siteUrl}${SITE_PATHS.LOG_AUDITS}).`,
    ]);
  });

  it('shows the latest audit: who, that its auditor is listed, whether it passed, how the nights were chosen, how many matched of how many, within which checkpoint, and what did not match', async () => {
    expect(audit).toMatchObject({ chosen: 'drawn', result: 'fail', nights_checked: 3, nights_matched: 2 });
    const shown = await auditShown(fixedStats('polymarket', audit));
    const facts = [
      "Audited on 2025-03-20 by auditor.example, an auditor the log's policy lists: FAILED. 2 of 3 nights drawn at random after the audit was opened in the log matched the reward transfers on the chain, judged within the log's checkpoint of 17 entries; published 20 Mar 2025, 07:00 UTC.",
      '1 night did not match.',
      'An audit covers the nights it checked, not the figures as a whole.',
    ];
    expect(shown.html).toEqual([...facts, EVERY]);
    expect(shown.times).toEqual([audit.published_at]);
    expect(shown.markdown.slice(0, 3)).toEqual(facts);
    // Every night of it matched: it passed, and no sentence about a mismatch.
    const passed = (await auditShown(fixedStats('polymarket', { ...audit, nights_matched: 3, result: 'pass' }))).html;
    expect(passed[0]).toMatch(/^Audited on 2025-03-20 by auditor\.example, an auditor the log's policy lists: passed\. 3 of 3 nights drawn at random /);
    expect(passed[1]).toBe('An audit covers the nights it checked, not the figures as a whole.');
  });

  it('says of nights the owner named that they were not drawn at random and say nothing of the others', async () => {
    const named = auditOf({
      origin: 'stats.example.org/log', logKey: '', size: 17, root: '', opening: 17, date: '2025-03-20', auditor: 'auditor.example',
      nights: [{ date: '2025-03-02', index: 1, pass: true }, { date: '2025-03-07', index: 6, pass: true }],
    }, '2025-03-20T07:00:00Z');
    expect(named).toMatchObject({ chosen: 'named', result: 'pass' });
    const shown = await auditShown(fixedStats('polymarket', named));
    expect(shown.html).toEqual([
      "Audited on 2025-03-20 by auditor.example, an auditor the log's policy lists: passed. 2 of 2 nights named by the owner, not drawn at random matched the reward transfers on the chain, judged within the log's checkpoint of 17 entries; published 20 Mar 2025, 07:00 UTC.",
      'Nights the owner names say nothing of the nights not named.',
      'An audit covers the nights it checked, not the figures as a whole.',
      EVERY,
    ]);
    expect(shown.markdown.slice(0, 3)).toEqual(shown.html.slice(0, 3));
  });

  it('counts the audits opened in the log with no published result, with or without an audit shown', async () => {
    const one = await auditShown({ ...fixedStats(), audits_unfinished: 1 });
    const unfinishedOne = '1 audit was opened in the log and has no published result yet: under way, or abandoned.';
    expect(one.html).toEqual([...NONE, unfinishedOne, EVERY]);
    expect(one.markdown).toContain(unfinishedOne);
    const two = await auditShown({ ...fixedStats('polymarket', audit), audits_unfinished: 2 });
    expect(two.html.slice(-2)).toEqual(['2 audits were opened in the log and have no published result yet: under way, or abandoned.', EVERY]);
    // None opened without a result: no such sentence.
    expect((await auditShown(fixedStats())).html.join('\n')).not.toMatch(/opened in the log and/);
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
    const clause = 'Unaudited as a whole: the latest independent audit (2025-03-20, by auditor.example) failed, 2 of 3 nights drawn at random after the audit was opened in the log matching the chain; not financial advice.';
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
