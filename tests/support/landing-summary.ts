// Shared by the tests of what the landing page says of the log and of the audits: one edge config,
// the fixed records with a given track record and log, the text of an HTML fragment, and html-validate.
import { HtmlValidate } from 'html-validate';
import type { HistoryRecord, LogRecord } from '../../contract/records.ts';
import type { FixedRecords } from '../edge/fixed-app.ts';
import { edgeConfig } from './edge.ts';
import { fixedHealth, fixedStats } from './records.ts';

export const cfg = edgeConfig({ siteUrl: 'https://stats.example.org', apiUpstream: 'http://api.invalid', anonKey: 'anon' });

/** The fixed stats and health, beside `history` and `log`. */
export const upstreamOf = (history: HistoryRecord, log: () => Promise<LogRecord>): FixedRecords => ({
  stats: async () => fixedStats(),
  history: async () => history,
  log,
  health: async () => ({ record: fixedHealth(), apiHostReachable: true }),
});

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
/** The text an element's inner HTML reads as. */
export const text = (html: string) => html.replace(/<[^>]*>/g, '').replace(/&(amp|lt|gt|quot|#39);/g, (e) => ENTITIES[e]!);

/** What html-validate's recommended rules find wrong in `html`, one line a message. */
export async function htmlProblems(html: string): Promise<string[]> {
  // The page writes its doctype in lower case, which HTML allows: a matter of style.
  const report = await new HtmlValidate({ extends: ['html-validate:recommended'], rules: { 'doctype-style': 'off' } }).validateString(html);
  return report.results.flatMap((r) => r.messages.map((m) => `${m.ruleId}: ${m.message}`));
}
