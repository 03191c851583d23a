// Node entry of the edge: the portable Hono app (edge/app.ts) on @hono/node-server.
// Started by the local stack (scripts/stack) as `node edge/server.ts` with the EDGE_* variables.
import { serve } from '@hono/node-server';
import type { Server } from 'node:http';
import { createApp } from './app.ts';
import { edgeConfigFromEnv } from './config.ts';
import { renderSharePng } from './share-png.ts';

const cfg = edgeConfigFromEnv(process.env);
const hostname = process.env.EDGE_HOST || '127.0.0.1';
const port = Number(process.env.EDGE_PORT);
if (!Number.isInteger(port) || port < 1 || port > 65535) {
  console.error(`EDGE_PORT must be a TCP port number, got "${process.env.EDGE_PORT}".`);
  process.exit(1);
}

const server = serve({ fetch: createApp(cfg, { renderPng: renderSharePng }).fetch, hostname, port }, () => {
  console.log(`edge listening on http://${hostname}:${port}`);
}) as Server;
// nginx keeps upstream connections open for up to 60 s; Node must not close them first, or a
// request racing the close gets a 502.
server.keepAliveTimeout = 65_000;
server.headersTimeout = 66_000;

const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
