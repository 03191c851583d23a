// The only way figures enter the edge: the four RPCs on the API host, called with the public anon
// key exactly as any outside client would, through postgrest-js.
import { PostgrestClient } from '@supabase/postgrest-js';
import type { z } from 'zod';
import type { EdgeConfig } from './config.ts';
import { API_PATHS } from '../contract/paths.ts';
import { downHealth, HealthRecordSchema, HistoryRecordSchema, LogRecordSchema, StatsRecordSchema, type HealthRecord, type HistoryRecord, type LogRecord, type StatsRecord } from '../contract/records.ts';

export class UpstreamError extends Error {}

export interface Upstream {
  /** The landing_stats record; throws UpstreamError when it cannot be had. */
  stats(): Promise<StatsRecord>;
  /** The landing_history record; throws UpstreamError when it cannot be had. */
  history(): Promise<HistoryRecord>;
  /** The landing_log record; throws UpstreamError when it cannot be had. */
  log(): Promise<LogRecord>;
  /** The landing_log record read from PostgREST itself, past the gateway's microcache: the log as it is now. */
  logNow(): Promise<LogRecord>;
  /** The landing_health record, or "down" (never throws: health is reported, not raised). */
  health(): Promise<{ record: HealthRecord; apiHostReachable: boolean }>;
}

/** The "down" record, checked now (to the second, as the SQL states times). */
function downNow(): HealthRecord {
  return downHealth(new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'));
}

export function createUpstream(cfg: EdgeConfig, fetchImpl: typeof fetch = fetch): Upstream {
  const client = new PostgrestClient(cfg.apiUpstream + API_PATHS.REST_BASE, {
    headers: { apikey: cfg.anonKey, 'user-agent': 'public-stats-edge/1.0' },
    fetch: fetchImpl,
    // postgrest-js retries GETs by default, honouring Retry-After (the API host sends 30 s on a 503):
    // a caller would wait that long. The edge answers at once and its cache asks again soon.
    retry: false,
  });
  // PostgREST's default role is anon: the same public functions, without the gateway's cache.
  const database = new PostgrestClient(cfg.postgrestUpstream, { headers: { 'user-agent': 'public-stats-edge/1.0' }, fetch: fetchImpl, retry: false });
  const call = (fn: 'landing_stats' | 'landing_history' | 'landing_log' | 'landing_health', via = client) =>
    via.rpc(fn, {}, { get: true }).abortSignal(AbortSignal.timeout(cfg.upstreamTimeoutMs));

  /** A record that must arrive whole: any failure or unexpected shape is an UpstreamError. */
  const record = async <T>(fn: 'landing_stats' | 'landing_history' | 'landing_log', schema: z.ZodType<T>, via = client): Promise<T> => {
    const { data, error, status } = await call(fn, via);
    if (error) throw new UpstreamError(`${fn} failed (HTTP ${status}): ${error.message}`);
    const parsed = schema.safeParse(data);
    if (!parsed.success) throw new UpstreamError(`${fn} returned an unexpected shape: ${parsed.error.message}`);
    return parsed.data;
  };

  return {
    stats: () => record('landing_stats', StatsRecordSchema),
    history: () => record('landing_history', HistoryRecordSchema),
    log: () => record('landing_log', LogRecordSchema),
    logNow: () => record('landing_log', LogRecordSchema, database),
    async health() {
      const { data, error, status } = await call('landing_health');
      // postgrest-js reports a network failure or timeout as status 0: nothing answered.
      if (status === 0) return { record: downNow(), apiHostReachable: false };
      const parsed = HealthRecordSchema.safeParse(data);
      if (error || !parsed.success) return { record: downNow(), apiHostReachable: true };
      return { record: parsed.data, apiHostReachable: true };
    },
  };
}
