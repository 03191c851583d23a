// HTTP for the Polymarket source: a timeout on every request, bounded retries with exponential
// backoff and full jitter on 429, 425, 5xx and network errors, honouring Retry-After; one retry of
// a 401 with a fresh signature (new keys and clock skew cause transient 401s, reference §6).
import { setTimeout as sleep } from 'node:timers/promises';

export interface RetryPolicy {
  timeoutMs: number;
  retries: number;
  retryBaseMs: number;
  maxDelayMs?: number;
  /** Told about each failed attempt that will be retried (for the log). */
  onRetry?: (error: Error, delayMs: number, attempt: number) => void;
}

export class HttpError extends Error {
  constructor(readonly status: number, readonly route: string, detail: string) {
    super(`${route} answered HTTP ${status}${detail ? `: ${detail}` : ''}`);
  }
}

const RETRYABLE = (status: number) => status === 429 || status === 425 || status >= 500;

/** Retry-After as seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, nowMs = Date.now()): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/** A short, single-line description of an error body (HTML from a CDN is summarised, not logged). */
function describeBody(text: string): string {
  if (/^\s*</.test(text)) return 'HTML error page';
  try {
    const json = JSON.parse(text) as { error?: unknown; message?: unknown };
    return String(json.error ?? json.message ?? '').slice(0, 200);
  } catch {
    return text.slice(0, 200).replace(/\s+/g, ' ');
  }
}

/**
 * GETs JSON. `makeRequest` builds the URL and headers for each attempt, so signatures carry a fresh
 * timestamp. `route` names the call in errors without its query (which can hold an address).
 */
export async function getJson(route: string, makeRequest: () => { url: string; headers: Record<string, string> }, policy: RetryPolicy): Promise<unknown> {
  const maxDelay = policy.maxDelayMs ?? 30_000;
  let retried401 = false;
  for (let attempt = 0; ; attempt++) {
    const { url, headers } = makeRequest();
    let status = 0;
    let wait: number | undefined;
    let failure: Error | undefined;
    try {
      const res = await fetch(url, { headers: { accept: 'application/json', ...headers }, signal: AbortSignal.timeout(policy.timeoutMs) });
      const text = await res.text();
      if (res.ok) {
        try {
          return JSON.parse(text);
        } catch {
          throw new HttpError(res.status, route, 'the body is not JSON');
        }
      }
      status = res.status;
      failure = new HttpError(status, route, describeBody(text));
      if (status === 401 && !retried401) {
        // Once, a second later: the next attempt is signed again with a new (whole-second) timestamp.
        retried401 = true;
        policy.onRetry?.(failure, 1000, attempt + 1);
        await new Promise((resolve) => setTimeout(resolve, 1000));
        continue;
      }
      if (!RETRYABLE(status)) throw failure;
      wait = retryAfterMs(res.headers.get('retry-after'));
    } catch (error) {
      if (error instanceof HttpError && (status === 0 || !RETRYABLE(status))) throw error;
      failure = error instanceof HttpError ? error
        : new Error(`${route} failed: ${(error as Error).name === 'TimeoutError' ? `no answer within ${policy.timeoutMs} ms` : (error as Error).message}`);
    }
    if (!failure) throw new Error(`${route} failed`);
    if (attempt >= policy.retries) throw failure;
    const backoff = Math.random() * Math.min(maxDelay, policy.retryBaseMs * 2 ** attempt);
    const delay = Math.min(maxDelay, Math.max(wait ?? 0, backoff));
    policy.onRetry?.(failure, delay, attempt + 1);
    await sleep(delay);
  }
}
