// What the landing page says of the transparency log, asked through app.request() with no port, from
// fixed records and their variants (witnessed, late, halted, gaps, unreadable): the same sentences in
// HTML and Markdown, valid HTML, and a validator that follows the log.
import { describe, expect, it } from 'vitest';
import { addDays } from '../../contract/dates.ts';
import { SITE_PATHS } from '../../contract/paths.ts';
import { logSummary } from '../../contract/texts/witnessing.ts';
import { cfg, htmlProblems, text, upstreamOf } from '../support/landing-summary.ts';
import { appOf, type FixedRecords } from './fixed-app.ts';
import { FIXED_WITNESSES, fixedHistory, fixedLog, type FixtureVariant } from '../support/records.ts';

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
  expect(await htmlProblems(shown.html)).toEqual([]);
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
