// Keeps the gateways' microcaches warm, so no caller meets an empty entry: nginx answers a missing
// entry only after its cache lock, which polls every 500 ms, while an entry that has merely expired
// is answered stale and refreshed in the background (proxy_cache_use_stale updating,
// https://nginx.org/en/docs/http/ngx_http_proxy_module.html#proxy_cache_use_stale). One HEAD per
// cached record and coding fills an entry that is missing and starts the refresh of one that has
// expired, without carrying the bodies.
import { CACHED_RECORD_PATHS } from '../contract/paths.ts';
import { gatewayAt, type Gateway } from './gateway.ts';

/** What clients ask for, as the gateways key it: identity, gzip and brotli. */
const CODINGS = ['identity', 'gzip', 'br'];

export interface WarmTarget { gateway: Gateway; path: string; headers: Record<string, string> }

/** Every cached entry of both gateways, reached at their internal addresses (./gateway.ts). */
export function warmTargets(addresses: { site: string; api: string }, anonKey: string): WarmTarget[] {
  const [site, api] = [gatewayAt(addresses.site), gatewayAt(addresses.api)];
  const targets: WarmTarget[] = [];
  for (const coding of CODINGS) {
    for (const path of CACHED_RECORD_PATHS.site) targets.push({ gateway: site, path, headers: { 'accept-encoding': coding } });
    for (const path of CACHED_RECORD_PATHS.api) targets.push({ gateway: api, path, headers: { 'accept-encoding': coding, apikey: anonKey } });
  }
  return targets;
}

/**
 * Asks for every entry once, `spacingMs` apart; the URLs (and codings) that did not answer 200, with
 * why. One at a time: a missing entry is filled by one request, and the gateway is never crowded.
 * Spaced, the refreshes they start (each a fetch, and perhaps a compression and a signature, at the
 * edge) do not all fall in the same moment.
 */
export async function warmOnce(targets: WarmTarget[], timeoutMs: number, spacingMs = 0): Promise<string[]> {
  const failed: string[] = [];
  for (const [i, { gateway, path, headers }] of targets.entries()) {
    if (i > 0 && spacingMs > 0) await new Promise((resolve) => setTimeout(resolve, spacingMs));
    const url = `${gateway.address}${path}`;
    try {
      const res = await gateway.fetch(gateway.origin + path, { method: 'HEAD', headers, signal: AbortSignal.timeout(timeoutMs) });
      if (res.status !== 200) failed.push(`${url} (${headers['accept-encoding']}): HTTP ${res.status}`);
    } catch (error) {
      failed.push(`${url} (${headers['accept-encoding']}): ${(error as Error).message}`);
    }
  }
  return failed;
}

/**
 * Warms every entry every `periodMs`, its requests spread over the period, a pass at a time, from
 * one period after the call (whoever starts the gateway warms it first) until stopped. A failure is
 * reported once it has lasted two passes, and then once until it changes: a gateway still starting,
 * or stopping beside the edge, is not a failure, and one that stays down is reported once, not every
 * pass; each pass tries again.
 */
export function keepWarm(targets: WarmTarget[], periodMs: number, timeoutMs: number, report: (failed: string[]) => void): () => void {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let lastFirstFailure: string | undefined;
  let reported: string | undefined;
  // Each entry is asked for about once a period: the passes follow each other at the same spacing.
  const spacingMs = periodMs / targets.length;
  const schedule = (delayMs: number) => {
    if (stopped) return;
    timer = setTimeout(pass, delayMs);
    // A pass that is waiting never keeps the process alive on its own.
    (timer as { unref?: () => void }).unref?.();
  };
  const pass = async () => {
    const failed = await warmOnce(targets, timeoutMs, spacingMs);
    const lasting = failed[0] !== undefined && failed[0] === lastFirstFailure;
    if (lasting && failed[0] !== reported) report(failed);
    if (lasting) reported = failed[0];
    // Recovered: the next outage is reported again.
    if (!failed.length) reported = undefined;
    lastFirstFailure = failed[0];
    schedule(spacingMs);
  };
  schedule(periodMs);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
