// Every sentence the service says about the figures, in one place, so the REST notes, the MCP
// instructions, the A2A reply, the page, its Markdown and the rendered documents (auth.md, the
// skills, llms.txt, OpenAPI) cannot drift apart: the record's semantic rules and the service's
// disclaimers, in plain words.
import { API_PATHS, logOrigin, SITE_PATHS, type Origins } from './paths.ts';
import type { HealthRecord, HistoryRecord, PublishedHealth, PublishedStats, StatsRecord } from './records.ts';

export const SERVICE_NAME = 'Public Stats Service';

/** The one internal error whose words callers see: the figures' upstream did not answer. */
export const UNAVAILABLE_MESSAGE = 'The statistics are unavailable right now (the API host or its database did not answer); retry in a minute.';

/** The fields that are gross reward income, not profit: every statement of the rule names these. */
export const GROSS_FIELDS = ['daily', 'last_night_usd', 'total_usd', 'best_day_usd', 'worst_day_usd'] as const;

/** "a, b and c". */
function listed(names: readonly string[]): string {
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

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
} as const;

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

/** What is signed, what is logged and how to check both: one sentence each. */
export function verification(cfg: Pick<Origins, 'siteUrl'>): { signed: string; logged: string; check: string } {
  const site = cfg.siteUrl;
  const api = [API_PATHS.STATS, API_PATHS.HISTORY, API_PATHS.LOG].map((p) => p.split('/').at(-1)).join(', ');
  return {
    signed: `Every data answer (${api} on the API host; ${SITE_PATHS.SITE_STATS}, ${SITE_PATHS.SITE_HISTORY} and ${SITE_PATHS.SITE_HISTORY_CSV} keyless) is signed: an RFC 9421 Signature over its status, Content-Type and RFC 9530 Content-Digest and the request's authority, path and query, by the Ed25519 key of the key directory (${site}${SITE_PATHS.SIG_DIRECTORY}), which keeps retired keys so old signatures still verify.`,
    logged: `Every settled night enters an append-only transparency log three days after its date, with the figures ${SITE_PATHS.SITE_HISTORY} serves (each night's log_index names its entry); a correction appends a new entry and no entry is ever changed. The log is served as C2SP tlog-tiles at ${site}${SITE_PATHS.LOG} (origin ${logOrigin(site, false)}; demo data have their own log, ${logOrigin(site, true)}, removed with them), its checkpoint a signed note by the same key, and ${site}${SITE_PATHS.LOG_PROOF} lists a receipt for each night that can be checked offline.`,
    check: `To check it all, run the verifier (${site}${SITE_PATHS.LOG_VERIFIER}, one file, Node and nothing else): node verify.ts --site ${site} --state verify-state.json.`,
  };
}

/** Which log the nights now served are in: the demo data's own, or the real one. */
export function logInUse(siteUrl: string, demo: boolean): string {
  return demo
    ? `The figures are demo data, so their nights are in the demo log (origin ${logOrigin(siteUrl, true)}), which goes with them when real data arrive; the real log then starts afresh.`
    : `The nights are in the real log (origin ${logOrigin(siteUrl, false)}); demo data never enter it.`;
}

/** MCP server instructions: read by the model before it calls anything. */
export function mcpInstructions(cfg: Pick<Origins, 'siteUrl'>): string {
  return [
    `${SERVICE_NAME} (alpha, read-only): public aggregate statistics of one liquidity-reward market-making account.`,
    'Tools: get_stats (payouts, accrual, totals, capital, returns), get_history (every settled night with the running total; optional from/to) and get_health (data freshness and writer liveness). Resource stats://latest holds the latest stats record.',
    `Rules for reporting: ${RULES.gross_not_profit} ${RULES.accrual_is_estimate} ${RULES.no_annualising} ${citeSentence(cfg)}`,
    `${DEMO_RULE} ${RULES.disclaimer}`,
    Object.values(verification(cfg)).join(' '),
  ].join('\n');
}

const usdFormat = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 2 });
const intFormat = new Intl.NumberFormat('en-US');

/** "$1,234.56", or "n/a" for the SQL's null ("no data", never a made-up zero). */
export function money(value: number | null | undefined): string {
  return value === null || value === undefined ? 'n/a' : usdFormat.format(value);
}

export function count(value: number | null | undefined): string {
  return value === null || value === undefined ? 'n/a' : intFormat.format(value);
}

export function percent(value: number | null | undefined): string {
  return value === null || value === undefined ? 'n/a' : `${value.toFixed(2)}%`;
}

export function orNone(value: string | null | undefined): string {
  return value ?? 'none yet';
}

export interface KeyFigure {
  label: string;
  /** The record field the value comes from (the page marks it up with it). */
  field: string;
  value: number | null;
  shown: string;
  note?: string;
}

/** The page's key figures, in order, for the HTML and the Markdown alike. */
export function keyFigures(s: PublishedStats): KeyFigure[] {
  const c = s.capital;
  return [
    { label: `Last night's payout${s.last_night_date ? ` (${s.last_night_date})` : ''}`, field: 'last_night_usd', value: s.last_night_usd, shown: money(s.last_night_usd), note: 'Gross reward income, before trading costs' },
    { label: "Today's accrual (estimate)", field: 'accrued_today_usd', value: s.accrued_today_usd, shown: money(s.accrued_today_usd), note: `Estimate in progress across ${count(s.accrued_today_markets)} markets; settles tonight` },
    { label: `Total since ${orNone(s.since_date)}`, field: 'total_usd', value: s.total_usd, shown: money(s.total_usd), note: 'Gross payouts' },
    { label: 'Best night', field: 'best_day_usd', value: s.best_day_usd, shown: money(s.best_day_usd) },
    { label: 'Worst night', field: 'worst_day_usd', value: s.worst_day_usd, shown: money(s.worst_day_usd) },
    { label: 'Markets quoted (24 h)', field: 'markets_quoted_24h', value: s.markets_quoted_24h, shown: count(s.markets_quoted_24h) },
    { label: 'Capital at stake', field: 'at_stake_usd', value: c?.at_stake_usd ?? null, shown: money(c?.at_stake_usd), note: c ? `as of ${c.as_of}` : 'No snapshot yet' },
  ];
}

/** A plain-words summary that respects the rules; used by MCP, A2A and the Markdown page. */
/** The track record in a few words; the structured record carries every night. */
export function historySummary(h: HistoryRecord, siteUrl: string): string {
  const first = h.nights[0];
  const last = h.nights.at(-1);
  return [
    `${SERVICE_NAME} (${siteUrl}), track record updated at ${orNone(h.updated_at)}.`,
    ...(h.data_source === 'demo' ? [DEMO_NOTICE] : []),
    first && last
      ? `${h.nights.length} settled nights from ${first.date} to ${last.date}; running gross total ${money(last.total_usd)} since ${orNone(h.since_date)} (reward income before trading costs, not profit). Every night is in the structured result; ${h.nights.filter((n) => n.log_index !== null).length} of them are final and in the transparency log (log_index names the entry).`
      : 'No settled night in this range.',
  ].join('\n');
}

export function statsSummary(s: PublishedStats): string {
  const r = s.returns;
  const lines = [
    `${SERVICE_NAME} (${s.attribution.url}), figures updated at ${orNone(s.updated_at)}.`,
    ...(s.data_source === 'demo' ? [DEMO_NOTICE] : []),
    s.last_night_date
      ? `Last settled night ${s.last_night_date}: ${money(s.last_night_usd)} gross reward payout (before trading costs, not profit).`
      : 'No payout has settled yet.',
    `Today so far: ${money(s.accrued_today_usd)} across ${count(s.accrued_today_markets)} markets, an in-progress estimate that settles tonight (not comparable with a settled night).`,
    `Gross payouts since ${orNone(s.since_date)}: ${money(s.total_usd)}; best night ${money(s.best_day_usd)}, worst night ${money(s.worst_day_usd)} (reward income before trading costs, not profit). Markets quoted in the last 24 h: ${count(s.markets_quoted_24h)}.`,
    r.to_date
      ? `Returns over the ${r.window_days}-day window ${r.from_date} to ${r.to_date}: rewards ${money(r.rewards_usd)}, trading costs ${money(r.trading_costs_usd)}, net ${money(r.net_usd)}; gross yield ${percent(r.gross_yield_pct)} and net yield ${percent(r.net_yield_pct)} for those ${r.window_days} days only, not annualised.`
      : `Returns window: ${r.window_days} days; no payouts yet.`,
    s.capital
      ? `Capital at stake ${money(s.capital.at_stake_usd)} (cash ${money(s.capital.cash_usd)}, inventory ${money(s.capital.inventory_usd)}, ${count(s.capital.positions)} positions) as of ${s.capital.as_of}.`
      : 'No capital snapshot yet.',
    `Unaudited; not financial advice. ${s.attribution.cite}`,
  ];
  return lines.join('\n');
}

/** When the health record came from a read replica of the database: how far its data trails the primary. */
export function replicaLag(h: HealthRecord): string | undefined {
  const lag = h.data?.replica_lag_seconds;
  if (lag === null || lag === undefined) return undefined;
  return lag === 0
    ? 'Served by a read replica of the database that has replayed everything the primary has sent it.'
    : `Served by a read replica of the database whose data trails the primary by at most ${lag} s.`;
}

function healthData(h: HealthRecord): string[] {
  if (!h.data || !h.writer) return [];
  const lag = replicaLag(h);
  return [
    `Latest payout ${orNone(h.data.last_payout_date)} (${h.data.payout_age_days ?? 'n/a'} days old, ${h.data.fresh ? 'fresh' : 'stale'}).`,
    `Latest accrual ${orNone(h.data.last_accrual_at)} (${h.data.accrual_age_minutes ?? 'n/a'} minutes old, ${h.data.accrual_fresh ? 'fresh' : 'stale'}).`,
    `Writer${h.writer.name ? ` ${h.writer.name}` : ''} ${h.writer.alive ? 'alive' : 'not alive'}; last heartbeat ${orNone(h.writer.last_heartbeat_at)}.`,
    ...(lag ? [lag] : []),
  ];
}

export function healthSummary(h: PublishedHealth): string {
  const head =
    h.status === 'down'
      ? `${SERVICE_NAME} health at ${h.checked_at}: down. ${h.api_host_reachable ? 'The API host answered but the database behind it did not.' : 'The API host could not be reached.'}`
      : `${SERVICE_NAME} health at ${h.checked_at}: ${h.status}.`;
  return [head, ...healthData(h)].join('\n');
}
