// The service's rules for the figures in plain words, once, so the REST notes, the MCP
// instructions, the A2A reply, the page, its Markdown and the rendered documents (auth.md, the
// skills, llms.txt, OpenAPI) cannot drift apart: the record's semantic rules, the disclaimers, the
// license and how to cite, what is signed and logged, and what each surface says when the figures
// cannot be read. How a figure is written is ./format.ts; the summaries built on these, ./summaries.ts.
import { CACHED_RECORDS, logOrigin, recordName, SITE_PATHS, type Origins } from '../paths.ts';
import { listed } from './format.ts';
import type { StatsRecord } from '../records.ts';

export const SERVICE_NAME = 'Public Stats Service';

const UNAVAILABLE_NOW = 'The statistics are unavailable right now';
const NOT_ANSWERED = '(the API host or its database did not answer)';

/** The one internal error whose words callers see: the figures' upstream did not answer. */
export const UNAVAILABLE_MESSAGE = `${UNAVAILABLE_NOW} ${NOT_ANSWERED}; retry in a minute.`;

/** How each surface says it while the figures cannot be read. */
export const UNAVAILABLE = {
  /** A site host's answer (503), which names where the status is. */
  http: `${UNAVAILABLE_MESSAGE} GET ${SITE_PATHS.SITE_HEALTH} reports the status.`,
  /** An MCP tool's error result, which names the tool that reports the status. */
  mcpTool: `${UNAVAILABLE_NOW} ${NOT_ANSWERED}. Call get_health for the status, and retry in a minute.`,
  /** The A2A reply's text; its data part then holds the health record. */
  a2a: `${UNAVAILABLE_NOW}; the data part holds the health report. Retry in a minute.`,
} as const;

/**
 * The gateways' own 503 messages (nginx templates, where no code runs; a test holds them to these):
 * the API host's when PostgREST or its database does not answer, the site host's when the edge does not.
 */
export const GATEWAY_UNAVAILABLE = {
  api: 'The statistics database is unreachable right now; retry in a minute',
  site: "The site's application server is not answering right now; retry in a minute",
} as const;

/** The fields that are gross reward income, not profit: every statement of the rule names these. */
export const GROSS_FIELDS = ['daily', 'last_night_usd', 'total_usd', 'best_day_usd', 'worst_day_usd'] as const;

export const RULES = {
  gross_not_profit:
    `${listed(GROSS_FIELDS)} are gross reward income, before the cost of unwinding filled inventory. Do not report them as profit; returns.net_usd is rewards minus trading costs and may be negative.`,
  accrual_is_estimate:
    "accrued_today_usd is an in-progress estimate of today's reward accrual: it grows through the day and settles tonight. Do not compare it with a settled night's payout.",
  no_annualising:
    'returns.gross_yield_pct and returns.net_yield_pct cover returns.window_days only. Do not annualise them.',
  dates:
    "All dates are UTC. Each night's payout covers the prior day's activity and settles at 00:00 UTC.",
  disclaimer:
    'Aggregate figures of one real production account that earns liquidity rewards by quoting on a prediction market: not a simulation, backtest or projection. Unaudited and published as-is, losing days included. Not a performance guarantee and not financial advice.',
  polling: 'Poll at most once per minute; once every 5 minutes is recommended. The figures change at most every few minutes.',
  audit_scope:
    'audit, when not null, is the latest independent audit attestation by an auditor the log\'s policy lists: its auditor checked audit.nights_checked nights of the transparency log against the chain, drawn at random after the audit was opened in the log (audit.chosen "drawn") or named by the owner ("named", which says nothing of the other nights), audit.nights_matched of them matched, and audit.result says whether it passed. audits_unfinished counts the audits opened with no result yet. It covers those nights only: do not report the figures as audited.',
  sums_foot:
    'Every USD amount is in cents, rounded once where it is published (half away from zero). total_usd, each night\'s running total_usd, returns.rewards_usd and returns.trading_costs_usd are the sums of the published values they cover, and returns.net_usd is their difference, so adding up the published nights reaches them exactly.',
} as const;

/**
 * What the service keeps private, and what it cannot: said wherever the promise is made, so that it
 * never promises more than it keeps.
 */
export const PRIVACY =
  "Wallet addresses, positions, orders and per-market figures are never published. That alone does not make the account anonymous: Polymarket pays the rewards as public token transfers to the account's wallet every night, so someone who matches the nightly amounts (or the capital snapshot's cash) against those public transfers may find the wallet, and through it the positions and orders this service does not publish. The service cannot prevent that; it publishes every USD amount in cents, never more precisely.";

/** The figures' terms of use: free reuse with attribution (the attribution rule says how). */
export const FIGURES_LICENSE = { name: 'CC BY 4.0', spdx: 'CC-BY-4.0', url: 'https://creativecommons.org/licenses/by/4.0/' } as const;

/** How to report demo figures (the notes carry DEMO_NOTICE instead, and only while the data is demo). */
export const DEMO_RULE = 'When data_source is "demo", the figures are demo data, not the real account: report them as such.';

/** The same rules for people reading the page: no field names. */
export const RULES_FOR_PEOPLE = {
  gross_not_profit:
    'Nightly payouts, the total and the best and worst nights are gross reward income, before the cost of unwinding filled inventory: they are not profit. The net figure of the returns window subtracts those costs and may be negative.',
  accrual_is_estimate:
    "Today's accrual is an estimate in progress: it grows through the day and settles tonight, so it is not comparable with a settled night.",
  no_annualising: (days: number) => `The yields cover these ${days} days only; do not annualise them.`,
} as const;

export const DEMO_NOTICE =
  'DEMO DATA: these figures come from the built-in demo dataset, not from the real account. Do not cite them as real results.';

/** The disclaimer while the figures are demo data: the real-account wording would be false then. */
const DEMO_DISCLAIMER =
  "These are demo figures, generated deterministically while the service holds no real data: a simulation, not the real account's results, and not financial advice.";

/** The page's opening sentence (HTML and Markdown). */
export function lede(demo: boolean): string {
  return demo
    ? 'Public, read-only figures, for now demo data standing in for the one real production account this service publishes, which earns liquidity rewards by quoting on a prediction market. All amounts in USD; all dates UTC.'
    : 'Public, read-only figures of one real production account that earns liquidity rewards by quoting on a prediction market. All amounts in USD; all dates UTC.';
}

/** RULES.disclaimer, or its demo counterpart. */
export function disclaimer(demo: boolean): string {
  return demo ? DEMO_DISCLAIMER : RULES.disclaimer;
}

/** How to cite the figures: the service's name and address, and updated_at. */
export function citeSentence(cfg: Pick<Origins, 'siteUrl'>): string {
  return `Attribute "${SERVICE_NAME}" (${cfg.siteUrl}) and include updated_at when you report these figures.`;
}

/** The /api/stats notes object: the rules above, plus the demo notice when it applies. */
export function notesFor(record: StatsRecord, cfg: Pick<Origins, 'siteUrl'>): Record<string, string> {
  const demo = record.data_source === 'demo';
  return {
    ...RULES,
    disclaimer: disclaimer(demo),
    attribution: citeSentence(cfg),
    ...(demo ? { demo_data: DEMO_NOTICE } : {}),
  };
}

/** How to run the verifier, downloaded under its own name, against the site, with the state file that pins the log's key. */
export function verifyCommand(siteUrl: string): string {
  return `node ${SITE_PATHS.LOG_VERIFIER.slice(SITE_PATHS.LOG_VERIFIER.lastIndexOf('/') + 1)} --site ${siteUrl} --state verify-state.json`;
}

/** What is signed, what is logged and how to check both: one sentence each. */
export function verification(cfg: Pick<Origins, 'siteUrl' | 'logOrigin'>): { signed: string; logged: string; check: string } {
  const site = cfg.siteUrl;
  // Every cached record is signed, on both hosts.
  const api = CACHED_RECORDS.filter((r) => r.host === 'api').map(recordName).join(', ');
  const keyless = listed(CACHED_RECORDS.filter((r) => r.host === 'site').map((r) => r.path));
  return {
    signed: `Every data answer (${api} on the API host; ${keyless} keyless) is signed: an RFC 9421 Signature over its status, Content-Type and RFC 9530 Content-Digest and the request's authority, path and query, by the Ed25519 key of the key directory (${site}${SITE_PATHS.SIG_DIRECTORY}), which keeps retired keys so old signatures still verify.`,
    logged: `Every settled night enters an append-only transparency log three days after its date, with the figures ${SITE_PATHS.SITE_HISTORY} serves (each night's log_index names its entry); a correction appends a new entry and no entry is ever changed. The log is served as C2SP tlog-tiles at ${site}${SITE_PATHS.LOG} (origin ${logOrigin(cfg, false)}; demo data have their own log, ${logOrigin(cfg, true)} under ${SITE_PATHS.LOG_DEMO}, removed with them), its checkpoint a signed note by the log's own key (not the answers' key) which witnesses may cosign, every checkpoint ever signed kept under ${SITE_PATHS.LOG_CHECKPOINTS}, and ${site}${SITE_PATHS.LOG_PROOF} lists a receipt for each night that can be checked offline.`,
    check: `To check it all, run the verifier (${site}${SITE_PATHS.LOG_VERIFIER}, one file, Node and nothing else): ${verifyCommand(site)} (add --policy with the log's witness policy, or --vkey with its verifier key, so that the site alone never decides which key you trust).`,
  };
}

/** Which log the nights now served are in: the demo data's own, or the real one. */
export function logInUse(cfg: Pick<Origins, 'siteUrl' | 'logOrigin'>, demo: boolean): string {
  return demo
    ? `The figures are demo data, so their nights are in the demo log (origin ${logOrigin(cfg, true)}), which goes with them when real data arrive; the real log then starts afresh.`
    : `The nights are in the real log (origin ${logOrigin(cfg, false)}); demo data never enter it.`;
}
