// The edge as one Hono app of web-standard handlers: no Node API in here, so the same object can
// run under @hono/node-server (edge/serve.ts), Deno or a serverless runtime. Its routes are
// sub-apps by job (edge/routes/, and the transparency log's); this file builds what they share
// (the figures, the signing key) and the answers common to all (CORS, 404, 500).
import { Hono, type Context } from 'hono';
import { cors } from 'hono/cors';
import { SITE_PATHS } from '../contract/paths.ts';
import { createAnswerSigning, requestedCoding, type Compress } from './answers.ts';
import type { EdgeConfig } from './config.ts';
import { createFigures, type Figures } from './figures.ts';
import { LogHolder, postgrestReads, type LogSource } from './log-holder.ts';
import { createLogReader } from './log-views.ts';
import { jsonError } from './http.ts';
import { createAnswerSigner, type AnswerSigner } from './response-signature.ts';
import { CACHE_FILL_HEADER, forCacheFill, notFound, type Sign } from './routing.ts';
import type { HeaderOf, KeptAnswer } from './answer-memo.ts';
import { createAgents, MAX_BODY_BYTES } from './routes/agents.ts';
import { createApiHostApp } from './routes/api-host.ts';
import { createKeyDirectoryApp } from './routes/key-directory.ts';
import { createPageApp } from './routes/page.ts';
import { createRecordsApp } from './routes/records.ts';
import { createLogApp } from './transparency.ts';
import { createUpstream } from './upstream.ts';

export { CACHE_FILL_HEADER } from './routing.ts';

export interface AppOptions {
  /** SVG to PNG, for the share card (/og.png); a runtime without one answers that route 404. */
  renderPng?: (svg: string) => Uint8Array;
  /** gzip and brotli for the signed records; a runtime without it sends them uncompressed. */
  compress?: Compress;
  /** The records every surface reads; by default read from the API host and kept for their TTLs. */
  figures?: Figures;
  /** How the edge reaches the API host and PostgREST; by default the runtime's own. */
  fetch?: typeof fetch;
  /** The node's one holder of the log's state; by default one of this process's own (the edge alone on its node). */
  logSource?: LogSource;
}

/** The CORS of every answer but a cache fill's. */
const CORS = {
  origin: '*',
  allowMethods: ['GET', 'HEAD', 'POST', 'OPTIONS'],
  allowHeaders: ['content-type', 'accept', 'if-none-match', 'mcp-protocol-version', 'a2a-version', 'last-event-id'],
  exposeHeaders: ['ETag', 'Link', 'Retry-After', 'X-Cache-Status', 'X-Markdown-Tokens', 'Signature', 'Signature-Input', 'Content-Digest', 'Log-Checkpoint'],
  maxAge: 86400,
};

/**
 * The answers the app gives from what its MCP and A2A endpoints kept, asked without the app: a
 * runtime's server may answer such a request from here before it makes the Fetch API objects the
 * app takes, and must then send exactly what the app would (tests/edge/answer-memo.test.ts holds
 * the two to the same bytes and headers).
 */
export interface KeptAnswers {
  /**
   * Whether a request may be one of them: a POST to an endpoint's own path (no query), not from a
   * gateway filling its cache, with its body's length given and within the body limit. Only then is
   * its body read and `answer` asked.
   */
  takes(method: string, path: string, header: HeaderOf): boolean;
  /** The app's answer to such a request (the headers the app adds included), or undefined when only the app can make it. */
  answer(path: string, header: HeaderOf, text: string): Promise<KeptAnswer | undefined>;
}

export interface EdgeApp {
  app: Hono;
  kept: KeptAnswers;
}

export function createApp(cfg: EdgeConfig, options: AppOptions = {}): Hono {
  return createEdgeApp(cfg, options).app;
}

export function createEdgeApp(cfg: EdgeConfig, options: AppOptions = {}): EdgeApp {
  const fetchImpl = options.fetch ?? fetch;
  const logs = createLogReader(options.logSource ?? new LogHolder(postgrestReads(cfg.postgrestUpstream, cfg.upstreamTimeoutMs, fetchImpl)));
  const figures = options.figures ?? createFigures(cfg, createUpstream(cfg, fetchImpl), logs);
  // One signing key for both hosts; each signs the authority its clients call, in the one coding
  // the gateway asked for.
  let answerSigner: Promise<AnswerSigner> | undefined;
  const signer = () => (answerSigner ??= createAnswerSigner(cfg.httpSigPrivateKey));
  const signFor = (origin: string): Sign => {
    // No answer names a checkpoint before the log's holder holds it: whoever reads the name can fetch it.
    const signing = createAnswerSigning(signer, new URL(origin).host, options.compress, (head) => logs.ensure(head.origin, head.size));
    return (c, answer, memoKey) => signing.sign(answer, requestedCoding(c.req.header('accept-encoding'), options.compress), memoKey);
  };

  const app = new Hono();
  app.onError((error) => {
    // Logged for the operator; the caller never sees internals or a stack trace.
    console.error(`edge: ${error instanceof Error ? error.message : String(error)}`);
    return jsonError(500, 'Internal error.');
  });
  app.notFound(notFound);

  const corsHeaders = cors(CORS);
  app.use('*', (c: Context, next) => (forCacheFill(c) ? next() : corsHeaders(c, next)));

  app.route(SITE_PATHS.HOME, createRecordsApp({ cfg, figures, sign: signFor(cfg.siteUrl), renderPng: options.renderPng }));
  app.route(SITE_PATHS.HOME, createApiHostApp({ cfg, sign: signFor(cfg.apiUrl), fetch: fetchImpl }));
  app.route(SITE_PATHS.LOG, createLogApp(cfg, logs, figures));
  const agents = createAgents(cfg, figures);
  app.route(SITE_PATHS.HOME, agents.app);
  app.route(SITE_PATHS.HOME, createKeyDirectoryApp(cfg));
  app.route(SITE_PATHS.HOME, createPageApp(cfg, figures));

  const kept: KeptAnswers = {
    takes(method, path, header) {
      if (method !== 'POST' || !agents.keptPaths.includes(path) || header(CACHE_FILL_HEADER) !== null || header('transfer-encoding') !== null) return false;
      const length = header('content-length');
      return length !== null && /^\d+$/.test(length) && Number(length) <= MAX_BODY_BYTES;
    },
    async answer(path, header, text) {
      const answer = await agents.kept(path, header, text);
      if (!answer) return undefined;
      // What the CORS middleware adds to a simple request's answer, over the endpoint's own headers.
      const headers = new Headers(answer.headers);
      headers.set('access-control-allow-origin', CORS.origin);
      headers.set('access-control-expose-headers', CORS.exposeHeaders.join(','));
      return { body: answer.body, headers: [...headers] };
    },
  };
  return { app, kept };
}
