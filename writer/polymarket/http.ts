// HTTP for the Polymarket source: a timeout on every request, bounded retries with exponential
// backoff and full jitter on 429, 5xx and network errors, honouring Retry-After and a
// `retry_after_seconds` error body; one retry of a 401 with a fresh signature (new keys and clock
// skew cause transient 401s). A 425 means the matching engine is restarting (about 90 s, weekly and
// ad hoc: https://docs.polymarket.com/trading/matching-engine): it is waited out for up to
// `restartWaitMs`, apart from the retry budget, so a nightly read that meets a restart still lands.
import { setTimeout as sleep } from 'node:timers/promises';

export interface RetryPolicy {
  timeoutMs: number;
  retries: number;
  retryBaseMs: number;
  /** How long 425 "service not ready" answers are waited out before the call fails. */
  restartWaitMs: number;
  maxDelayMs?: number;
  /** Told about each failed attempt that will be retried (for the log). */
  onRetry?: (error: Error, delayMs: number, attempt: number) => void;
}

export class HttpError extends Error {
  readonly status: number;
  constructor(status: number, route: string, detail: string) {
    super(`${route} answered HTTP ${status}${detail ? `: ${detail}` : ''}`);
    this.status = status;
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

/** What an error body says: a short single-line detail (HTML from a CDN is summarised, not logged)
 * and a `retry_after_seconds` hint when the body carries one. */
export function readErrorBody(text: string): { detail: string; retryAfterMs?: number } {
  if (/^\s*</.test(text)) return { detail: 'HTML error page' };
  try {
    const json = JSON.parse(text) as { error?: unknown; message?: unknown; retry_after_seconds?: unknown };
    const hint = Number(json.retry_after_seconds);
    return {
      detail: String(json.error ?? json.message ?? '').slice(0, 200),
      retryAfterMs: json.retry_after_seconds !== undefined && Number.isFinite(hint) && hint >= 0 ? hint * 1000 : undefined,
    };
  } catch {
    return { detail: text.slice(0, 200).replace(/\s+/g, ' ') };
  }
}

/**
 * Fetches JSON (a GET, unless `init` says otherwise). `makeRequest` builds the URL and headers for each attempt, so signatures carry a fresh
 * timestamp. `route` names the call in errors without its query (which can hold an address).
 */
export async function getJson(
  route: string,
  makeRequest: () => { url: string; headers: Record<string, string> },
  policy: RetryPolicy,
  init: { method?: string; body?: string } = {},
): Promise<unknown> {
  const maxDelay = policy.maxDelayMs ?? 30_000;
  let retried401 = false;
  let failures = 0;
  let restartSince: number | undefined;
  for (let attempt = 1; ; attempt++) {
    const { url, headers } = makeRequest();
    let failure: Error;
    let hintMs: number | undefined;
    let status = 0;
    try {
      const res = await fetch(url, { ...init, headers: { accept: 'application/json', ...headers }, signal: AbortSignal.timeout(policy.timeoutMs) });
      const text = await res.text();
      if (res.ok) {
        // Some calls only ask the server to do something (a balance refresh) and may answer with no body.
        if (text.trim() === '') return null;
        try {
          return JSON.parse(text);
        } catch {
          throw new HttpError(res.status, route, 'the body is not JSON');
        }
      }
      status = res.status;
      const body = readErrorBody(text);
      failure = new HttpError(status, route, body.detail);
      hintMs = retryAfterMs(res.headers.get('retry-after')) ?? body.retryAfterMs;
    } catch (error) {
      if (error instanceof HttpError) throw error;
      failure = new Error(`${route} failed: ${(error as Error).name === 'TimeoutError' ? `no answer within ${policy.timeoutMs} ms` : (error as Error).message}`);
    }
    let delay: number;
    if (status === 401 && !retried401) {
      // Once, a second later: the next attempt is signed again with a new (whole-second) timestamp.
      retried401 = true;
      delay = 1000;
    } else if (status === 425) {
      restartSince ??= Date.now();
      if (Date.now() - restartSince >= policy.restartWaitMs) throw failure;
      const step = Math.min(maxDelay, Math.max(1000, policy.retryBaseMs) * 2 ** Math.min(10, attempt - 1));
      delay = Math.min(hintMs ?? step, Math.max(0, restartSince + policy.restartWaitMs - Date.now()));
    } else {
      if (status !== 0 && !RETRYABLE(status)) throw failure;
      failures++;
      if (failures > policy.retries) throw failure;
      const backoff = Math.random() * Math.min(maxDelay, policy.retryBaseMs * 2 ** (failures - 1));
      delay = Math.min(maxDelay, Math.max(hintMs ?? 0, backoff));
    }
    policy.onRetry?.(failure, delay, attempt);
    await sleep(delay);
  }
}
