// Node entry of the edge: the portable Hono app (edge/app.ts) on @hono/node-server.
// Started by the local stack (scripts/stack) as `node edge/server.ts` with the EDGE_* variables.
// One process serves on one core; with EDGE_WORKERS above 1 (by default one per core) this process
// forks that many workers that share the listening socket (https://nodejs.org/api/cluster.html) and
// keeps the gateways warm itself. A worker that dies takes the whole edge down, so whoever supervises
// the edge starts it again whole.
import { serve, type Http2Bindings, type HttpBindings } from '@hono/node-server';
import cluster from 'node:cluster';
import { ServerResponse, type Server } from 'node:http';
import { availableParallelism } from 'node:os';
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
const workers = process.env.EDGE_WORKERS ? Number(process.env.EDGE_WORKERS) : availableParallelism();
if (!Number.isInteger(workers) || workers < 1 || workers > 64) {
  console.error(`EDGE_WORKERS must be a whole number from 1 to 64, got "${process.env.EDGE_WORKERS}".`);
  process.exit(1);
}

/** Both gateways' microcaches, kept filled and fresh from here (the edge knows every cached path). */
function warmGateways(): () => void {
  if (!cfg.siteGateway || cfg.warmPeriodMs <= 0) return () => {};
  return keepWarm(warmTargets({ site: cfg.siteGateway, api: cfg.apiUpstream }, cfg.anonKey), cfg.warmPeriodMs, cfg.upstreamTimeoutMs, (failed) => {
    console.error(`edge: ${failed.length} cached answer(s) could not be warmed, first: ${failed[0]}`);
  });
}

/** Serves the app on the port (alone, or as one of the workers sharing it); stops on SIGTERM or SIGINT. */
function serveApp(onStop: () => void): void {
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
    console.log(`edge listening on http://${hostname}:${port}${cluster.isWorker ? ` (worker ${cluster.worker!.id})` : ''}`);
  }) as Server;
  // nginx keeps upstream connections open for up to 60 s; Node must not close them first, or a
  // request racing the close gets a 502.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  const stop = () => {
    onStop();
    server.close(() => process.exit(0));
    // Idle keep-alive connections would hold the close until they time out.
    server.closeIdleConnections();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (workers === 1) {
  const stopWarming = warmGateways();
  serveApp(stopWarming);
} else if (cluster.isPrimary) {
  let stopping = false;
  for (let i = 0; i < workers; i++) cluster.fork();
  const stopWarming = warmGateways();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
      return;
    }
    console.error(`edge: worker ${worker.id} exited (${signal ?? `code ${code}`}); stopping the edge, to be started again whole.`);
    stopping = true;
    for (const other of Object.values(cluster.workers ?? {})) other?.process.kill('SIGKILL');
    process.exit(1);
  });
  const stop = () => {
    if (stopping) return;
    stopping = true;
    stopWarming();
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
} else {
  // The primary stops the workers; a signal from the terminal to the whole group stops them too.
  serveApp(() => {});
}
