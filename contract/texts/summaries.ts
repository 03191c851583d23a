// The figures in plain words: the page's key figures, the short summaries MCP, A2A and the
// Markdown page give beside the structured records, and the MCP server's instructions. Each keeps
// the reporting rules (./rules.ts).
import type { Origins } from '../paths.ts';
import type { HealthRecord, HistoryRecord, LogRecord, PublishedHealth, PublishedStats } from '../records.ts';
import { count, humanTime, money, orNone, percent } from './format.ts';
import { citeSentence, DEMO_NOTICE, DEMO_RULE, RULES, SERVICE_NAME, verification } from './rules.ts';
import { logFactsText } from './witnessing.ts';
import { auditClause } from './audit.ts';

export interface KeyFigure {
  label: string;
  /** The record field the value comes from (the page marks it up with it). */
  field: string;
  value: number | null;
  shown: string;
  note?: string;
  /** An instant the note ends with (ISO 8601): shown as a person reads it, the exact value kept beside it where the page can. */
  at?: string;
}

/** A key figure's note in plain text, its instant as a person reads it. */
export const noteText = (f: KeyFigure): string | undefined => (f.at ? `${f.note} ${humanTime(f.at)}` : f.note);

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
    { label: 'Capital at stake', field: 'at_stake_usd', value: c?.at_stake_usd ?? null, shown: money(c?.at_stake_usd), ...(c ? { note: 'as of', at: c.as_of } : { note: 'No snapshot yet' }) },
  ];
}

/**
 * The track record (`h`, perhaps a range of it) in a few words, and what the log shows of the whole
 * record (`whole`, read with `log`, undefined when it could not be read); the structured record carries every night.
 */
export function historySummary(h: HistoryRecord, siteUrl: string, whole: HistoryRecord, log: LogRecord | undefined): string {
  const first = h.nights[0];
  const last = h.nights.at(-1);
  return [
    `${SERVICE_NAME} (${siteUrl}), track record updated at ${orNone(h.updated_at)}.`,
    ...(h.data_source === 'demo' ? [DEMO_NOTICE] : []),
    first && last
      ? `${h.nights.length} settled nights from ${first.date} to ${last.date}; running gross total ${money(last.total_usd)} since ${orNone(h.since_date)} (reward income before trading costs, not profit). Every night is in the structured result; ${h.nights.filter((n) => n.log_index !== null).length} of them are final and in the transparency log (log_index names the entry).`
      : 'No settled night in this range.',
    logFactsText(whole, log),
  ].join('\n');
}

/** The stats record in plain words that keep the rules; MCP and A2A send it beside the record. */
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
    `${auditClause(s.audit ?? null)}; not financial advice. ${s.attribution.cite}`,
  ];
  return lines.join('\n');
}

/**
 * When the health record came from a read replica of the database: whether it receives the primary's
 * changes, and how far its data trails the primary.
 */
export function replicaLag(h: HealthRecord): string | undefined {
  const lag = h.data?.replica_lag_seconds;
  if (h.data?.replica_streaming === false) {
    return lag === null || lag === undefined
      ? 'Served by a read replica of the database that is not receiving the primary\'s changes.'
      : `Served by a read replica of the database that is not receiving the primary's changes; its data trails the primary by at most ${lag} s.`;
  }
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

/** The health record in a sentence or a few: the status, and what it rests on. */
export function healthSummary(h: PublishedHealth): string {
  const head =
    h.status === 'down'
      ? `${SERVICE_NAME} health at ${h.checked_at}: down. ${h.api_host_reachable ? 'The API host answered but the database behind it did not.' : 'The API host could not be reached.'}`
      : `${SERVICE_NAME} health at ${h.checked_at}: ${h.status}.`;
  return [head, ...healthData(h)].join('\n');
}

/** MCP server instructions: read by the model before it calls anything. */
export function mcpInstructions(cfg: Pick<Origins, 'siteUrl'>): string {
  return [
    `${SERVICE_NAME} (alpha, read-only): public aggregate statistics of one liquidity-reward market-making account.`,
    'Tools: get_stats (payouts, accrual, totals, capital, returns, the latest independent audit), get_history (every settled night with the running total; optional from/to) and get_health (data freshness and writer liveness). Resource stats://latest holds the latest stats record.',
    `Rules for reporting: ${RULES.gross_not_profit} ${RULES.accrual_is_estimate} ${RULES.no_annualising} ${RULES.audit_scope} ${citeSentence(cfg)}`,
    `${DEMO_RULE} ${RULES.disclaimer}`,
    Object.values(verification(cfg)).join(' '),
  ].join('\n');
}
