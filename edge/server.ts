// Node entry of the edge: the portable Hono app (edge/app.ts) on @hono/node-server.
// Started by the local stack (scripts/stack) as `node edge/server.ts` with the EDGE_* variables.
import { serve, type Http2Bindings, type HttpBindings } from '@hono/node-server';
import { ServerResponse, type Server } from 'node:http';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { CACHE_FILL_HEADER, createApp } from './app.ts';
import { edgeConfigFromEnv } from './config.ts';
import { renderSharePng } from './share-png.ts';
import { keepWarm, warmTargets } from './warm.ts';

const cfg = edgeConfigFromEnv(process.env);
const hostname = process.env.EDGE_HOST || '127.0.0.1';
const port = Number(process.env.EDGE_PORT);
if (!Number.isInteger(port) || port < 1 || port > 65535) {
  console.error(`EDGE_PORT must be a TCP port number, got "${process.env.EDGE_PORT}".`);
  process.exit(1);
}

// The gateway's own levels (gzip_comp_level, brotli_comp_level 5): the records are compressed once per
// upstream answer, so a middling level costs little and saves most of the bytes.
const compress = (body: Uint8Array, coding: 'gzip' | 'br') => coding === 'gzip'
  ? gzipSync(body, { level: 5 })
  : brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } });

const app = createApp(cfg, { renderPng: renderSharePng, compress });
/**
 * A gateway parses a cached answer's stored headers again on every hit, so a cache fill is answered
 * without Node's own Date, Connection and Keep-Alive (HTTP/1.1 connections persist without them,
 * https://www.rfc-editor.org/rfc/rfc9112#section-9.3).
 */
const fetch = (request: Request, env: HttpBindings | Http2Bindings) => {
  if (env.outgoing instanceof ServerResponse && env.incoming.headers[CACHE_FILL_HEADER] !== undefined) {
    env.outgoing.sendDate = false;
    env.outgoing.removeHeader('connection');
  }
  return app.fetch(request, env);
};
const server = serve({ fetch, hostname, port }, () => {
  console.log(`edge listening on http://${hostname}:${port}`);
}) as Server;
// nginx keeps upstream connections open for up to 60 s; Node must not close them first, or a
// request racing the close gets a 502.
server.keepAliveTimeout = 65_000;
server.headersTimeout = 66_000;

// Both gateways' microcaches, kept filled and fresh from here (the edge knows every cached path).
const stopWarming = cfg.siteGateway && cfg.warmPeriodMs > 0
  ? keepWarm(warmTargets({ site: cfg.siteGateway, api: cfg.apiUpstream }, cfg.anonKey), cfg.warmPeriodMs, cfg.upstreamTimeoutMs, (failed) => {
    console.error(`edge: ${failed.length} cached answer(s) could not be warmed, first: ${failed[0]}`);
  })
  : () => {};

const stop = () => {
  stopWarming();
  server.close(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
