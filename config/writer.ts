// The writer's configuration. It reads the same environment (process env over .env) as `npm start`,
// so both reach the same database; only the Polymarket variables are the writer's own.
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import path from 'node:path';
import { ROOT_DIR } from './checkout.ts';
import { configFromEnv } from './config.ts';
import { databaseUrl, haDatabaseUrl } from './database-urls.ts';
import type { Env } from './settings.ts';

export type SourceName = 'demo' | 'polymarket' | 'none';

/** The writer's log levels, from the least severe. */
export type Level = 'debug' | 'info' | 'warn' | 'error';

export interface PolymarketConfig {
  apiKey: string;
  secret: string;
  passphrase: string;
  /** Address the API key is bound to (sent as POLY_ADDRESS). */
  address: string;
  /** 0 EOA, 1 POLY_PROXY, 2 POLY_GNOSIS_SAFE, 3 deposit wallet. */
  signatureType: number;
  /** Funder / proxy (profile) address: the Data API's `user`; also sent as maker_address when set. */
  funder: string;
  funderExplicit: boolean;
  clobHost: string;
  dataApiHost: string;
  /** Polygon JSON-RPC endpoint; when set, cash is the collateral token's on-chain balance of the funder. */
  polygonRpcUrl: string | undefined;
  /** The collateral ERC-20 (6 decimals) whose balance is cash. */
  collateralToken: string;
  timeoutMs: number;
  retries: number;
  retryBaseMs: number;
  /** How long a matching-engine restart (HTTP 425) is waited out. */
  restartWaitMs: number;
  /** A capital snapshot moving cash or at-stake by more than this share, with no activity to explain it, is held back. */
  capitalMaxJumpShare: number;
}

export interface WriterConfig {
  source: SourceName;
  /** Connection string of the writer's own role. */
  databaseUrl: string;
  /**
   * The name this writer's heartbeats carry, published in landing_health: WRITER_NAME, else a random
   * one per process, so operators can tell writers apart without any host being revealed.
   */
  name: string;
  /** Accrual, breadth and capital every this many ms (WRITER_INTERVAL_MINUTES). */
  intervalMs: number;
  /** A heartbeat every this many ms (WRITER_HEARTBEAT_SECONDS). */
  heartbeatMs: number;
  /** A standby says it is still waiting for the writer lock every this many ms (WRITER_STANDBY_LOG_SECONDS). */
  standbyLogMs: number;
  /**
   * A step (heartbeat or cycle) running longer than this many ms has stalled (WRITER_STALL_SECONDS):
   * the writer gives up the writer lock, so a standby takes over from a writer stuck in a step.
   */
  stallMs: number;
  /** The least severe level the writer logs (WRITER_LOG_LEVEL). */
  logLevel: Level;
  /** The import refuses dates and timestamps before 1 January of this year. */
  importEarliestYear: number;
  polymarket: PolymarketConfig | undefined;
  /** Where a writer kept the openings of its reward-transfer commitments in files before they moved into the database: reward-transfers/ under DATA_DIR. */
  transfersDir: string;
  /** OPENINGS_KEY, as text: the key the openings are sealed under in the database (contract/audit/transfer-vault.ts checks its form); none: unset. */
  openingsKey: string | undefined;
  /** The transparency log's signer: its key, origins and state file; none without LOG_SIGNING_KEY (the log is then appended, not signed). */
  log: LogSettings | undefined;
}

export interface LogSettings {
  /** LOG_SIGNING_KEY: the log's own Ed25519 key (PKCS#8 DER, base64url). */
  signingKey: string;
  /** The site's origin and LOG_ORIGIN, from which the log's origins are made until its first real checkpoint fixes one. */
  origins: { siteUrl: string; logOrigin: string | undefined };
  /** LOG_SIGNER_STATE: the file where the signer keeps the last checkpoint it signed; none: it keeps none. */
  stateFile: string | undefined;
  /** LOG_POLICY: the witness policy's file (https://c2sp.org/tlog-policy); none: the log is not witnessed. */
  policyFile: string | undefined;
}

/** pUSD, the collateral of CLOB V2 (6 decimals, 1:1 USDC): https://docs.polymarket.com/v2-migration */
const PUSD = '0xC011a7E12a19f7B1f670d46F03B03f3342E82DFB';

/**
 * The writer's settings where the environment leaves them unset. .env.example, docker-compose.yml,
 * the README, the docs and the CLI's help show these values; tests/stack/config.test.ts holds them to it.
 */
export const WRITER_DEFAULTS = {
  WRITER_INTERVAL_MINUTES: 5,
  WRITER_HEARTBEAT_SECONDS: 60,
  WRITER_STANDBY_LOG_SECONDS: 60,
  // Beyond the longest step a healthy writer takes: a cycle that waits out a matching-engine restart
  // (POLYMARKET_RESTART_WAIT_SECONDS) and retries each of its calls stays well under ten minutes.
  WRITER_STALL_SECONDS: 600,
  IMPORT_EARLIEST_YEAR: 2020,
  WRITER_LOG_LEVEL: 'info',
  SIGNATURE_TYPE: 0,
  CLOB_HOST: 'https://clob.polymarket.com',
  DATA_API_HOST: 'https://data-api.polymarket.com',
  COLLATERAL_TOKEN_ADDRESS: PUSD,
  POLYMARKET_TIMEOUT_MS: 10_000,
  POLYMARKET_RETRIES: 4,
  POLYMARKET_RETRY_BASE_MS: 1000,
  POLYMARKET_RESTART_WAIT_SECONDS: 180,
  CAPITAL_MAX_JUMP_SHARE: 0.5,
} as const;

type Defaults = typeof WRITER_DEFAULTS;
type NumberSetting = { [K in keyof Defaults]: Defaults[K] extends number ? K : never }[keyof Defaults];

const CREDENTIALS = ['CLOB_API_KEY', 'CLOB_SECRET', 'CLOB_PASSPHRASE', 'POLY_ADDRESS'] as const;

function positiveNumber(env: Env, name: NumberSetting): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return WRITER_DEFAULTS[name];
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got "${raw}".`);
  return value;
}

const LEVELS: readonly Level[] = ['debug', 'info', 'warn', 'error'];

function logLevel(env: Env): Level {
  const raw = env.WRITER_LOG_LEVEL || WRITER_DEFAULTS.WRITER_LOG_LEVEL;
  if (!LEVELS.includes(raw as Level)) throw new Error(`WRITER_LOG_LEVEL must be one of ${LEVELS.join(', ')}, got "${raw}".`);
  return raw as Level;
}

function year(env: Env, name: 'IMPORT_EARLIEST_YEAR'): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return WRITER_DEFAULTS[name];
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > 9999) throw new Error(`${name} must be a year from 1 to 9999, got "${raw}".`);
  return value;
}

function host(env: Env, name: 'CLOB_HOST' | 'DATA_API_HOST'): string {
  const raw = env[name] || WRITER_DEFAULTS[name];
  try {
    return new URL(raw).origin;
  } catch {
    throw new Error(`${name} must be an absolute http(s) URL, got "${raw}".`);
  }
}

function url(env: Env, name: string): string {
  const raw = env[name]!;
  try {
    const parsed = new URL(raw);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http');
    return parsed.toString();
  } catch {
    throw new Error(`${name} must be an absolute http(s) URL, got "${raw}".`);
  }
}

function address(env: Env, name: 'COLLATERAL_TOKEN_ADDRESS'): string {
  const raw = env[name] || WRITER_DEFAULTS[name];
  if (!/^0x[0-9a-fA-F]{40}$/.test(raw)) throw new Error(`${name} must be a 0x-prefixed 40-hex-digit address.`);
  return raw;
}

/** The writer role's connection: WRITER_DATABASE_URL, else derived from the stack's database settings. */
function writerDatabaseUrl(env: Env): string {
  if (env.WRITER_DATABASE_URL) return env.WRITER_DATABASE_URL;
  const cfg = configFromEnv(env, ['WRITER_DB_PASSWORD']);
  const user = { name: 'stats_writer', password: cfg.WRITER_DB_PASSWORD };
  return cfg.postgresHa ? haDatabaseUrl(cfg, user, 'read-write') : databaseUrl(cfg, user);
}

export function polymarketFromEnv(env: Env): PolymarketConfig {
  const missing = CREDENTIALS.filter((name) => !env[name]);
  if (missing.length > 0) {
    throw new Error(`The polymarket source needs ${missing.join(', ')} (see .env.example); set them, or WRITER_SOURCE=none to feed data by import only.`);
  }
  const signatureType = Number(env.SIGNATURE_TYPE || WRITER_DEFAULTS.SIGNATURE_TYPE);
  if (![0, 1, 2, 3].includes(signatureType)) throw new Error(`SIGNATURE_TYPE must be 0, 1, 2 or 3, got "${env.SIGNATURE_TYPE}".`);
  return {
    apiKey: env.CLOB_API_KEY!,
    secret: env.CLOB_SECRET!,
    passphrase: env.CLOB_PASSPHRASE!,
    address: env.POLY_ADDRESS!,
    signatureType,
    funder: env.FUNDER_ADDRESS || env.POLY_ADDRESS!,
    funderExplicit: Boolean(env.FUNDER_ADDRESS),
    clobHost: host(env, 'CLOB_HOST'),
    dataApiHost: host(env, 'DATA_API_HOST'),
    polygonRpcUrl: env.POLYGON_RPC_URL ? url(env, 'POLYGON_RPC_URL') : undefined,
    collateralToken: address(env, 'COLLATERAL_TOKEN_ADDRESS'),
    timeoutMs: positiveNumber(env, 'POLYMARKET_TIMEOUT_MS'),
    retries: Math.floor(positiveNumber(env, 'POLYMARKET_RETRIES')),
    retryBaseMs: positiveNumber(env, 'POLYMARKET_RETRY_BASE_MS'),
    restartWaitMs: positiveNumber(env, 'POLYMARKET_RESTART_WAIT_SECONDS') * 1000,
    capitalMaxJumpShare: positiveNumber(env, 'CAPITAL_MAX_JUMP_SHARE'),
  };
}

/** What a writer's name may hold: it is published, so a plain short token. */
export const WRITER_NAME_PATTERN = /^[A-Za-z0-9._-]{1,32}$/;

/**
 * WRITER_NAME, checked, or `writer-` and 8 random hex digits. The name is public (landing_health), so
 * it must not say where the writer runs: an IP address or this machine's host name is refused.
 */
export function writerName(env: Env): string {
  const raw = env.WRITER_NAME;
  if (raw === undefined || raw === '') return `writer-${randomBytes(4).toString('hex')}`;
  if (!WRITER_NAME_PATTERN.test(raw)) throw new Error(`WRITER_NAME must be 1 to 32 letters, digits, dots, dashes or underscores, got "${raw}".`);
  if (isIP(raw) || raw.toLowerCase() === hostname().toLowerCase()) {
    throw new Error('WRITER_NAME is published in landing_health: choose a name that is not a host name or an address.');
  }
  return raw;
}

/** WRITER_SOURCE, defaulting to polymarket when its credentials are set and demo otherwise. */
export function sourceFromEnv(env: Env): SourceName {
  const raw = env.WRITER_SOURCE || (env.CLOB_API_KEY ? 'polymarket' : 'demo');
  if (raw !== 'demo' && raw !== 'polymarket' && raw !== 'none') {
    throw new Error(`WRITER_SOURCE must be demo, polymarket or none, got "${raw}".`);
  }
  // Never fall back to demo figures silently while credentials are present.
  if (raw === 'demo' && env.CLOB_API_KEY) {
    throw new Error('WRITER_SOURCE=demo while CLOB_API_KEY is set: remove one of them, demo figures are never shown instead of a real account.');
  }
  return raw;
}

/**
 * The site's origin and LOG_ORIGIN, from which the log's origins are made until its first real
 * checkpoint fixes one. LOG_ORIGIN names a signed-note key (https://c2sp.org/signed-note): no spaces,
 * no plus sign, and no scheme.
 */
export function logOrigins(env: Env): LogSettings['origins'] {
  const origin = env.LOG_ORIGIN;
  if (origin && (/[\s+]/u.test(origin) || origin.includes('://'))) {
    throw new Error(`LOG_ORIGIN must be a schema-less name such as example.org/log, without spaces or "+", got "${origin}".`);
  }
  return { siteUrl: configFromEnv(env, []).siteUrl, logOrigin: origin || undefined };
}

function logSettings(env: Env): LogSettings | undefined {
  if (!env.LOG_SIGNING_KEY) return undefined;
  return {
    signingKey: env.LOG_SIGNING_KEY,
    origins: logOrigins(env),
    stateFile: env.LOG_SIGNER_STATE ? path.resolve(ROOT_DIR, env.LOG_SIGNER_STATE) : undefined,
    policyFile: env.LOG_POLICY ? path.resolve(ROOT_DIR, env.LOG_POLICY) : undefined,
  };
}

/** The folder where a writer kept the openings of its commitments before they moved into the database, under a data directory. */
export const vaultDir = (dataDir: string): string => path.join(dataDir, 'reward-transfers');

/** That folder under this configuration's data directory: the writer moves what it finds there into the database. */
export const transfersDir = (env: Env): string => vaultDir(configFromEnv(env, []).dataDir);

export function writerConfigFromEnv(env: Env): WriterConfig {
  const source = sourceFromEnv(env);
  return {
    source,
    databaseUrl: writerDatabaseUrl(env),
    name: writerName(env),
    intervalMs: positiveNumber(env, 'WRITER_INTERVAL_MINUTES') * 60_000,
    heartbeatMs: positiveNumber(env, 'WRITER_HEARTBEAT_SECONDS') * 1000,
    standbyLogMs: positiveNumber(env, 'WRITER_STANDBY_LOG_SECONDS') * 1000,
    stallMs: positiveNumber(env, 'WRITER_STALL_SECONDS') * 1000,
    importEarliestYear: year(env, 'IMPORT_EARLIEST_YEAR'),
    logLevel: logLevel(env),
    polymarket: source === 'polymarket' ? polymarketFromEnv(env) : undefined,
    transfersDir: transfersDir(env),
    openingsKey: env.OPENINGS_KEY || undefined,
    log: logSettings(env),
  };
}
