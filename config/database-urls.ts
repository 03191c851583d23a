// The one place database URLs are built: the embedded server's or DATABASE_URL's, both nodes of the
// high-availability mode in one multi-host URL, and the tools' admin connection.
import { loadEnv } from './checkout.ts';
import { configFromEnv, type Config } from './config.ts';

/**
 * DATABASE_URL's server, else the embedded one, as `user` when given (otherwise DATABASE_URL's own
 * credentials are kept).
 */
export function databaseUrl(cfg: Pick<Config, 'databaseUrl' | 'bindHost' | 'postgresPort'>, user?: { name: string; password: string }): string {
  if (!user && cfg.databaseUrl) return cfg.databaseUrl;
  const url = new URL(cfg.databaseUrl ?? `postgres://${cfg.bindHost}:${cfg.postgresPort}/postgres`);
  if (user) {
    url.username = encodeURIComponent(user.name);
    url.password = encodeURIComponent(user.password);
  }
  return url.toString();
}

/**
 * libpq's own limits for PostgREST's connections in the high-availability mode, so that a node cut off
 * by a network that drops packets silently costs seconds rather than TCP's minutes: a host that does
 * not accept a connection within 2 s is passed over for the next (connect_timeout; libpq waits forever
 * by default), and a connection whose server stops answering is closed after about 10 s, idle (TCP
 * keepalives after 4 s, 2 s apart, 3 probes) or not (tcp_user_timeout, 10 s of unacknowledged data).
 * PostgREST then connects anew, to the other node when this one is gone.
 * https://www.postgresql.org/docs/15/libpq-connect.html#LIBPQ-PARAMKEYWORDS
 */
export const READER_LIBPQ_TIMEOUTS = 'connect_timeout=2&keepalives=1&keepalives_idle=4&keepalives_interval=2&keepalives_count=3&tcp_user_timeout=10000';

/**
 * Every node of the high-availability mode (POSTGRES_PORT, then POSTGRES_STANDBY_PORT and
 * POSTGRES_THIRD_NODE_PORT when set) in one libpq multi-host URL as `user`: a client tries them in order and keeps the first session `attrs` accepts,
 * read-write for the writer, prefer-standby for PostgREST's reads. The nodes are on BIND_HOST, or on
 * `nodeHosts` when each has an address of its own.
 * https://www.postgresql.org/docs/15/libpq-connect.html#LIBPQ-MULTIPLE-HOSTS
 */
export function haDatabaseUrl(cfg: Pick<Config, 'bindHost' | 'postgresHa'> & { nodeHosts?: string[] }, user: { name: string; password: string },
  attrs: 'read-write' | 'prefer-standby'): string {
  if (!cfg.postgresHa) throw new Error('haDatabaseUrl needs POSTGRES_HA');
  const hosts = cfg.postgresHa.nodePorts.map((port, i) => `${cfg.nodeHosts?.[i] ?? cfg.bindHost}:${port}`).join(',');
  return `postgres://${encodeURIComponent(user.name)}:${encodeURIComponent(user.password)}@${hosts}/postgres?${attrs === 'prefer-standby' ? `${READER_LIBPQ_TIMEOUTS}&` : ''}target_session_attrs=${attrs}`;
}

/** The admin connection of the tools: DATABASE_URL, else the embedded server of `npm start` (which must be running). */
export function adminDatabaseUrl(env = loadEnv()): string {
  if (env.DATABASE_URL) return env.DATABASE_URL;
  if (!env.POSTGRES_PASSWORD) throw new Error('No database: set DATABASE_URL, or run `npm start` (which creates .env) first.');
  return databaseUrl(configFromEnv(env, ['POSTGRES_PASSWORD']), { name: 'postgres', password: env.POSTGRES_PASSWORD });
}
