// What the landing page says of the transparency log, asked through app.request() with no port: the
// figures are built by the edge's own createFigures from fixed records (tests/support/records.ts) and
// their variants: no witness policy; a policy with nights witnessed on time, late and still awaiting
// the witnesses; a halted log; nights with no figure; a log that cannot be read. The HTML and the
// Markdown say the same sentences, the HTML is valid (html-validate), and the page's validator
// follows the log.
import { HtmlValidate } from 'html-validate';
import { describe, expect, it } from 'vitest';
import { addDays } from '../../contract/dates.ts';
import { SITE_PATHS } from '../../contract/paths.ts';
import type { HistoryRecord, LogRecord } from '../../contract/records.ts';
import { logSummary } from '../../contract/texts/witnessing.ts';
import { edgeConfig } from '../support/edge.ts';
import { appOf, type FixedRecords } from './fixed-app.ts';
import { auditOf, FIXED_WITNESSES, fixedHealth, fixedHistory, fixedLog, fixedStats, type FixtureVariant } from '../support/records.ts';

const cfg = edgeConfig({ siteUrl: 'https://stats.example.org', apiUpstream: 'http://api.invalid', anonKey: 'anon' });

const HALT_REASON = 'witness alice.example/witness has cosigned a tree of 18 entries, more than the 17 this log holds: the log is behind what a witness saw';
const NOT_LOGGED = '3 nights not logged yet; a night is logged once final, three days after its date.';
const NO_GAPS = 'No gaps: every date from 2025-03-01 to 2025-03-17 has a figure.';
const FURTHER_HTML = [
  '<p>The technical detail, from the signed checkpoints to a receipt per night, is on <a href="/log/">the log&#39;s page</a>.</p>',
  '<p>Check it all yourself: download <a href="/log/verify.mjs">the verifier</a> and run <code>node verify.mjs --site https://stats.example.org --state verify-state.json</code>.</p>',
];
const FURTHER_MARKDOWN = [
  "The technical detail, from the signed checkpoints to a receipt per night, is on [the log's page](https://stats.example.org/log/).",
  'Check it all yourself: download [the verifier](https://stats.example.org/log/verify.mjs) and run `node verify.mjs --site https://stats.example.org --state verify-state.json`.',
];

const upstreamOf = (history: HistoryRecord, log: () => Promise<LogRecord>): FixedRecords => ({
  stats: async () => fixedStats(),
  history: async () => history,
  log,
  health: async () => ({ record: fixedHealth(), apiHostReachable: true }),
});

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
/** The text an element's inner HTML reads as. */
const text = (html: string) => html.replace(/<[^>]*>/g, '').replace(/&(amp|lt|gt|quot|#39);/g, (e) => ENTITIES[e]!);

/** The page in both forms, and the facts each lists in its "Verify these figures" section. */
async function page(upstream: FixedRecords) {
  const app = appOf(cfg, upstream);
  const htmlRes = await app.request(SITE_PATHS.HOME);
  const markdownRes = await app.request(SITE_PATHS.INDEX_MD);
  expect([htmlRes.status, markdownRes.status]).toEqual([200, 200]);
  const html = await htmlRes.text();
  const markdown = await markdownRes.text();
  const section = /<section aria-labelledby="h-verify">([\s\S]*?)<\/section>/.exec(html)![1]!;
  const list = /<ul id="log-summary">([\s\S]*?)<\/ul>/.exec(section)![1]!;
  const mdSection = markdown.slice(markdown.indexOf('## Verify these figures'), markdown.indexOf('## For programs and agents'));
  return {
    html,
    htmlFacts: [...list.matchAll(/<li>([\s\S]*?)<\/li>/g)].map((m) => text(m[1]!)),
    /** The times the facts mark up for machines. */
    htmlTimes: [...list.matchAll(/<time datetime="([^"]*)">/g)].map((m) => m[1]!),
    htmlFurther: [...section.matchAll(/<p>[\s\S]*?<\/p>/g)].map((m) => m[0]),
    markdownFacts: mdSection.split('\n').filter((line) => line.startsWith('- ')).map((line) => line.slice(2)),
    markdownFurther: mdSection.split('\n').filter((line) => line && !line.startsWith('- ') && !line.startsWith('#')),
    etag: htmlRes.headers.get('etag')!,
  };
}

/** Says `facts` in both forms, then where to look further, in valid HTML; returns the page. */
async function expectFacts(upstream: FixedRecords, facts: string[], further = { html: FURTHER_HTML, markdown: FURTHER_MARKDOWN }): Promise<Awaited<ReturnType<typeof page>>> {
  const shown = await page(upstream);
  expect(shown.htmlFacts).toEqual(facts);
  expect(shown.markdownFacts).toEqual(facts);
  expect(shown.htmlFurther).toEqual(further.html);
  expect(shown.markdownFurther).toEqual(further.markdown);
  // The page writes its doctype in lower case, which HTML allows: a matter of style.
  const report = await new HtmlValidate({ extends: ['html-validate:recommended'], rules: { 'doctype-style': 'off' } }).validateString(shown.html);
  expect(report.results.flatMap((r) => r.messages.map((m) => `${m.ruleId}: ${m.message}`))).toEqual([]);
  return shown;
}

const variant = async (v: FixtureVariant) => ({ history: fixedHistory('polymarket', v), log: await fixedLog(cfg.siteUrl, v) });

describe("the page's account of the log", () => {
  it('without a policy: every logged night is not witnessed, and nobody else holds the checkpoints', async () => {
    const { history, log } = await variant({});
    expect(logSummary(history, log)).toEqual({
      logged: 17, notLogged: 3, witnessed: false, signed: true, onTime: 0, late: 0, awaiting: 0, witnesses: [], quorumAt: null, halted: null,
      span: { from: '2025-03-01', through: '2025-03-17' }, gaps: [],
    });
    await expectFacts(upstreamOf(history, async () => log), [
      '17 nights logged, 17 of them not witnessed: nobody else holds these checkpoints.',
      NOT_LOGGED,
      NO_GAPS,
    ]);
  });

  it('under a policy: the nights witnessed on time, logged late and awaiting the witnesses, by witness name, and when the quorum last cosigned', async () => {
    const { history, log } = await variant({ witnessed: true });
    const summary = logSummary(history, log);
    // The four oldest nights were first cosigned more than four days after their date: late, never on time.
    expect(history.nights.slice(0, 4).map((n) => n.witnessed_on_time)).toEqual([false, false, false, false]);
    expect(summary).toMatchObject({ logged: 17, witnessed: true, onTime: 12, late: 4, awaiting: 1, witnesses: [...FIXED_WITNESSES], quorumAt: '2025-03-19T01:00:00Z' });
    const shown = await expectFacts(upstreamOf(history, async () => log), [
      '17 nights logged: 12 witnessed on time, 4 logged late, 1 awaiting the witnesses.',
      NOT_LOGGED,
      'Cosigned by alice.example/witness and bob.example/witness; the quorum last cosigned at 19 Mar 2025, 01:00 UTC.',
      'Witnessed on time means the witnesses cosigned the night within four days of its date, so it cannot have been made up later; logged late means they cosigned it later (imported, or the log fell behind).',
      NO_GAPS,
    ]);
    expect(shown.htmlTimes).toEqual(['2025-03-19T01:00:00Z']);
  });

  it("gives agents the same facts beside the track record: MCP get_history (of the whole record, whatever the range) and A2A's history skill", async () => {
    const { history, log } = await variant({ witnessed: true });
    const app = appOf(cfg, upstreamOf(history, async () => log));
    const json = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const line = [
      'Transparency log (the whole record):',
      '17 nights logged: 12 witnessed on time, 4 logged late, 1 awaiting the witnesses.',
      NOT_LOGGED,
      'Cosigned by alice.example/witness and bob.example/witness; the quorum last cosigned at 2025-03-19T01:00:00Z.',
      'Witnessed on time means the witnesses cosigned the night within four days of its date, so it cannot have been made up later; logged late means they cosigned it later (imported, or the log fell behind).',
      NO_GAPS,
    ].join(' ');
    const tool = await (await app.request(SITE_PATHS.MCP, {
      method: 'POST', headers: json, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_history', arguments: { from: '2025-03-10' } } }),
    })).json();
    expect(tool.result.structuredContent.nights[0].date).toBe('2025-03-10');
    expect(tool.result.content[0].text.split('\n').at(-1)).toBe(line);
    const reply = await (await app.request(SITE_PATHS.A2A, {
      method: 'POST', headers: json,
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'message/send', params: { message: { kind: 'message', messageId: 'm1', role: 'user', parts: [{ kind: 'text', text: 'the whole track record' }] } } }),
    })).json();
    expect(reply.result.parts[0].text.split('\n').at(-1)).toBe(line);
  });

  it('counts no imported night as on time, and a later round that met the quorum as its latest cosigning', async () => {
    const { history, log } = await variant({ witnessed: true });
    // Imported a year late: the record says false, or null while the round is under way; neither is on time.
    const imported = { ...history, nights: history.nights.map((n, i) => (n.log_index === null ? n : { ...n, witnessed_at: i % 2 ? '2026-03-20T00:00:00Z' : null, witnessed_on_time: i % 2 ? false : null })) };
    const round = { ...log.witnessing!, at: '2025-03-20T05:00:00Z', cosigned: [...FIXED_WITNESSES], quorum_met: true };
    expect(logSummary(imported, { ...log, witnessing: round })).toMatchObject({ logged: 17, onTime: 0, late: 8, awaiting: 9, quorumAt: '2025-03-20T05:00:00Z' });
  });

  it('says first that a halted log is halted, and why', async () => {
    const { history, log } = await variant({});
    const halted = { ...log, halted: { at: '2025-03-19T00:05:00Z', reason: HALT_REASON } };
    expect(logSummary(history, halted).halted).toEqual(halted.halted);
    const shown = await expectFacts(upstreamOf(history, async () => halted), [
      `The log is halted since 19 Mar 2025, 00:05 UTC: ${HALT_REASON}.`,
      '17 nights logged, 17 of them not witnessed: nobody else holds these checkpoints.',
      NOT_LOGGED,
      NO_GAPS,
    ]);
    expect(shown.htmlTimes).toEqual(['2025-03-19T00:05:00Z']);
  });

  it('names every date between since_date and the last logged night with no figure, runs of them as spans', async () => {
    const gaps = { gaps: [4, 9, 10, 11] };
    const { history, log } = await variant(gaps);
    expect(logSummary(history, log)).toMatchObject({ logged: 13, notLogged: 3, gaps: ['2025-03-05', '2025-03-10', '2025-03-11', '2025-03-12'] });
    await expectFacts(upstreamOf(history, async () => log), [
      '13 nights logged, 13 of them not witnessed: nobody else holds these checkpoints.',
      NOT_LOGGED,
      'Dates with no figure (gaps) between 2025-03-01 and 2025-03-17: 2025-03-05 and 2025-03-10 to 2025-03-12.',
    ]);
    // A gap among the nights not logged yet lies beyond the last logged night: not named yet.
    expect(logSummary(fixedHistory('polymarket', { gaps: [18] }), log).gaps).toEqual([]);
  });

  it('on a real-sized record with 100+ gaps gives their count and the latest few, and the log\'s page lists them all', async () => {
    const { history, log } = await variant({});
    // 361 dates from 2024-03-01, every third one without a figure: 120 gaps, none next to another.
    const dates = Array.from({ length: 361 }, (_, i) => addDays('2024-03-01', i));
    const template = history.nights[0]!;
    const nights = dates.filter((_, i) => i % 3 !== 2).map((date, index) => ({ ...template, date, log_index: index }));
    const gapped = { ...history, since_date: dates[0]!, nights };
    const gaps = dates.filter((_, i) => i % 3 === 2);
    expect(gaps.length).toBe(120);
    const upstream = upstreamOf(gapped, async () => log);
    const shown = await page(upstream);
    const sentence = (link: string) => `120 dates with no figure (gaps) between 2024-03-01 and ${dates.at(-1)}, the latest ${gaps.at(-3)}, ${gaps.at(-2)} and ${gaps.at(-1)}; ${link}.`;
    expect(shown.htmlFacts).toEqual(['241 nights logged, 241 of them not witnessed: nobody else holds these checkpoints.', sentence("the log's page lists them all")]);
    expect(shown.markdownFacts).toEqual(['241 nights logged, 241 of them not witnessed: nobody else holds these checkpoints.', sentence(`[the log's page lists them all](${cfg.siteUrl}/log/#gaps)`)]);
    expect(shown.html).toContain('<a href="/log/#gaps">the log&#39;s page lists them all</a>');
    const logPage = await (await appOf(cfg, upstream).request(SITE_PATHS.LOG)).text();
    const listed = /<h2 id="gaps">Dates with no figure<\/h2>\n<p>([^<]*)<\/p>/.exec(logPage)?.[1];
    expect(listed).toBe(`120 dates between 2024-03-01 and ${dates.at(-1)} have no figure: ${gaps.slice(0, -1).join(', ')} and ${gaps.at(-1)}.`);
  });

  it('before the first checkpoint: no night logged, and no link to a log page that does not exist yet', async () => {
    const { history, log } = await variant({});
    const unlogged = { ...history, nights: history.nights.map((n) => ({ ...n, log_index: null })) };
    const empty = { ...log, entries: [], checkpoints: [], vkey: null };
    expect(logSummary(unlogged, empty)).toMatchObject({ logged: 0, notLogged: 20, signed: false, span: null, gaps: [] });
    const notYet = "The log's page, with the technical detail, opens once its first checkpoint is signed.";
    await expectFacts(upstreamOf(unlogged, async () => empty), [
      'No night logged yet; the log is not witnessed: nobody else would hold its checkpoints.',
      '20 nights not logged yet; a night is logged once final, three days after its date.',
    ], { html: [`<p>${notYet.replace("'", '&#39;')}</p>`, FURTHER_HTML[1]!], markdown: [notYet, FURTHER_MARKDOWN[1]!] });
  });

  it('still shows the page when the log cannot be read, saying so, and when neither can the track record', async () => {
    const unreadable = () => Promise.reject(new Error('the API host did not answer'));
    await expectFacts(upstreamOf(fixedHistory(), unreadable), [
      '17 nights logged; whether witnesses cosigned them could not be read right now.',
      NOT_LOGGED,
      NO_GAPS,
    ]);
    await expectFacts({ ...upstreamOf(fixedHistory(), unreadable), history: unreadable }, ['The track record could not be read right now.']);
  });

  it("changes the page's validator when the log changes, and only then", async () => {
    const history = fixedHistory();
    const log = await fixedLog(cfg.siteUrl);
    const first = await page(upstreamOf(history, async () => log));
    expect((await page(upstreamOf(history, async () => log))).etag).toBe(first.etag);
    const halted = await page(upstreamOf(history, async () => ({ ...log, halted: { at: '2025-03-19T00:05:00Z', reason: HALT_REASON } })));
    const unread = await page(upstreamOf(history, () => Promise.reject(new Error('the API host did not answer'))));
    expect(new Set([first.etag, halted.etag, unread.etag]).size).toBe(3);
  });
});

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
    const report = await new HtmlValidate({ extends: ['html-validate:recommended'], rules: { 'doctype-style': 'off' } }).validateString(html);
    expect(report.results.flatMap((r) => r.messages.map((m) => `${m.ruleId}: ${m.message}`))).toEqual([]);
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
