// The API host's records, fetched from PostgREST as the gateway asks for them (the one call, with
// its body), compressed for the coding it picked and signed for the API host. PostgREST's own
// refusals pass through unsigned for the gateway to turn into its JSON errors. Requests that come
// while the same call is under way share the next one, which begins after they came: every answer
// is read after its request, and PostgREST reads it once for all of them.
import { Hono } from 'hono';
import { API_PATHS, CACHED_RECORDS, EDGE_PATHS, recordName } from '../../contract/paths.ts';
import { LogHeadSchema, type LogHead } from '../../contract/records.ts';
import type { Answer } from '../answers.ts';
import { NextLoad } from '../cache.ts';
import type { EdgeConfig } from '../config.ts';
import { NO_STORE } from '../http.ts';
import { JSON_TYPE, sent, unavailable, type Sign } from '../routing.ts';

interface PostgrestAnswer {
  status: number;
  body: Uint8Array<ArrayBuffer>;
  contentType: string;
  etag: string | null;
  lastModified: string | undefined;
}

/** The records the gateway hands here, by function name: each one's public path on the API host. */
const RECORDS = new Map(CACHED_RECORDS.filter((r) => r.host === 'api').map((r) => [recordName(r), r.path]));

/** Each record's log state, read from its latest answer's body once per validator. */
const logHeads = new Map<string, { etag: string; head: LogHead | null }>();
function logHeadOf(fn: string, etag: string, body: Uint8Array): LogHead | null {
  const known = logHeads.get(fn);
  if (known?.etag === etag) return known.head;
  let head: LogHead | null = null;
  try {
    const parsed = LogHeadSchema.safeParse((JSON.parse(new TextDecoder().decode(body)) as { log_checkpoint?: unknown }).log_checkpoint);
    if (parsed.success) head = parsed.data;
  } catch {
    // Not a record: it names no log state.
  }
  logHeads.set(fn, { etag, head });
  return head;
}

export interface ApiHostOptions {
  cfg: Pick<EdgeConfig, 'postgrestUpstream' | 'upstreamTimeoutMs'>;
  /** Signs for the API host. */
  sign: Sign;
  fetch: typeof fetch;
}

export function createApiHostApp({ cfg, sign, fetch }: ApiHostOptions): Hono {
  const app = new Hono();

  /** One call of a record's function on PostgREST, read whole; PostgREST serves at its root what the API host serves under its REST base. */
  const fetchPostgrest = async (path: string, body: string): Promise<PostgrestAnswer> => {
    const upstream = await fetch(cfg.postgrestUpstream + path.slice(API_PATHS.REST_BASE.length), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body,
      signal: AbortSignal.timeout(cfg.upstreamTimeoutMs),
    });
    return {
      status: upstream.status,
      body: new Uint8Array(await upstream.arrayBuffer()),
      contentType: upstream.headers.get('content-type') ?? JSON_TYPE,
      etag: upstream.headers.get('etag'),
      lastModified: upstream.headers.get('last-modified') ?? undefined,
    };
  };
  const postgrestCalls = new Map<string, NextLoad<PostgrestAnswer>>();
  const callPostgrest = (path: string, body: string) => {
    const key = `${path}|${body}`;
    let calls = postgrestCalls.get(key);
    if (!calls) postgrestCalls.set(key, calls = new NextLoad(() => fetchPostgrest(path, body)));
    return calls.get();
  };

  app.post(`${EDGE_PATHS.API_HOST_RPC}:fn{${[...RECORDS.keys()].join('|')}}`, async (c) => {
    const fn = c.req.param('fn');
    const path = RECORDS.get(fn)!;
    let upstream: PostgrestAnswer;
    try {
      upstream = await callPostgrest(path, await c.req.text());
    } catch (error) {
      console.error(`edge: ${fn} from PostgREST failed: ${(error as Error).message}`);
      return unavailable();
    }
    const { status, body, contentType, etag, lastModified } = upstream;
    if (status !== 200 || !etag) return new Response(body, { status, headers: { 'content-type': contentType, ...NO_STORE } });
    const answer: Answer = { body, contentType, etag, lastModified, path, logCheckpoint: logHeadOf(fn, etag, body) };
    // The ETag is the record's own hash: the same record is compressed and signed once per coding.
    return sent(c, await sign(c, answer, fn));
  });

  return app;
}
