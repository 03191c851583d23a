// What the transparency log shows about the track record, in words a person takes in at a glance:
// how many nights are logged, how many the witnesses cosigned in time and how many late, by which
// witnesses and when the quorum last cosigned, whether the log has stopped, and the dates with no
// figure (a few, or their count and the latest, the log's page listing them all). The sentences carry their links, commands and times as parts, which each surface writes its way.
import { addDays, datesMissing } from '../dates.ts';
import { logPrefix, SITE_PATHS, type Origins } from '../paths.ts';
import type { HistoryRecord, LogRecord } from '../records.ts';
import { count, listed } from './format.ts';
import { verifyCommand } from './rules.ts';

export interface LogSummary {
  /** Nights of the record that are in the log (final). */
  logged: number;
  /** Nights of the record not in the log yet. */
  notLogged: number;
  /** Whether the log works under a witness policy; undefined when the log could not be read. */
  witnessed: boolean | undefined;
  /** Whether the log has a signed checkpoint (and so a page); undefined when it could not be read. */
  signed: boolean | undefined;
  /** Of the logged nights: those the record says were witnessed on time (never an imported one), */
  onTime: number;
  /** those it says were not, */
  late: number;
  /** and, under a policy, those whose time to be witnessed has not run out. */
  awaiting: number;
  /** Every witness whose cosignature the log holds, by name. */
  witnesses: string[];
  /** The latest time the log knows the quorum cosigned; null before it has. */
  quorumAt: string | null;
  halted: { at: string; reason: string } | null;
  /** since_date through the last logged night, the span gaps are counted in; null before a night is logged. */
  span: { from: string; through: string } | null;
  /** The dates of the span with no night. */
  gaps: string[];
}

/** The key name a cosignature line ("— <name> <base64>") carries. */
export const signerOf = (line: string) => line.split(' ')[1] ?? '';

export function logSummary(history: HistoryRecord, log: LogRecord | undefined): LogSummary {
  const logged = history.nights.filter((n) => n.log_index !== null);
  const through = logged.at(-1)?.date;
  const span = history.since_date && through ? { from: history.since_date, through } : null;
  const witnessed = log === undefined ? undefined : log.policy !== null;
  const lines = log ? [...log.checkpoints.flatMap((c) => c.cosignatures), ...log.cosignatures] : [];
  const quorumTimes = [
    ...(log?.checkpoints.flatMap((c) => (c.quorum_at ? [c.quorum_at] : [])) ?? []),
    ...(log?.witnessing?.quorum_met ? [log.witnessing.at] : []),
  ];
  return {
    logged: logged.length,
    notLogged: history.nights.length - logged.length,
    witnessed,
    signed: log && log.checkpoints.length > 0,
    onTime: logged.filter((n) => n.witnessed_on_time === true).length,
    late: logged.filter((n) => n.witnessed_on_time === false).length,
    awaiting: witnessed ? logged.filter((n) => n.witnessed_on_time === null).length : 0,
    witnesses: [...new Set(lines.map(signerOf))].sort(),
    quorumAt: quorumTimes.reduce<string | null>((latest, at) => (latest === null || Date.parse(at) > Date.parse(latest) ? at : latest), null),
    halted: log?.halted ?? null,
    span,
    gaps: span ? datesMissing(history.nights.map((n) => n.date), span.from, span.through) : [],
  };
}

/** A part of a sentence: its words, a link to a path of the site, a command to type, or a time (ISO 8601). */
export type Part = string | { text: string; path: string } | { code: string } | { time: string };

const nights = (n: number) => `${count(n)} ${n === 1 ? 'night' : 'nights'}`;

/** Runs of consecutive dates as "a to b", single dates as they are. */
function runs(dates: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < dates.length; i++) {
    let j = i;
    while (j + 1 < dates.length && dates[j + 1] === addDays(dates[j]!, 1)) j++;
    out.push(j === i ? dates[i]! : `${dates[i]} to ${dates[j]}`);
    i = j;
  }
  return out;
}

function countsSentence(s: LogSummary): string {
  if (s.logged === 0) return `No night logged yet${s.witnessed === false ? '; the log is not witnessed: nobody else would hold its checkpoints' : ''}.`;
  const logged = `${nights(s.logged)} logged`;
  if (s.witnessed === undefined) return `${logged}; whether witnesses cosigned them could not be read right now.`;
  if (!s.witnessed) return `${logged}, ${count(s.logged)} of them not witnessed: nobody else holds these checkpoints.`;
  return `${logged}: ${count(s.onTime)} witnessed on time, ${count(s.late)} logged late${s.awaiting > 0 ? `, ${count(s.awaiting)} awaiting the witnesses` : ''}.`;
}

const ON_TIME_MEANS =
  'Witnessed on time means the witnesses cosigned the night within four days of its date, so it cannot have been made up later; logged late means they cosigned it later (imported, or the log fell behind).';

function witnessesSentence(s: LogSummary): Part[] {
  if (s.witnesses.length === 0) return ['No witness has cosigned yet.'];
  const cosigned = `Cosigned by ${listed(s.witnesses)}; `;
  return s.quorumAt ? [`${cosigned}the quorum last cosigned at `, { time: s.quorumAt }, '.'] : [`${cosigned}the quorum has not cosigned yet.`];
}

/** Runs of gaps a sentence lists whole; past that it gives the count and the latest few, and the log's page lists them all. */
const GAP_RUNS_LISTED = 5;
const GAP_RUNS_LATEST = 3;
/** Where the log's page lists every gap. */
export const GAPS_ANCHOR = 'gaps';

const gapDates = (n: number) => `${count(n)} ${n === 1 ? 'date' : 'dates'}`;

function gapsSentence(gaps: readonly string[], span: { from: string; through: string }, logPage: string): Part[] {
  if (gaps.length === 0) return [`No gaps: every date from ${span.from} to ${span.through} has a figure.`];
  const all = runs(gaps);
  if (all.length <= GAP_RUNS_LISTED) return [`Dates with no figure (gaps) between ${span.from} and ${span.through}: ${listed(all)}.`];
  return [
    `${gapDates(gaps.length)} with no figure (gaps) between ${span.from} and ${span.through}, the latest ${listed(all.slice(-GAP_RUNS_LATEST))}; `,
    { text: "the log's page lists them all", path: `${logPage}#${GAPS_ANCHOR}` }, '.',
  ];
}

/** Every gap of the span, for the log's page; undefined when there is none. */
export function allGaps(s: LogSummary): string | undefined {
  return s.span && s.gaps.length > 0 ? `${gapDates(s.gaps.length)} between ${s.span.from} and ${s.span.through} have no figure: ${listed(runs(s.gaps))}.` : undefined;
}

/** A part as plain text: a link by its words and its path. */
const plain = (part: Part) => (typeof part === 'string' ? part : 'time' in part ? part.time : 'code' in part ? part.code : `${part.text} (${part.path})`);

/** The account's facts in one line of plain text, for the agents' summaries of the track record. */
export function logFactsText(history: HistoryRecord, log: LogRecord | undefined): string {
  const demo = log ? log.demo === true : history.data_source === 'demo';
  return `Transparency log (the whole record): ${logFacts(logSummary(history, log), logPrefix(demo)).map((parts) => parts.map(plain).join('')).join(' ')}`;
}

/** What the log shows, a sentence each; `logPage`: the path of the log's page. */
function logFacts(s: LogSummary | undefined, logPage: string): Part[][] {
  if (!s) return [['The track record could not be read right now.']];
  return [
    ...(s.halted ? [['The log is halted since ', { time: s.halted.at }, `: ${s.halted.reason}.`]] : []),
    [countsSentence(s)],
    ...(s.notLogged > 0 ? [[`${nights(s.notLogged)} not logged yet; a night is logged once final, three days after its date.`]] : []),
    ...(s.witnessed ? [witnessesSentence(s), [ON_TIME_MEANS]] : []),
    ...(s.span ? [gapsSentence(s.gaps, s.span, logPage)] : []),
  ];
}

/** The landing page's account of the log: the facts, then where to look further. */
export function logSentences(s: LogSummary | undefined, demo: boolean, cfg: Pick<Origins, 'siteUrl'>): { facts: Part[][]; further: Part[][] } {
  return {
    facts: logFacts(s, logPrefix(demo)),
    further: [
      s?.signed === false
        ? ["The log's page, with the technical detail, opens once its first checkpoint is signed."]
        : ['The technical detail, from the signed checkpoints to a receipt per night, is on ', { text: "the log's page", path: logPrefix(demo) }, '.'],
      ['Check it all yourself: download ', { text: 'the verifier', path: SITE_PATHS.LOG_VERIFIER }, ' and run ', { code: verifyCommand(cfg.siteUrl) }, '.'],
    ],
  };
}
