// The edge's app served on its port: what each worker (or the only process) runs. The cluster
// primary does not load it, so it holds only the configuration, the warm keeper and the log's holder.
import { getRequestListener, type Http2Bindings, type HttpBindings } from '@hono/node-server';
import cluster from 'node:cluster';
import { createServer, ServerResponse } from 'node:http';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { CACHE_FILL_HEADER, createEdgeApp } from './app.ts';
import type { EdgeConfig } from './config.ts';
import { withKeptAnswers } from './kept-listener.ts';
import type { LogSource } from './log-holder.ts';
import { renderSharePng } from './share-png.ts';

/**
 * Serves the app on the port (alone, or as one of the workers sharing it, asking `logSource` in the
 * primary for the log); stops on SIGTERM or SIGINT.
 */
export function serveApp(cfg: EdgeConfig, hostname: string, port: number, onStop: () => void, logSource?: LogSource): void {
  // The gateway's own levels (gzip_comp_level, brotli_comp_level 5): the records are compressed once per
  // upstream answer, so a middling level costs little and saves most of the bytes.
  const compress = (body: Uint8Array, coding: 'gzip' | 'br') => coding === 'gzip'
    ? gzipSync(body, { level: 5 })
    : brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } });
  const { app, kept } = createEdgeApp(cfg, { renderPng: renderSharePng, compress, logSource });
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
  // A request the MCP or A2A endpoint answers from what it kept is answered before the app's way.
  const server = createServer(withKeptAnswers(kept, getRequestListener(fetch, { hostname })));
  server.listen(port, hostname, () => {
    console.log(`edge listening on http://${hostname}:${port}${cluster.isWorker ? ` (worker ${cluster.worker!.id})` : ''}`);
  });
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
