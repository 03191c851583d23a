// The edge server (edge/server.ts) as a child of the stack. It gets only what it needs: the public
// URLs, the local API host address and the anon key; no JWT secret, no database password.
import path from 'node:path';
import { loadEnv, ROOT_DIR, type Config } from './config.ts';
import { startChild, waitUntil, type Child, type Log } from './processes.ts';

/** Tunables passed through when set (see edge/config.ts). */
const PASSED_THROUGH = ['EDGE_STATS_TTL_SECONDS', 'EDGE_HEALTH_TTL_SECONDS', 'EDGE_UPSTREAM_TIMEOUT_SECONDS'];

/**
 * Where the edge's and the site host's tunables come from: `.env` under the process environment,
 * as `npm start` reads its configuration, so a value set only in .env counts.
 */
export function tunables(): Record<string, string | undefined> {
  return loadEnv();
}

export async function startEdge(cfg: Config, log: Log): Promise<Child> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    TZ: 'UTC',
    NODE_ENV: 'production',
    EDGE_HOST: cfg.bindHost,
    EDGE_PORT: String(cfg.edgePort),
    EDGE_API_UPSTREAM: `http://${cfg.bindHost}:${cfg.apiPort}`,
    SITE_URL: cfg.siteUrl,
    API_URL: cfg.apiUrl,
    ANON_KEY: cfg.ANON_KEY,
  };
  const settings = tunables();
  for (const name of PASSED_THROUGH) if (settings[name]) env[name] = settings[name]!;
  const child = startChild('edge', process.execPath, ['--import', 'tsx', path.join(ROOT_DIR, 'edge', 'server.ts')], { cwd: ROOT_DIR, env, log });
  // The agent card needs no upstream, so readiness does not depend on (or pre-fill a cache from)
  // an API host that may not be listening yet.
  await waitUntil('edge', async () => (await fetch(`http://${cfg.bindHost}:${cfg.edgePort}/.well-known/agent-card.json`)).ok, 20_000, child);
  return child;
}
