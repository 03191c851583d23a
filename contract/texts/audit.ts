// What the surfaces say of the independent audits, in words a person takes in at a glance: who
// audited, when, how the nights were chosen, whether it passed, how many nights matched the chain out
// of how many, against which checkpoint, how many audits opened have no result,
// and where every attestation is; or, before any, that none is published yet and what an auditor
// would check. The sentences carry their links, code and times as parts (./witnessing.ts), which
// each surface writes its way.
import { logPrefix, SITE_PATHS } from '../paths.ts';
import type { Audit } from '../records.ts';
import { count } from './format.ts';
import type { Part } from './witnessing.ts';

const nights = (n: number) => `${count(n)} ${n === 1 ? 'night' : 'nights'}`;

/** Where a log's audit attestations are served: the real log's under its prefix, the demo log's under the demo prefix. */
export function auditsPath(demo: boolean): string {
  return logPrefix(demo) + SITE_PATHS.LOG_AUDITS.slice(SITE_PATHS.LOG.length);
}

/** How many attestations a log holds, as its page lists them. */
export function auditsListed(n: number): string {
  return n === 0 ? 'none published yet' : `${count(n)} ${n === 1 ? 'attestation' : 'attestations'}, each signed by its auditor's key`;
}

/** What an audit checks, said where none is published yet. */
const WHAT_IS_CHECKED: Part[] = [
  "Each night's log entry carries a commitment to that night's reward transfers (", { code: 'transfers' },
  ' in the entry), so an auditor shown what a night commits to can check it against the chain without the wallet ever being published.',
];

/** How the audit's nights were chosen, in words. */
const chosenWords = (a: Audit): string => (a.chosen === 'drawn'
  ? 'drawn at random after the audit was opened in the log'
  : 'named by the owner, not drawn at random');

/** The latest audit in a sentence's parts: who, when, how the nights were chosen, the result, against which checkpoint. */
function auditFacts(a: Audit): Part[][] {
  const unmatched = a.nights_checked - a.nights_matched;
  return [
    [`Audited on ${a.date} by ${a.auditor}, an auditor the log's policy lists: ${a.result === 'pass' ? 'passed' : 'FAILED'}. ${count(a.nights_matched)} of ${nights(a.nights_checked)} ${chosenWords(a)} matched the reward transfers on the chain, judged within the log's checkpoint of ${count(a.checkpoint_size)} entries; published `, { time: a.published_at }, '.'],
    ...(unmatched > 0 ? [[`${nights(unmatched)} did not match.`]] : []),
    ...(a.chosen === 'named' ? [['Nights the owner names say nothing of the nights not named.']] : []),
    ['An audit covers the nights it checked, not the figures as a whole.'],
  ];
}

/** Audits opened in the log with no attestation published, said when there are any. */
const unfinishedFacts = (unfinished: number): Part[][] => (unfinished > 0
  ? [[`${count(unfinished)} ${unfinished === 1 ? 'audit was' : 'audits were'} opened in the log and ${unfinished === 1 ? 'has' : 'have'} no published result yet: under way, or abandoned.`]]
  : []);

/**
 * The page's account of the audits: the latest one's facts, or that there is none yet and what an
 * auditor would check; the audits opened with no result; then where every attestation is. On demo
 * data it says so first.
 */
export function auditSentences(audit: Audit | null, unfinished: number, demo: boolean): Part[][] {
  return [
    ...(demo ? [['Demo data, like the rest of this page: an audit shown here is of the demo log, not of the real account.']] : []),
    ...(audit ? auditFacts(audit) : [['No independent audit by an auditor the log\'s policy lists has been published yet.'], WHAT_IS_CHECKED]),
    ...unfinishedFacts(unfinished),
    ['Every attestation, passed or failed, verbatim and signed by its auditor: ', { text: 'the published audits', path: auditsPath(demo) }, '.'],
  ];
}

/** Whether the figures are audited, with the latest audit in one short clause, for the agents' summaries of the figures. */
export function auditClause(audit: Audit | null): string {
  return audit
    ? `Unaudited as a whole: the latest independent audit (${audit.date}, by ${audit.auditor}) ${audit.result === 'pass' ? 'passed' : 'failed'}, ${count(audit.nights_matched)} of ${nights(audit.nights_checked)} ${chosenWords(audit)} matching the chain`
    : 'Unaudited: no independent audit published yet';
}
