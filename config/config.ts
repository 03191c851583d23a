// One configuration for every part of the stack: the process environment over `.env` over the
// embedded defaults. Variable names are the ones `.env.example` documents and docker-compose reads.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseEnv } from 'node:util';

export const ROOT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Whether every directory from the root down to `dir` lets other users through (mode o+x). */
export function traversableByOthers(dir: string): boolean {
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    try {
      if ((statSync(d).mode & 0o001) === 0) return false;
    } catch {
      return false;
    }
    if (d === path.dirname(d)) return true;
  }
}

/**
 * Where the stack keeps its data by default: `.data` in the checkout. Run as root, Postgres and
 * nginx drop to unprivileged users (`postgres`, `nobody`) that must reach it; when the checkout lies
 * in a directory they cannot pass (e.g. under /root, mode 0700), the data lives under
 * /var/lib/public-stats instead, in a directory named after the checkout, kept across restarts.
 */
export function defaultDataDir(root = ROOT_DIR, isRoot = process.getuid?.() === 0): string {
  if (!isRoot || traversableByOthers(root)) return path.join(root, '.data');
  const key = createHash('sha256').update(root).digest('hex').slice(0, 10);
  return path.join('/var/lib/public-stats', `${path.basename(root)}-${key}`);
}

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
}

/**
 * HTTPS on the public origins: nginx answers both hosts on HTTPS_PORT with a certificate for both
 * names, and on HTTP_PORT only ACME's HTTP-01 challenges and a redirect to the https origin.
 */
export interface TlsConfig {
  /** The host names of SITE_URL and API_URL, which the certificate names. */
  siteHost: string;
  apiHost: string;
  /** Where nginx listens, on every address (they differ from the URLs' ports only behind port forwarding). */
  httpsPort: number;
  httpPort: number;
  /** The ACME server's directory, the account's contact, and a PEM bundle the ACME client trusts for that server's own TLS. */
  acmeDirectoryUrl: string;
  acmeEmail: string | undefined;
  acmeCaBundle: string | undefined;
  /** One's own certificate (full chain) and key instead of ACME; both or neither. */
  ownCertificate: { certFile: string; keyFile: string } | undefined;
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
   * (POSTGRES_MONITOR_PORT) and two nodes (POSTGRES_PORT, POSTGRES_STANDBY_PORT) with automatic failover.
   */
  postgresHa: { monitorPort: number; standbyPort: number } | undefined;
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

/**
 * The stack's settings where the environment leaves them unset. .env.example, docker-compose.yml,
 * the README, the docs and the help texts show these values; tests/deploy/config.test.ts holds them to it.
 */
export const STACK_DEFAULTS = {
  BIND_HOST: '127.0.0.1',
  SITE_PORT: 8080,
  API_PORT: 54321,
  EDGE_PORT: 54331,
  POSTGREST_PORT: 54330,
  POSTGREST_ADMIN_PORT: 54332,
  POSTGRES_PORT: 54329,
  POSTGRES_MONITOR_PORT: 54327,
  POSTGRES_STANDBY_PORT: 54328,
  POSTGREST_DB_POOL: 10,
  NGINX_WORKERS: 2,
  API_MICROCACHE_SECONDS: 5,
  SITE_MICROCACHE_SECONDS: 5,
  SITE_RATE_LIMIT: '10r/s',
  SITE_RATE_BURST: 100,
  HTTPS_PORT: 443,
  HTTP_PORT: 80,
  // Let's Encrypt's production directory (https://letsencrypt.org/docs/acme-protocol-updates/).
  ACME_DIRECTORY_URL: 'https://acme-v02.api.letsencrypt.org/directory',
} as const;

type Defaults = typeof STACK_DEFAULTS;
type NumberSetting = { [K in keyof Defaults]: Defaults[K] extends number ? K : never }[keyof Defaults];

const EDGE_TUNABLES = ['EDGE_STATS_TTL_SECONDS', 'EDGE_HEALTH_TTL_SECONDS', 'EDGE_UPSTREAM_TIMEOUT_SECONDS', 'EDGE_WARM_SECONDS', 'EDGE_WORKERS'];

function count(env: Env, name: NumberSetting, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return STACK_DEFAULTS[name];
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be a whole number of at least ${min}, got "${raw}".`);
  return value;
}

export type Env = Record<string, string | undefined>;

/** The file of secrets and settings: ENV_FILE, else `.env` in the checkout. */
export const envFilePath = (): string => process.env.ENV_FILE || path.join(ROOT_DIR, '.env');

/** Reads the env file (if any) under the process environment, which wins. */
export function loadEnv(envFile = envFilePath()): Env {
  const fromFile = existsSync(envFile) ? parseEnv(readFileSync(envFile, 'utf8')) : {};
  return { ...fromFile, ...process.env };
}

function port(env: Env, name: NumberSetting): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return STACK_DEFAULTS[name];
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > 65535) {
    throw new Error(`${name} must be a TCP port number (1-65535), got "${raw}".`);
  }
  return value;
}

/** The value of POSTGRES_HA that runs the database with automatic failover (stack/ha.ts). */
export const HA_MODE = 'pg_auto_failover';

function highAvailability(env: Env): Config['postgresHa'] {
  const mode = env.POSTGRES_HA ?? '';
  if (mode === '') return undefined;
  if (mode !== HA_MODE) throw new Error(`POSTGRES_HA must be empty (one embedded server) or "${HA_MODE}", got "${mode}".`);
  if (env.DATABASE_URL) throw new Error('POSTGRES_HA runs the database itself: unset DATABASE_URL, or unset POSTGRES_HA to use that server.');
  return { monitorPort: port(env, 'POSTGRES_MONITOR_PORT'), standbyPort: port(env, 'POSTGRES_STANDBY_PORT') };
}

function origin(env: Env, name: string, fallback: string): string {
  const raw = env[name] || fallback;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`${name} must be an absolute http(s) URL, got "${raw}".`);
  }
  if (url.pathname !== '/' || url.search || url.hash) {
    throw new Error(`${name} must be an origin without a path, got "${raw}".`);
  }
  return url.origin;
}

/** A name a public certificate can carry: not localhost (RFC 6761 keeps it local) and not an IP literal. */
function isDnsName(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  return isIP(bare) === 0 && bare !== 'localhost' && !bare.endsWith('.localhost');
}

/**
 * Why the public origins cannot be served as they are set, if they cannot: https on one only, https
 * on a name no certificate can carry, or one name for both hosts (told apart by name over https).
 */
function httpsRefusal(siteUrl: string, apiUrl: string): string | undefined {
  const site = new URL(siteUrl);
  const api = new URL(apiUrl);
  const https = [site, api].filter((url) => url.protocol === 'https:').length;
  if (https === 0) return undefined;
  if (https === 1) {
    return `SITE_URL (${siteUrl}) and API_URL (${apiUrl}) must both be https:// (the service then obtains a certificate for both names) or both http://; only one is https.`;
  }
  for (const [name, url] of [['SITE_URL', site], ['API_URL', api]] as const) {
    if (!isDnsName(url.hostname)) {
      return `${name} is https:// but its host ${url.hostname} is ${url.hostname.includes('localhost') ? 'localhost' : 'an IP address'}: a certificate needs a DNS name that points at this machine, such as stats.example.org.`;
    }
  }
  if (site.hostname === api.hostname) {
    return `SITE_URL and API_URL both name ${site.hostname}: over https the two hosts are told apart by name, so give the API its own, such as api.${site.hostname}.`;
  }
  return undefined;
}

/**
 * Refuses, with a sentence, public origins the stack cannot serve (httpsRefusal): checked when the
 * stack starts, not by every tool that reads the configuration (the writer reads only SITE_URL).
 */
export function assertServableOrigins(cfg: Pick<Config, 'siteUrl' | 'apiUrl'>): void {
  const refusal = httpsRefusal(cfg.siteUrl, cfg.apiUrl);
  if (refusal) throw new Error(refusal);
}

/** TLS settings when both public origins are https:// URLs of distinct DNS names. */
function tls(env: Env, siteUrl: string, apiUrl: string): TlsConfig | undefined {
  const site = new URL(siteUrl);
  const api = new URL(apiUrl);
  if (site.protocol !== 'https:' || api.protocol !== 'https:' || httpsRefusal(siteUrl, apiUrl)) return undefined;
  const certFile = env.TLS_CERT_FILE || undefined;
  const keyFile = env.TLS_KEY_FILE || undefined;
  if (Boolean(certFile) !== Boolean(keyFile)) throw new Error('TLS_CERT_FILE and TLS_KEY_FILE go together: set both (your own certificate and its key) or neither (a certificate from ACME).');
  const acmeDirectoryUrl = env.ACME_DIRECTORY_URL || STACK_DEFAULTS.ACME_DIRECTORY_URL;
  if (!/^https:\/\/[^/]/.test(acmeDirectoryUrl)) throw new Error(`ACME_DIRECTORY_URL must be the https:// URL of an ACME server's directory, got "${acmeDirectoryUrl}".`);
  return {
    siteHost: site.hostname,
    apiHost: api.hostname,
    httpsPort: port(env, 'HTTPS_PORT'),
    httpPort: port(env, 'HTTP_PORT'),
    acmeDirectoryUrl,
    acmeEmail: env.ACME_EMAIL || undefined,
    acmeCaBundle: env.ACME_CA_BUNDLE ? path.resolve(ROOT_DIR, env.ACME_CA_BUNDLE) : undefined,
    ownCertificate: certFile && keyFile ? { certFile: path.resolve(ROOT_DIR, certFile), keyFile: path.resolve(ROOT_DIR, keyFile) } : undefined,
  };
}

function rate(env: Env, name: 'SITE_RATE_LIMIT'): string {
  const raw = env[name] || STACK_DEFAULTS[name];
  if (!/^\d+r\/[sm]$/.test(raw)) throw new Error(`${name} must be a rate like 10r/s or 600r/m, got "${raw}".`);
  return raw;
}

/**
 * The one place database URLs are built: DATABASE_URL's server, else the embedded one, as `user`
 * when given (otherwise DATABASE_URL's own credentials are kept).
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
 * Both nodes of the high-availability mode (POSTGRES_PORT, then POSTGRES_STANDBY_PORT) in one libpq
 * multi-host URL as `user`: a client tries them in order and keeps the first session `attrs` accepts,
 * read-write for the writer, prefer-standby for PostgREST's reads. The nodes are on BIND_HOST, or on
 * `nodeHosts` when each has an address of its own.
 * https://www.postgresql.org/docs/15/libpq-connect.html#LIBPQ-MULTIPLE-HOSTS
 */
export function haDatabaseUrl(cfg: Pick<Config, 'bindHost' | 'postgresPort' | 'postgresHa'> & { nodeHosts?: [string, string] }, user: { name: string; password: string },
  attrs: 'read-write' | 'prefer-standby'): string {
  if (!cfg.postgresHa) throw new Error('haDatabaseUrl needs POSTGRES_HA');
  const [first, second] = cfg.nodeHosts ?? [cfg.bindHost, cfg.bindHost];
  const hosts = [`${first}:${cfg.postgresPort}`, `${second}:${cfg.postgresHa.standbyPort}`].join(',');
  return `postgres://${encodeURIComponent(user.name)}:${encodeURIComponent(user.password)}@${hosts}/postgres?${attrs === 'prefer-standby' ? `${READER_LIBPQ_TIMEOUTS}&` : ''}target_session_attrs=${attrs}`;
}

/** The admin connection of the tools: DATABASE_URL, else the embedded server of `npm start` (which must be running). */
export function adminDatabaseUrl(env = loadEnv()): string {
  if (env.DATABASE_URL) return env.DATABASE_URL;
  if (!env.POSTGRES_PASSWORD) throw new Error('No database: set DATABASE_URL, or run `npm start` (which creates .env) first.');
  return databaseUrl(configFromEnv(env, ['POSTGRES_PASSWORD']), { name: 'postgres', password: env.POSTGRES_PASSWORD });
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
  };
}
