// The edge as one Hono app of web-standard handlers: no Node API in here, so the same object can
// run under @hono/node-server (edge/server.ts), Deno or a serverless runtime.
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { cors } from 'hono/cors';
import { createA2A } from './a2a.ts';
import { createAnswerSigner, type AnswerSigner } from './response-signature.ts';
import { createAnswerSigning, requestedCoding, type Answer, type AnswerSigning, type Compress, type SignedAnswer } from './answers.ts';
import type { EdgeConfig } from './config.ts';
import { NextLoad } from './cache.ts';
import { createFigures, madeFrom, type Figures, type Prepared } from './figures.ts';
import { etagMatches, jsonError, NO_STORE, prefersHtml, prefersMarkdown, strongEtag } from './http.ts';
import { badgeSvg, SVG_TYPE } from './badge.ts';
import { ATOM_TYPE, atomFeed } from './feed.ts';
import { shareImageSvg } from './share-image.ts';
import { historyCsv, parseRange, withinRange } from './history.ts';
import { createMcpHandler } from './mcp.ts';
import { renderHtml, type PageInput } from './page/html.ts';
import { linkHeader } from './page/links.ts';
import { renderMarkdown } from './page/markdown.ts';
import { API_PATHS, CACHED_RECORDS, EDGE_API_RECORD_ROUTE, recordName, SITE_PATHS } from '../contract/paths.ts';
import { KEY_DIRECTORY_CACHE_CONTROL, KEY_DIRECTORY_MEDIA_TYPE } from '../contract/documents.ts';
import { createKeyDirectory, type KeyDirectory } from './signing.ts';
import type { HistoryRecord, PublishedStats } from '../contract/records.ts';
import { SERVICE_NAME, UNAVAILABLE_MESSAGE } from '../contract/texts.ts';
import { createLogApp } from './transparency.ts';
import { createUpstream } from './upstream.ts';

/** Clients poll at most once a minute, so a minute of caching loses a client nothing. */
export const STATS_CACHE_CONTROL = 'public, max-age=60, stale-while-revalidate=30';
/** Health is near-live: a few seconds at most. */
export const HEALTH_CACHE_CONTROL = 'public, max-age=5';
/** JSON-RPC bodies of these read-only protocols are small; anything bigger is not ours. */
export const MAX_BODY_BYTES = 64 * 1024;

const JSON_TYPE = 'application/json; charset=utf-8';
/** text/csv as RFC 4180 §3 registers it, with its header parameter: the first line names the columns. */
const CSV_TYPE = 'text/csv; charset=utf-8; header=present';

const unavailable = () => jsonError(503, `${UNAVAILABLE_MESSAGE} GET /api/health reports the status.`, { 'retry-after': '30' });

/**
 * A gateway filling its microcache marks the request with this header. It parses the stored headers
 * again on every hit, so its answer carries only the representation's own (type, coding, validators,
 * digest, signature) and the gateway adds caching, Vary and CORS itself.
 */
export const CACHE_FILL_HEADER = 'x-cache-fill';
const forCacheFill = (c: Context) => c.req.header(CACHE_FILL_HEADER) !== undefined;

/** A signed data answer, or a 304 when If-None-Match matches its validator. */
function sent(c: Context, answer: SignedAnswer): Response {
  if (forCacheFill(c)) return new Response(answer.body, { status: answer.status, headers: answer.headers });
  const caching = { 'cache-control': STATS_CACHE_CONTROL, vary: 'Accept-Encoding' };
  const etag = answer.headers.etag!;
  if (etagMatches(c.req.header('if-none-match'), etag)) return new Response(null, { status: 304, headers: { ...caching, etag } });
  return new Response(answer.body, { status: answer.status, headers: { ...caching, ...answer.headers } });
}

/** The query exactly as the client sent it (with its "?"), which a signature then covers; none when empty. */
function rawQuery(url: string): string | undefined {
  const at = url.indexOf('?');
  return at >= 0 && at < url.length - 1 ? url.slice(at) : undefined;
}

/** A cacheable answer with a strong validator: a 304 when If-None-Match matches it. */
function validated(c: Context, body: string | Uint8Array<ArrayBuffer>, headers: { 'content-type': string; etag: string; 'last-modified'?: string }): Response {
  const all = { 'cache-control': STATS_CACHE_CONTROL, ...headers };
  if (etagMatches(c.req.header('if-none-match'), headers.etag)) return new Response(null, { status: 304, headers: all });
  return new Response(body, { headers: all });
}

async function withEtag(body: string): Promise<{ body: string; etag: string }> {
  return { body, etag: await strongEtag(body) };
}

function methodNotAllowed(allow: string) {
  return () => jsonError(405, `Method not allowed: use ${allow.replace(', OPTIONS', '')}.`, { allow });
}

function notFound(c: Context): Response {
  if (prefersHtml(c.req.header('accept'))) {
    return new Response(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Not found · ${SERVICE_NAME}</title></head><body><main><h1>Not found</h1><p>There is no page at this address. The statistics are on the <a href="/">home page</a>.</p></main></body></html>\n`,
      { status: 404, headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' } },
    );
  }
  return jsonError(404, 'Not found: this site serves GET /api/stats, GET /api/history (also .csv), GET /api/health, POST /mcp, POST /a2a and the documents linked from /.');
}

interface PostgrestAnswer {
  status: number;
  body: Uint8Array<ArrayBuffer>;
  contentType: string;
  etag: string | null;
  lastModified: string | undefined;
}

/** One call of a record's function on PostgREST, read whole. */
async function fetchPostgrest(cfg: EdgeConfig, fn: string, body: string): Promise<PostgrestAnswer> {
  const upstream = await fetch(`${cfg.postgrestUpstream}/rpc/${fn}`, {
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
}

export interface AppOptions {
  /** SVG to PNG, for the share card (/og.png); a runtime without one answers that route 404. */
  renderPng?: (svg: string) => Uint8Array;
  /** gzip and brotli for the signed records; a runtime without it sends them uncompressed. */
  compress?: Compress;
}

export function createApp(cfg: EdgeConfig, options: AppOptions = {}): Hono {
  const figures: Figures = createFigures(cfg, createUpstream(cfg));
  const a2a = createA2A(cfg, figures);
  const app = new Hono();
  // One signing key for both hosts; each signs the authority its clients call.
  let answerSigner: Promise<AnswerSigner> | undefined;
  const signer = () => (answerSigner ??= createAnswerSigner(cfg.httpSigPrivateKey));
  const siteAnswers: AnswerSigning = createAnswerSigning(signer, new URL(cfg.siteUrl).host, options.compress);
  const apiAnswers: AnswerSigning = createAnswerSigning(signer, new URL(cfg.apiUrl).host, options.compress);
  const coding = (c: Context) => requestedCoding(c.req.header('accept-encoding'), options.compress);

  app.onError((error) => {
    // Logged for the operator; the caller never sees internals or a stack trace.
    console.error(`edge: ${error instanceof Error ? error.message : String(error)}`);
    return jsonError(500, 'Internal error.');
  });
  app.notFound(notFound);

  const corsHeaders = cors({
    origin: '*',
    allowMethods: ['GET', 'HEAD', 'POST', 'OPTIONS'],
    allowHeaders: ['content-type', 'accept', 'if-none-match', 'mcp-protocol-version', 'a2a-version', 'last-event-id'],
    exposeHeaders: ['ETag', 'Link', 'Retry-After', 'X-Cache-Status', 'X-Markdown-Tokens', 'Signature', 'Signature-Input', 'Content-Digest'],
    maxAge: 86400,
  });
  app.use('*', (c, next) => (forCacheFill(c) ? next() : corsHeaders(c, next)));

  const limit = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: () => jsonError(413, `Request body too large: at most ${MAX_BODY_BYTES} bytes.`),
  });

  const readStats = () => figures.stats().catch((error: Error) => {
    console.error(`edge: ${error.message}`);
    return undefined;
  });
  const readHistory = () => figures.history().catch((error: Error) => {
    console.error(`edge: ${error.message}`);
    return undefined;
  });

  app.get(SITE_PATHS.SITE_STATS, async (c) => {
    const stats = await readStats();
    if (!stats) return unavailable();
    // The record takes no query, so a signature never covers one.
    const answer: Answer = { body: stats.body, contentType: JSON_TYPE, etag: stats.etag, path: SITE_PATHS.SITE_STATS };
    return sent(c, await siteAnswers.sign(answer, coding(c), 'stats'));
  });
  app.all('/api/stats', methodNotAllowed('GET, HEAD, OPTIONS'));

  // The track record, whole or within from/to, as JSON or CSV. The whole record's JSON is the
  // prepared upstream answer; its CSV, the feed and the badge are made once per upstream answer.
  const wholeCsv = madeFrom((history: Prepared<HistoryRecord>) => withEtag(historyCsv(history.value)));
  const history = (format: 'json' | 'csv') => async (c: Context) => {
    const range = parseRange({ from: c.req.query('from'), to: c.req.query('to') });
    if ('error' in range) return jsonError(400, range.error);
    const whole = await readHistory();
    if (!whole) return unavailable();
    const type = format === 'csv' ? CSV_TYPE : JSON_TYPE;
    const record = withinRange(whole.value, range);
    const made = record !== whole.value ? await withEtag(format === 'csv' ? historyCsv(record) : `${JSON.stringify(record)}\n`)
      : format === 'csv' ? await wholeCsv(whole) : whole;
    const path = format === 'csv' ? SITE_PATHS.SITE_HISTORY_CSV : SITE_PATHS.SITE_HISTORY;
    const query = rawQuery(c.req.url);
    const answer: Answer = { body: made.body, contentType: type, etag: made.etag, path, query };
    // Only the whole record, asked with no query, is kept signed here; the gateway caches the rest.
    return sent(c, await siteAnswers.sign(answer, coding(c), query ? undefined : path));
  };
  app.get(SITE_PATHS.SITE_HISTORY, history('json'));
  app.all(SITE_PATHS.SITE_HISTORY, methodNotAllowed('GET, HEAD, OPTIONS'));
  app.get(SITE_PATHS.SITE_HISTORY_CSV, history('csv'));
  app.all(SITE_PATHS.SITE_HISTORY_CSV, methodNotAllowed('GET, HEAD, OPTIONS'));

  const feed = madeFrom(async (history: Prepared<HistoryRecord>) => {
    const { body, updated } = atomFeed(history.value, cfg);
    return { ...(await withEtag(body)), updated };
  });
  app.get(SITE_PATHS.FEED, async (c) => {
    const whole = await readHistory();
    if (!whole) return unavailable();
    const { body, etag, updated } = await feed(whole);
    return validated(c, body, { 'content-type': ATOM_TYPE, etag, 'last-modified': new Date(updated).toUTCString() });
  });
  app.all(SITE_PATHS.FEED, methodNotAllowed('GET, HEAD, OPTIONS'));

  // The badge says "no data" rather than fail while the figures cannot be read.
  const badge = madeFrom((stats: Prepared<PublishedStats>) => withEtag(badgeSvg(stats.value)));
  app.get(SITE_PATHS.BADGE, async (c) => {
    const stats = await readStats();
    const { body, etag } = stats ? await badge(stats) : await withEtag(badgeSvg(undefined));
    const updatedAt = stats?.value.updated_at;
    return validated(c, body, { 'content-type': SVG_TYPE, etag, ...(updatedAt ? { 'last-modified': new Date(updatedAt).toUTCString() } : {}) });
  });
  app.all(SITE_PATHS.BADGE, methodNotAllowed('GET, HEAD, OPTIONS'));

  // The share card, rendered once per change of the figures and kept until the next.
  let shareCard: { key: string; png: Uint8Array<ArrayBuffer> } | undefined;
  app.get(SITE_PATHS.OG_IMAGE, async (c) => {
    if (!options.renderPng) return notFound(c);
    const [stats, history] = await Promise.all([readStats(), readHistory()]);
    const key = [stats?.etag, history?.etag].map((etag) => etag?.replace(/"/g, '') ?? 'none').join('-');
    if (shareCard?.key !== key) shareCard = { key, png: new Uint8Array(options.renderPng(shareImageSvg(stats?.value, history?.value))) };
    return validated(c, shareCard.png, { 'content-type': 'image/png', etag: `"${key}"` });
  });
  app.all(SITE_PATHS.OG_IMAGE, methodNotAllowed('GET, HEAD, OPTIONS'));

  // The API host's records, fetched from PostgREST as the gateway asks for them (the one call, with
  // its body), compressed for the coding it picked and signed for the API host. PostgREST's own
  // refusals pass through unsigned for the gateway to turn into its JSON errors. Requests that come
  // while the same call is under way share the next one, which begins after they came: every answer
  // is read after its request, and PostgREST reads it once for all of them.
  const postgrestCalls = new Map<string, NextLoad<PostgrestAnswer>>();
  const callPostgrest = (fn: string, body: string) => {
    const key = `${fn}|${body}`;
    let calls = postgrestCalls.get(key);
    if (!calls) postgrestCalls.set(key, calls = new NextLoad(() => fetchPostgrest(cfg, fn, body)));
    return calls.get();
  };
  const apiRecords = CACHED_RECORDS.filter((r) => r.host === 'api').map(recordName);
  app.post(`${EDGE_API_RECORD_ROUTE}:fn{${apiRecords.join('|')}}`, async (c) => {
    const fn = c.req.param('fn');
    let upstream: PostgrestAnswer;
    try {
      upstream = await callPostgrest(fn, await c.req.text());
    } catch (error) {
      console.error(`edge: ${fn} from PostgREST failed: ${(error as Error).message}`);
      return unavailable();
    }
    const { status, body, contentType, etag, lastModified } = upstream;
    if (status !== 200 || !etag) return new Response(body, { status, headers: { 'content-type': contentType, ...NO_STORE } });
    const answer: Answer = { body, contentType, etag, lastModified, path: `${API_PATHS.REST_BASE}/rpc/${fn}` };
    // The ETag is the record's own hash: the same record is compressed and signed once per coding.
    return sent(c, await apiAnswers.sign(answer, coding(c), fn));
  });

  app.route(SITE_PATHS.LOG, createLogApp(cfg, figures));

  // Always 200 while the site is up: the status field carries "down", never the HTTP status.
  app.get('/api/health', async () => {
    const health = await figures.health();
    return new Response(health.body, { headers: { 'content-type': JSON_TYPE, 'cache-control': HEALTH_CACHE_CONTROL } });
  });
  app.all('/api/health', methodNotAllowed('GET, HEAD, OPTIONS'));

  const mcp = createMcpHandler(cfg, figures);
  app.post('/mcp', limit, (c) => mcp(c.req.raw));
  // A GET handed to the stateless transport would open an SSE stream that never closes.
  app.all('/mcp', () => new Response(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this stateless MCP endpoint takes POST only.' }, id: null }), {
    status: 405,
    headers: { 'content-type': JSON_TYPE, allow: 'POST, OPTIONS', 'cache-control': 'no-store' },
  }));

  app.post('/a2a', limit, (c) => a2a.rpc(c.req.raw));
  app.all('/a2a', methodNotAllowed('POST, OPTIONS'));

  // The key directory answers signed, as its draft asks
  // (https://datatracker.ietf.org/doc/draft-meunier-http-message-signatures-directory/); its key is imported on first use.
  let keyDirectory: Promise<KeyDirectory> | undefined;
  app.get(SITE_PATHS.SIG_DIRECTORY, async (c) => {
    keyDirectory ??= createKeyDirectory(cfg.httpSigPrivateKey, cfg.siteUrl + SITE_PATHS.SIG_DIRECTORY, cfg.httpSigRetiredPublicKeys);
    const directory = await keyDirectory;
    const signature = await directory.signatureHeaders();
    return new Response(c.req.method === 'HEAD' ? null : directory.body, {
      headers: { 'content-type': KEY_DIRECTORY_MEDIA_TYPE, 'cache-control': KEY_DIRECTORY_CACHE_CONTROL, ...signature },
    });
  });
  app.all(SITE_PATHS.SIG_DIRECTORY, methodNotAllowed('GET, HEAD, OPTIONS'));
  app.get('/.well-known/agent-card.json', (c) => a2a.card(c.req.raw));
  app.all('/.well-known/agent-card.json', methodNotAllowed('GET, HEAD, OPTIONS'));

  const page = async (markdown: boolean, ifNoneMatch: string | undefined): Promise<Response> => {
    const [stats, health, history] = await Promise.all([figures.stats().catch(() => undefined), figures.health(), figures.history().catch(() => undefined)]);
    const input: PageInput = { stats: stats?.value, health: health.value, history: history?.value };
    const headers: Record<string, string> = {
      link: linkHeader(cfg),
      vary: 'Accept',
      'cache-control': stats ? 'public, max-age=60' : 'no-store',
    };
    if (!stats) headers['retry-after'] = '30';
    const status = stats ? 200 : 503;
    // Validators: the page changes when a figure does (updated_at) or the health status does.
    const updatedAt = stats?.value.updated_at;
    if (stats && updatedAt) {
      headers.etag = `W/"${updatedAt}|${health.value.status}|${markdown ? 'md' : 'html'}"`;
      headers['last-modified'] = new Date(updatedAt).toUTCString();
      if (etagMatches(ifNoneMatch, headers.etag)) return new Response(null, { status: 304, headers });
    }
    let body: string;
    if (markdown) {
      body = renderMarkdown(input, cfg);
      headers['content-type'] = 'text/markdown; charset=utf-8';
      // The convention agents use to budget context: about four characters per token.
      headers['x-markdown-tokens'] = String(Math.ceil(body.length / 4));
    } else {
      body = renderHtml(input, cfg);
      headers['content-type'] = 'text/html; charset=utf-8';
    }
    // Stated, so a HEAD answer carries it too.
    headers['content-length'] = String(new TextEncoder().encode(body).length);
    return new Response(body, { status, headers });
  };
  app.get('/', (c) => page(prefersMarkdown(c.req.header('accept')), c.req.header('if-none-match')));
  app.all('/', methodNotAllowed('GET, HEAD, OPTIONS'));
  app.get('/index.md', (c) => page(true, c.req.header('if-none-match')));
  app.all('/index.md', methodNotAllowed('GET, HEAD, OPTIONS'));

  return app;
}
