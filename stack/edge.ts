// The edge server (edge/server.ts) as a child of the stack. It gets only what it needs: the public
// URLs, the local API host address, the anon key and the key directory's signing key; no JWT
// secret, no database password.
import path from 'node:path';
import { ROOT_DIR } from '../config/checkout.ts';
import type { Config } from '../config/config.ts';
import { gatewayAddresses } from './nginx-config.ts';
import { runNodeLogged, startChild, waitUntil, type Child, type Log } from './processes.ts';
import { freshBundle, RUNTIME_PROGRAMS } from './runtime-build.ts';

/**
 * The edge's V8 heap, bounded and kept small: its live data is a few tens of MiB, and without a bound
 * V8 lets the heap grow to hundreds of MiB under load before it collects
 * (https://nodejs.org/api/cli.html#--max-old-space-sizesize-in-mib). A young generation of 1 MiB
 * semi-spaces (https://nodejs.org/api/cli.html#--max-semi-space-sizesize-in-mib) and V8's
 * --optimize-for-size keep what 100,000 requests add to the process to about 14 MB, not 28 (`npm run
 * bench` measures it). The price is about a third of the edge's own throughput (MCP and A2A calls, which
 * no cache answers); the cached paths are nginx's and keep their speed. Workers inherit them.
 */
export const EDGE_NODE_FLAGS = ['--max-old-space-size=128', '--max-semi-space-size=1', '--optimize-for-size'];

/**
 * glibc gives each thread that allocates an arena of its own, up to eight per core, and keeps what each
 * arena once held; two arenas serve the edge's threads (V8's helpers, libuv's pool) with less kept.
 * https://man7.org/linux/man-pages/man3/mallopt.3.html (M_ARENA_MAX)
 */
export const EDGE_MALLOC_ENV = { MALLOC_ARENA_MAX: '2' };

/** Where the edge reaches both gateways: their local listeners. */
const gateways = (cfg: Config) => {
  const { site, api } = gatewayAddresses(cfg);
  return { EDGE_API_UPSTREAM: api, EDGE_SITE_GATEWAY: site };
};

export async function startEdge(cfg: Config, log: Log): Promise<Child> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    TZ: 'UTC',
    NODE_ENV: 'production',
    ...EDGE_MALLOC_ENV,
    EDGE_HOST: cfg.bindHost,
    EDGE_PORT: String(cfg.edgePort),
    ...gateways(cfg),
    EDGE_POSTGREST_UPSTREAM: `http://${cfg.bindHost}:${cfg.postgrestPort}`,
    SITE_URL: cfg.siteUrl,
    API_URL: cfg.apiUrl,
    ANON_KEY: cfg.ANON_KEY,
    HTTP_SIG_PRIVATE_KEY: cfg.HTTP_SIG_PRIVATE_KEY,
    HTTP_SIG_RETIRED_PUBLIC_KEYS: cfg.HTTP_SIG_RETIRED_PUBLIC_KEYS,
    ...(cfg.logOrigin ? { LOG_ORIGIN: cfg.logOrigin } : {}),
    ...cfg.edgeTunables,
  };
  // Its bundle when that is up to date with the sources; otherwise the source itself, never stale code.
  const program = freshBundle('edge') ?? path.join(ROOT_DIR, RUNTIME_PROGRAMS.edge);
  const child = startChild('edge', process.execPath, [...EDGE_NODE_FLAGS, program], { cwd: ROOT_DIR, env, log });
  // The agent card needs no upstream, so readiness does not depend on (or pre-fill a cache from)
  // an API host that may not be listening yet.
  await waitUntil('edge', async () => (await fetch(`http://${cfg.bindHost}:${cfg.edgePort}/.well-known/agent-card.json`)).ok, 20_000, child);
  return child;
}

/**
 * Asks for every cached answer of both gateways once (edge/warm-once.ts, the edge's own pass), so
 * that they are all in the microcaches before the stack says it is running; from then on the edge
 * keeps them fresh. What could not be warmed goes to `log`.
 */
export async function warmGateways(cfg: Config, log: Log): Promise<void> {
  await runNodeLogged(path.join(ROOT_DIR, 'edge', 'warm-once.ts'), [], { ...gateways(cfg), ANON_KEY: cfg.ANON_KEY }, log);
}
