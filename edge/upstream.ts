// How the figures enter the edge: three of the four RPCs on the API host, called with the public anon
// key exactly as any outside client would, through postgrest-js. The log, the fourth, has one holder
// per node (edge/log-holder.ts).
import { PostgrestClient } from '@supabase/postgrest-js';
import type { z } from 'zod';
import type { EdgeConfig } from './config.ts';
import { gatewayAt } from './gateway.ts';
import { API_PATHS } from '../contract/paths.ts';
import { downHealth, HealthRecordSchema, HistoryRecordSchema, StatsRecordSchema, type HealthRecord, type HistoryRecord, type StatsRecord } from '../contract/records.ts';

export class UpstreamError extends Error {}

export interface Upstream {
  /** The landing_stats record; throws UpstreamError when it cannot be had. */
  stats(): Promise<StatsRecord>;
  /** The landing_history record; throws UpstreamError when it cannot be had. */
  history(): Promise<HistoryRecord>;
  /** The landing_health record, or "down" (never throws: health is reported, not raised). */
  health(): Promise<{ record: HealthRecord; apiHostReachable: boolean }>;
}

/** The "down" record, checked now (to the second, as the SQL states times). */
function downNow(): HealthRecord {
  return downHealth(new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'));
}

export function createUpstream(cfg: EdgeConfig, fetchImpl: typeof fetch = fetch): Upstream {
  const apiHost = gatewayAt(cfg.apiUpstream, fetchImpl);
  const client = new PostgrestClient(apiHost.origin + API_PATHS.REST_BASE, {
    headers: { apikey: cfg.anonKey, 'user-agent': 'public-stats-edge/1.0' },
    fetch: apiHost.fetch,
    // postgrest-js retries GETs by default, honouring Retry-After (the API host sends 30 s on a 503):
    // a caller would wait that long. The edge answers at once and its cache asks again soon.
    retry: false,
  });
  const call = (fn: 'landing_stats' | 'landing_history' | 'landing_health') =>
    client.rpc(fn, {}, { get: true }).abortSignal(AbortSignal.timeout(cfg.upstreamTimeoutMs));

  /** A record that must arrive whole: any failure or unexpected shape is an UpstreamError. */
  const record = async <T>(fn: 'landing_stats' | 'landing_history', schema: z.ZodType<T>): Promise<T> => {
    const { data, error, status } = await call(fn);
    if (error) throw new UpstreamError(`${fn} failed (HTTP ${status}): ${error.message}`);
    const parsed = schema.safeParse(data);
    if (!parsed.success) throw new UpstreamError(`${fn} returned an unexpected shape: ${parsed.error.message}`);
    return parsed.data;
  };

  return {
    stats: () => record('landing_stats', StatsRecordSchema),
    history: () => record('landing_history', HistoryRecordSchema),
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
