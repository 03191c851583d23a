// One upstream cache feeds every surface: /api/stats, /api/history, /api/health, MCP, A2A and the page. The
// published form (record + attribution + notes), its JSON body and its ETag are built once per
// upstream answer, not once per request.
import { SingleFlight } from './cache.ts';
import type { EdgeConfig } from './config.ts';
import type { HistoryRecord, LogRecord, PublishedHealth, PublishedStats, StatsRecord } from '../contract/records.ts';
import { citeSentence, notesFor, SERVICE_NAME } from '../contract/texts/rules.ts';
import type { LogReader } from './log-views.ts';
import { prepare, type Prepared } from './prepared.ts';
import type { Upstream } from './upstream.ts';

export interface Figures {
  stats(): Promise<Prepared<PublishedStats>>;
  /** The whole track record, as landing_history returns it. */
  history(): Promise<Prepared<HistoryRecord>>;
  health(): Promise<Prepared<PublishedHealth>>;
  /** The transparency log in use, as landing_log returns it and the node's one holder of the log holds it. */
  log(): Promise<Prepared<LogRecord>>;
}

export function publishStats(record: StatsRecord, cfg: EdgeConfig): PublishedStats {
  return {
    ...record,
    attribution: { name: SERVICE_NAME, url: cfg.siteUrl, cite: citeSentence(cfg) },
    notes: notesFor(record, cfg),
  };
}

/**
 * How long past its TTL a record is still answered while it is fetched again: the staleness clients
 * already accept (the records' stale-while-revalidate=30). Health is never answered stale.
 */
const RECORD_STALE_MS = 30_000;

export function createFigures(cfg: EdgeConfig, upstream: Upstream, logs: LogReader): Figures {
  const stale = { staleMs: RECORD_STALE_MS };
  const stats = new SingleFlight(async () => {
    const record = await upstream.stats();
    // No answer names an audit before the log's holder serves it at /log/audits.
    if (record.audit) await logs.ensureAudit(record.audit.published_at);
    return prepare(publishStats(record, cfg));
  }, cfg.statsTtlMs, stale);
  const health = new SingleFlight(async () => {
    const { record, apiHostReachable } = await upstream.health();
    return prepare<PublishedHealth>({ ...record, api_host_reachable: apiHostReachable });
  }, cfg.healthTtlMs);
  const history = new SingleFlight(async () => prepare(await upstream.history()), cfg.statsTtlMs, stale);
  return { stats: () => stats.get(), history: () => history.get(), health: () => health.get(), log: () => logs.inUse() };
}
