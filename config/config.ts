// config/: the configuration of every program on the owner's machine, from the environment over
// .env over the embedded defaults. It imports nothing of the project's.
//
// One configuration for every part of the stack: the process environment over `.env` over the
// embedded defaults. Variable names are the ones `.env.example` documents and docker-compose reads.
import path from 'node:path';
import { defaultDataDir, ROOT_DIR } from './checkout.ts';
import { origin, tls, type TlsConfig } from './origins.ts';
import { count, port, rate, STACK_DEFAULTS, type Env } from './settings.ts';

export interface Secrets {
  /** HS256 secret PostgREST verifies JWTs with; never published. */
  JWT_SECRET: string;
  /** The public anon key (an HS256 JWT, role anon); published by design. */
  ANON_KEY: string;
  /** Password of PostgREST's login role `authenticator`. */
  AUTHENTICATOR_PASSWORD: string;
  /** Password of the writer's login role `stats_writer`. */
  WRITER_DB_PASSWORD: string;
  /** Superuser password of the embedded Postgres cluster. */
  POSTGRES_PASSWORD: string;
  /** Password of `stats_replicator`, the role a read replica streams from the primary as. */
  REPLICATION_PASSWORD: string;
  /** Ed25519 private key (PKCS#8 DER, base64url) whose public half the site publishes. */
  HTTP_SIG_PRIVATE_KEY: string;
  /** Its public half (the raw key, base64url: a JWK's x), derived by `npm run keys`; public by design. */
  HTTP_SIG_PUBLIC_KEY: string;
  /**
   * Earlier signing keys, comma-separated, each `<public half>@<ISO time it was retired>`: the key
   * directory lists them with that time, so what they signed before it still verifies.
   */
  HTTP_SIG_RETIRED_PUBLIC_KEYS: string;
  /** The transparency log's own Ed25519 private key (PKCS#8 DER, base64url): it signs the checkpoints, and nothing else does. */
  LOG_SIGNING_KEY: string;
  /** Its public half (raw, base64url), derived by `npm run keys`: the log's verifier key is made from it. Public by design. */
  LOG_PUBLIC_KEY: string;
  /** 32 random bytes (base64url) sealing the openings of the reward-transfer commitments in the database; it signs nothing. */
  OPENINGS_KEY: string;
}

export interface Config extends Secrets {
  /** Public origin of the site host, {base_url}. */
  siteUrl: string;
  /** Public origin of the API host, {api_url}. */
  apiUrl: string;
  /** The real transparency log's origin (LOG_ORIGIN); unset: the site's host and the log's path. */
  logOrigin: string | undefined;
  /** Address every local listener binds to. */
  bindHost: string;
  sitePort: number;
  apiPort: number;
  edgePort: number;
  postgrestPort: number;
  /** PostgREST's admin server (/live, /ready), loopback only. */
  postgrestAdminPort: number;
  postgresPort: number;
  /**
   * POSTGRES_HA=pg_auto_failover: instead of one embedded server, a pg_auto_failover monitor
   * (POSTGRES_MONITOR_PORT) and two nodes (POSTGRES_PORT, POSTGRES_STANDBY_PORT) with automatic failover,
   * or three with POSTGRES_THIRD_NODE_PORT. `nodePorts` lists every node's port in that order.
   */
  postgresHa: { monitorPort: number; standbyPort: number; nodePorts: number[] } | undefined;
  /** Admin connection of an existing Postgres server; unset = embedded Postgres under dataDir. */
  databaseUrl: string | undefined;
  /**
   * PostgREST's login (the authenticator role) on a database that runs elsewhere, the primary or a
   * read replica: set, `npm start` runs only a node (PostgREST, edge, nginx), with no database,
   * migrations or writer of its own.
   */
  nodeDatabaseUrl: string | undefined;
  /** Where the embedded database, the rendered nginx prefix and run-time files live. */
  dataDir: string;
  /** PostgREST connection pool size. */
  postgrestPool: number;
  /** nginx worker processes. */
  nginxWorkers: number;
  /** A particular nginx binary (NGINX_BIN); otherwise the first on PATH. */
  nginxBin: string | undefined;
  /** The access policy's last-updated date (POLICY_UPDATED, YYYY-MM-DD); otherwise the documents' default. */
  policyUpdated: string | undefined;
  /** Seconds nginx keeps a landing_stats answer; 0 turns the microcache off (the benchmark's uncached path). */
  apiMicrocacheSeconds: number;
  /** Seconds nginx keeps an /api/stats answer of the edge. */
  siteMicrocacheSeconds: number;
  /** Per-address rate limit of the site host (nginx limit_req rate, e.g. "10r/s") and its burst. */
  siteRateLimit: string;
  siteRateBurst: number;
  /** Limit loopback too (by default loopback is exempt, so local benchmarks measure the service). */
  siteRateLimitLoopback: boolean;
  /** The edge server's own tunables (edge/config.ts), passed through as set. */
  edgeTunables: Record<string, string>;
  /** HTTPS, when SITE_URL and API_URL are both https:// URLs of DNS names; undefined: plain HTTP on SITE_PORT and API_PORT. */
  tls: TlsConfig | undefined;
}

const EDGE_TUNABLES = ['EDGE_STATS_TTL_SECONDS', 'EDGE_HEALTH_TTL_SECONDS', 'EDGE_UPSTREAM_TIMEOUT_SECONDS', 'EDGE_WARM_SECONDS', 'EDGE_WORKERS'];

/** The value of POSTGRES_HA that runs the database with automatic failover (stack/ha.ts). */
export const HA_MODE = 'pg_auto_failover';

function highAvailability(env: Env): Config['postgresHa'] {
  const mode = env.POSTGRES_HA ?? '';
  if (mode === '') return undefined;
  if (mode !== HA_MODE) throw new Error(`POSTGRES_HA must be empty (one embedded server) or "${HA_MODE}", got "${mode}".`);
  if (env.DATABASE_URL) throw new Error('POSTGRES_HA runs the database itself: unset DATABASE_URL, or unset POSTGRES_HA to use that server.');
  const standbyPort = port(env, 'POSTGRES_STANDBY_PORT');
  // Unset: two nodes. Set: a third, so a commit still has a standby to wait for while one is down.
  const third = env.POSTGRES_THIRD_NODE_PORT ?? '';
  const thirdPort = third === '' ? [] : [Number(third)];
  if (thirdPort.some((p) => !Number.isInteger(p) || p < 1 || p > 65535)) throw new Error(`POSTGRES_THIRD_NODE_PORT must be a TCP port number (1-65535), got "${third}".`);
  return { monitorPort: port(env, 'POSTGRES_MONITOR_PORT'), standbyPort, nodePorts: [port(env, 'POSTGRES_PORT'), standbyPort, ...thirdPort] };
}

export const SECRET_NAMES = ['JWT_SECRET', 'ANON_KEY', 'AUTHENTICATOR_PASSWORD', 'WRITER_DB_PASSWORD', 'POSTGRES_PASSWORD', 'HTTP_SIG_PRIVATE_KEY'] as const;

/**
 * Builds the configuration; throws with a sentence naming the variable when one is malformed or a
 * required secret is missing. A part that needs only some secrets (the writer, the document build)
 * names them, so a deployment hands each container only its own; the others are then empty.
 */
export function configFromEnv(env: Env, required: readonly (keyof Secrets)[] = SECRET_NAMES): Config {
  const bindHost = env.BIND_HOST || STACK_DEFAULTS.BIND_HOST;
  const sitePort = port(env, 'SITE_PORT');
  const apiPort = port(env, 'API_PORT');
  const missing = required.filter((name) => !env[name]);
  if (missing.length > 0) {
    throw new Error(`Missing ${missing.join(', ')}: run \`npm run keys\` to generate them into .env.`);
  }
  const siteUrl = origin(env, 'SITE_URL', `http://${bindHost}:${sitePort}`);
  const apiUrl = origin(env, 'API_URL', `http://${bindHost}:${apiPort}`);
  return {
    siteUrl,
    apiUrl,
    tls: tls(env, siteUrl, apiUrl),
    logOrigin: env.LOG_ORIGIN || undefined,
    bindHost,
    sitePort,
    apiPort,
    edgePort: port(env, 'EDGE_PORT'),
    postgrestPort: port(env, 'POSTGREST_PORT'),
    postgrestAdminPort: port(env, 'POSTGREST_ADMIN_PORT'),
    postgresPort: port(env, 'POSTGRES_PORT'),
    postgresHa: highAvailability(env),
    databaseUrl: env.DATABASE_URL || undefined,
    nodeDatabaseUrl: env.NODE_DATABASE_URL || undefined,
    dataDir: env.DATA_DIR ? path.resolve(ROOT_DIR, env.DATA_DIR) : defaultDataDir(),
    postgrestPool: count(env, 'POSTGREST_DB_POOL', 1),
    nginxWorkers: count(env, 'NGINX_WORKERS', 1),
    nginxBin: env.NGINX_BIN || undefined,
    policyUpdated: env.POLICY_UPDATED || undefined,
    apiMicrocacheSeconds: count(env, 'API_MICROCACHE_SECONDS'),
    siteMicrocacheSeconds: count(env, 'SITE_MICROCACHE_SECONDS', 1),
    siteRateLimit: rate(env, 'SITE_RATE_LIMIT'),
    siteRateBurst: count(env, 'SITE_RATE_BURST', 1),
    siteRateLimitLoopback: env.SITE_RATE_LIMIT_LOOPBACK === '1',
    edgeTunables: Object.fromEntries(EDGE_TUNABLES.filter((name) => env[name]).map((name) => [name, env[name]!])),
    JWT_SECRET: env.JWT_SECRET ?? '',
    ANON_KEY: env.ANON_KEY ?? '',
    AUTHENTICATOR_PASSWORD: env.AUTHENTICATOR_PASSWORD ?? '',
    WRITER_DB_PASSWORD: env.WRITER_DB_PASSWORD ?? '',
    POSTGRES_PASSWORD: env.POSTGRES_PASSWORD ?? '',
    REPLICATION_PASSWORD: env.REPLICATION_PASSWORD ?? '',
    HTTP_SIG_PRIVATE_KEY: env.HTTP_SIG_PRIVATE_KEY ?? '',
    HTTP_SIG_PUBLIC_KEY: env.HTTP_SIG_PUBLIC_KEY ?? '',
    HTTP_SIG_RETIRED_PUBLIC_KEYS: env.HTTP_SIG_RETIRED_PUBLIC_KEYS ?? '',
    LOG_SIGNING_KEY: env.LOG_SIGNING_KEY ?? '',
    LOG_PUBLIC_KEY: env.LOG_PUBLIC_KEY ?? '',
    OPENINGS_KEY: env.OPENINGS_KEY ?? '',
  };
}
