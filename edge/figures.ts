// One upstream cache feeds every surface: /api/stats, /api/history, /api/health, MCP, A2A and the page. The
// published form (record + attribution + notes), its JSON body and its ETag are built once per
// upstream answer, not once per request.
import { SingleFlight } from './cache.ts';
import type { EdgeConfig } from './config.ts';
import { strongEtag } from './http.ts';
import type { HistoryRecord, LogRecord, PublishedHealth, PublishedStats, StatsRecord } from '../contract/records.ts';
import { citeSentence, notesFor, SERVICE_NAME } from '../contract/texts/rules.ts';
import type { Upstream } from './upstream.ts';

export interface Prepared<T> {
  value: T;
  /** The exact JSON body served for it. */
  body: string;
  etag: string;
}

/**
 * What is made from one prepared record, made again only when that record changes (its ETag). A
 * making that failed is not kept: the next caller tries again.
 */
export function madeFrom<T, R>(make: (source: Prepared<T>) => Promise<R>): (source: Prepared<T>) => Promise<R> {
  let last: { etag: string; made: Promise<R> } | undefined;
  return (source) => {
    if (last?.etag !== source.etag) {
      const made = make(source);
      made.catch(() => { if (last?.made === made) last = undefined; });
      last = { etag: source.etag, made };
    }
    return last.made;
  };
}

export interface Figures {
  stats(): Promise<Prepared<PublishedStats>>;
  /** The whole track record, as landing_history returns it. */
  history(): Promise<Prepared<HistoryRecord>>;
  health(): Promise<Prepared<PublishedHealth>>;
  /** The transparency log, as landing_log returns it. */
  log(): Promise<Prepared<LogRecord>>;
  /** The transparency log read anew, for a request that names more than the cached one holds; it refreshes the cache too. */
  logNow(): Promise<Prepared<LogRecord>>;
}

export function publishStats(record: StatsRecord, cfg: EdgeConfig): PublishedStats {
  return {
    ...record,
    attribution: { name: SERVICE_NAME, url: cfg.siteUrl, cite: citeSentence(cfg) },
    notes: notesFor(record, cfg),
  };
}

async function prepare<T>(value: T): Promise<Prepared<T>> {
  const body = `${JSON.stringify(value)}\n`;
  return { value, body, etag: await strongEtag(body) };
}

/**
 * How long past its TTL a record is still answered while it is fetched again: the staleness clients
 * already accept (the records' stale-while-revalidate=30). Health is never answered stale.
 */
const RECORD_STALE_MS = 30_000;

/** How often a request for more than the cached log holds may read it anew. */
const LOG_NOW_MIN_MS = 1000;

export function createFigures(cfg: EdgeConfig, upstream: Upstream): Figures {
  const stale = { staleMs: RECORD_STALE_MS };
  const stats = new SingleFlight(async () => prepare(publishStats(await upstream.stats(), cfg)), cfg.statsTtlMs, stale);
  const health = new SingleFlight(async () => {
    const { record, apiHostReachable } = await upstream.health();
    return prepare<PublishedHealth>({ ...record, api_host_reachable: apiHostReachable });
  }, cfg.healthTtlMs);
  const history = new SingleFlight(async () => prepare(await upstream.history()), cfg.statsTtlMs, stale);
  // The log this process serves never goes back: a read from a standby that has not yet replayed the
  // newest checkpoint (PostgREST prefers the standby and falls back to the primary) keeps the newer view.
  let newestLog: Prepared<LogRecord> | undefined;
  const forward = async (record: LogRecord) => {
    const held = newestLog?.value.log_checkpoint;
    const read = record.log_checkpoint;
    if (newestLog && held && read?.origin === held.origin && read.size < held.size) return newestLog;
    newestLog = await prepare(record);
    return newestLog;
  };
  const log = new SingleFlight(async () => forward(await upstream.log()), cfg.statsTtlMs, stale);
  // At most one such read a second, however many requests name what this view lacks.
  const logNow = new SingleFlight(async () => {
    const prepared = await forward(await upstream.logNow());
    log.set(prepared);
    return prepared;
  }, LOG_NOW_MIN_MS);
  return { stats: () => stats.get(), history: () => history.get(), health: () => health.get(), log: () => log.get(), logNow: () => logNow.get() };
}
