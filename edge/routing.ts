// What the edge's routes share: a route that answers one method (GET with its HEAD, or POST) and a
// 405 for the others, the JSON errors every route may give, and how a data answer goes out: to a
// client with its caching and validator, or lean to a gateway filling its cache.
import type { Context, Handler, Hono, MiddlewareHandler } from 'hono';
import { SITE_PATHS } from '../contract/paths.ts';
import { SERVICE_NAME, UNAVAILABLE } from '../contract/texts/rules.ts';
import type { Answer, SignedAnswer } from './answers.ts';
import { etagMatches, jsonError, prefersHtml, strongEtag } from './http.ts';

/** Clients poll at most once a minute, so a minute of caching loses a client nothing. */
export const STATS_CACHE_CONTROL = 'public, max-age=60, stale-while-revalidate=30';
export const JSON_TYPE = 'application/json; charset=utf-8';
/** How long a client should wait before asking again while the figures cannot be read. */
export const RETRY_AFTER_SECONDS = '30';

/**
 * A gateway filling its microcache marks the request with this header. It parses the stored headers
 * again on every hit, so its answer carries only the representation's own (type, coding, validators,
 * digest, signature) and the gateway adds caching, Vary and CORS itself.
 */
export const CACHE_FILL_HEADER = 'x-cache-fill';
export const forCacheFill = (c: Context) => c.req.header(CACHE_FILL_HEADER) !== undefined;

/** A 405 naming the methods `allow` lists (OPTIONS, answered by CORS, goes unsaid in the message). */
export function methodNotAllowed(allow: string): Handler {
  return () => jsonError(405, `Method not allowed: use ${allow.replace(', OPTIONS', '')}.`, { allow });
}

/** `path` answers GET (and so HEAD, which Hono answers with the GET handler's headers) and 405 to the rest. */
export function getRoute(app: Hono, path: string, handler: Handler): void {
  app.get(path, handler);
  app.all(path, methodNotAllowed('GET, HEAD, OPTIONS'));
}

/** `path` answers POST, after `before` (a body limit), and `refusal` (by default a JSON 405) to the rest. */
export function postRoute(app: Hono, path: string, before: MiddlewareHandler, handler: Handler, refusal: Handler = methodNotAllowed('POST, OPTIONS')): void {
  app.post(path, before, handler);
  app.all(path, refusal);
}

/** 503 while the figures cannot be read. */
export const unavailable = () => jsonError(503, UNAVAILABLE.http, { 'retry-after': RETRY_AFTER_SECONDS });

/** A browser gets a page with a link home; anything else, JSON naming what this host serves. */
export function notFound(c: Context): Response {
  if (prefersHtml(c.req.header('accept'))) {
    return new Response(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Not found · ${SERVICE_NAME}</title></head><body><main><h1>Not found</h1><p>There is no page at this address. The statistics are on the <a href="${SITE_PATHS.HOME}">home page</a>.</p></main></body></html>\n`,
      { status: 404, headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' } },
    );
  }
  return jsonError(404, `Not found: this site serves GET ${SITE_PATHS.SITE_STATS}, GET ${SITE_PATHS.SITE_HISTORY} (also .csv), GET ${SITE_PATHS.SITE_HEALTH}, POST ${SITE_PATHS.MCP}, POST ${SITE_PATHS.A2A} and the documents linked from ${SITE_PATHS.HOME}.`);
}

/** Signs an answer for the host a route serves, in the coding the request asked for; `memoKey` keeps a whole record. */
export type Sign = (c: Context, answer: Answer, memoKey?: string) => Promise<SignedAnswer>;

/** A signed data answer, or a 304 when If-None-Match matches its validator. */
export function sent(c: Context, answer: SignedAnswer): Response {
  if (forCacheFill(c)) return new Response(answer.body, { status: answer.status, headers: answer.headers });
  const caching = { 'cache-control': STATS_CACHE_CONTROL, vary: 'Accept-Encoding' };
  const etag = answer.headers.etag!;
  if (etagMatches(c.req.header('if-none-match'), etag)) return new Response(null, { status: 304, headers: { ...caching, etag } });
  return new Response(answer.body, { status: answer.status, headers: { ...caching, ...answer.headers } });
}

/** A cacheable answer with a strong validator: a 304 when If-None-Match matches it. */
export function validated(c: Context, body: string | Uint8Array<ArrayBuffer>, headers: { 'content-type': string; etag: string; 'last-modified'?: string }): Response {
  const all = { 'cache-control': STATS_CACHE_CONTROL, ...headers };
  if (etagMatches(c.req.header('if-none-match'), headers.etag)) return new Response(null, { status: 304, headers: all });
  return new Response(body, { headers: all });
}

export async function withEtag(body: string): Promise<{ body: string; etag: string }> {
  return { body, etag: await strongEtag(body) };
}
