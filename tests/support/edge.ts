// Helpers for the edge tests: an in-process edge app on a real port, a counting pass-through proxy
// (a measuring instrument in front of the real API host, not a stand-in for it), and a relay to it
// that can be cut.
import { getRequestListener } from '@hono/node-server';
import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createEdgeApp } from '../../edge/app.ts';
import type { EdgeConfig } from '../../edge/config.ts';
import { withKeptAnswers } from '../../edge/kept-listener.ts';

export interface Listening {
  url: string;
  close(): Promise<void>;
}

function closeServer(server: http.Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/**
 * The edge app from edge/app.ts on a free loopback port, served as edge/serve.ts serves it: the
 * answers its MCP and A2A endpoints kept first (edge/kept-listener.ts), then @hono/node-server; with
 * `appOnly`, by @hono/node-server alone. `reachedApp` counts the requests the app itself answered.
 */
export async function serveEdge(cfg: EdgeConfig, options: { appOnly?: boolean } = {}): Promise<Listening & { reachedApp: number }> {
  const { app, kept } = createEdgeApp(cfg);
  const appListener = getRequestListener(app.fetch, { hostname: '127.0.0.1' });
  const served = { reachedApp: 0 };
  const toApp: http.RequestListener = (incoming, outgoing) => {
    served.reachedApp++;
    return appListener(incoming, outgoing);
  };
  const server = http.createServer(options.appOnly ? toApp : withKeptAnswers(kept, toApp));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(served, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => closeServer(server) });
}

/** Forwards every request to `target` and counts them per path. */
export async function countingProxy(target: string): Promise<Listening & { counts: Map<string, number> }> {
  const counts = new Map<string, number>();
  const upstream = new URL(target);
  const server = http.createServer((req, res) => {
    const pathOnly = (req.url ?? '/').split('?')[0]!;
    counts.set(pathOnly, (counts.get(pathOnly) ?? 0) + 1);
    const forward = http.request(
      { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: { ...req.headers, host: upstream.host } },
      (reply) => {
        res.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(res);
      },
    );
    forward.on('error', () => { res.writeHead(502).end(); });
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, counts, close: () => closeServer(server) };
}

/** Forwards every GET to `target` (its `apikey` header kept), or answers 503 while `cut` is set. */
export async function cuttableRelay(target: string): Promise<Listening & { cut: boolean }> {
  const relay = { cut: true } as Listening & { cut: boolean };
  const server = http.createServer(async (req, res) => {
    if (relay.cut) { res.writeHead(503, { 'content-type': 'application/json' }).end('{"message":"cut"}'); return; }
    const upstream = await fetch(target + req.url, { headers: { apikey: String(req.headers.apikey ?? '') } });
    res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' }).end(Buffer.from(await upstream.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(relay, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => closeServer(server) });
}

/** A fresh Ed25519 key in the form HTTP_SIG_PRIVATE_KEY takes. */
const TEST_SIGNING_KEY = generateKeyPairSync('ed25519').privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64url');

export function edgeConfig(overrides: Partial<EdgeConfig> & Pick<EdgeConfig, 'apiUpstream' | 'anonKey'>): EdgeConfig {
  return {
    siteUrl: 'http://127.0.0.1:8080',
    httpSigPrivateKey: TEST_SIGNING_KEY,
    httpSigRetiredPublicKeys: [],
    apiUrl: overrides.apiUpstream,
    // These edges sign no API host answers: nothing listens there.
    postgrestUpstream: 'http://127.0.0.1:1',
    statsTtlMs: 5000,
    healthTtlMs: 2000,
    upstreamTimeoutMs: 3000,
    // An edge served in-process warms no gateway.
    warmPeriodMs: 0,
    ...overrides,
  };
}

/** Polls `fn` until it returns a value `accept` takes; returns that value. */
export async function eventually<T>(fn: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  while (Date.now() < deadline) {
    last = await fn();
    if (accept(last)) return last;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(last)}`);
}
