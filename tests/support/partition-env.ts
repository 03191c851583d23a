// What the service's programs on the partition hosts are given: the environment of a node of the
// service and of a writer, from the cluster's settings and its databases' URLs.
import { chmodSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../../config/config.ts';
import type { Env } from '../../config/settings.ts';
import type { HaDatabase } from '../../stack/ha.ts';
import type { Side } from './partition-topology.ts';

/** The ports every node of the service listens on, each in its own namespace. */
export const SITE_PORT = 8080;
export const API_PORT = 54321;

/** The environment of a node of the service on `side`: the shared secrets and public URLs, its own data directory. */
export function nodeEnv(cfg: Config, ha: HaDatabase, dir: string, side: Side): Env {
  const dataDir = path.join(dir, `node-${side.name}`);
  mkdirSync(dataDir, { mode: 0o755 });
  chmodSync(dataDir, 0o755);
  return {
    JWT_SECRET: cfg.JWT_SECRET, ANON_KEY: cfg.ANON_KEY, AUTHENTICATOR_PASSWORD: cfg.AUTHENTICATOR_PASSWORD, WRITER_DB_PASSWORD: cfg.WRITER_DB_PASSWORD,
    POSTGRES_PASSWORD: cfg.POSTGRES_PASSWORD, HTTP_SIG_PRIVATE_KEY: cfg.HTTP_SIG_PRIVATE_KEY, HTTP_SIG_PUBLIC_KEY: cfg.HTTP_SIG_PUBLIC_KEY,
    LOG_SIGNING_KEY: cfg.LOG_SIGNING_KEY, LOG_PUBLIC_KEY: cfg.LOG_PUBLIC_KEY, LOG_ORIGIN: cfg.logOrigin,
    SITE_URL: cfg.siteUrl, API_URL: cfg.apiUrl, SITE_PORT: String(SITE_PORT), API_PORT: String(API_PORT),
    DATA_DIR: dataDir, NGINX_WORKERS: '1', EDGE_WORKERS: '1',
    // Readers see the database's state within a second or two: the caches hold an answer for 1 s.
    API_MICROCACHE_SECONDS: '1', SITE_MICROCACHE_SECONDS: '1', EDGE_HEALTH_TTL_SECONDS: '1', EDGE_UPSTREAM_TIMEOUT_SECONDS: '3',
    AUTHENTICATOR_URL: ha.urlFor('authenticator'),
  };
}

/** The environment `npm run writer` has on `side`'s writer machine: the stack's secrets, every node in its URL, its own signer state. */
export function writerEnv(cfg: Config, ha: HaDatabase, dir: string, side: Side, extra: Env = {}): Env {
  const dataDir = path.join(dir, `writer-${side.name}`);
  mkdirSync(dataDir, { recursive: true });
  return {
    JWT_SECRET: cfg.JWT_SECRET, ANON_KEY: cfg.ANON_KEY, AUTHENTICATOR_PASSWORD: cfg.AUTHENTICATOR_PASSWORD, WRITER_DB_PASSWORD: cfg.WRITER_DB_PASSWORD,
    POSTGRES_PASSWORD: cfg.POSTGRES_PASSWORD, HTTP_SIG_PRIVATE_KEY: cfg.HTTP_SIG_PRIVATE_KEY,
    LOG_SIGNING_KEY: cfg.LOG_SIGNING_KEY, SITE_URL: cfg.siteUrl, LOG_ORIGIN: cfg.logOrigin, OPENINGS_KEY: cfg.OPENINGS_KEY,
    DATA_DIR: dataDir, ENV_FILE: '/dev/null', DATABASE_URL: '',
    WRITER_DATABASE_URL: ha.urlFor('stats_writer'),
    LOG_SIGNER_STATE: path.join(dataDir, 'log-signer.json'),
    LOG_POLICY: path.join(dir, 'log.policy'),
    WRITER_SOURCE: 'none',
    ...extra,
  };
}
