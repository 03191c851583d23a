// contract/: the formats every part agrees on: public paths, documents, record schemas, wording,
// the transparency log's and the audit's formats. It imports nothing of the project's.
//
// Every public path of both hosts, and the URLs the documents mention, derived once from the
// configured origins. The document templates refer to these by name ({{AUTH_MD_URL}}, …), so no URL
// is typed by hand in more than one place.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import { noteVerifierKey } from './log-key.ts';

/** The API reference's renderer, served under its version so the asset can be cached for good. */
export const REDOC_VERSION: string = createRequire(import.meta.url)('redoc/package.json').version;

/** The name part that stands for an asset's bytes: the first 16 hex digits of their SHA-256. */
export function contentDigest(bytes: string | Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex').slice(0, 16);
}

/** The API reference's own script (site/documents/api-docs.js, served as it is), named by its content
 * so it can be cached for good: a changed script is a new name, and the page that loads it names it. */
export const API_DOCS_SCRIPT_SOURCE = new URL('../site/documents/api-docs.js', import.meta.url);
const API_DOCS_SCRIPT_DIGEST = contentDigest(readFileSync(API_DOCS_SCRIPT_SOURCE));

/** The two public origins every absolute URL is made from: the site host and the API host. */
export interface Origins {
  siteUrl: string;
  apiUrl: string;
  /**
   * The real log's origin: the one its first real checkpoint fixed (withStoredLogOrigin), else
   * LOG_ORIGIN; unset: the site's host and the log's path.
   */
  logOrigin?: string;
}

/** Paths on the site host {base_url}: the edge's routes and the documents the renderer writes. */
export const SITE_PATHS = {
  HOME: '/',
  OPENAPI: '/openapi.json',
  OPENAPI_KEYLESS: '/openapi-keyless.json',
  API_CATALOG: '/.well-known/api-catalog',
  PRM: '/.well-known/oauth-protected-resource',
  AS_METADATA: '/.well-known/oauth-authorization-server',
  MCP_CARD: '/.well-known/mcp/server-card.json',
  SKILLS_INDEX: '/.well-known/agent-skills/index.json',
  SIG_DIRECTORY: '/.well-known/http-message-signatures-directory',
  LLMS_TXT: '/llms.txt',
  AUTH_MD: '/auth.md',
  API_DOCS: '/api-docs',
  API_DOCS_SCRIPT: `/assets/api-docs.${API_DOCS_SCRIPT_DIGEST}.js`,
  REDOC_BUNDLE: `/assets/redoc-${REDOC_VERSION}.standalone.js`,
  ROBOTS: '/robots.txt',
  SITEMAP: '/sitemap.xml',
  // Served by the edge server itself.
  AGENT_CARD: '/.well-known/agent-card.json',
  INDEX_MD: '/index.md',
  SITE_API: '/api/',
  SITE_STATS: '/api/stats',
  SITE_HEALTH: '/api/health',
  SITE_HISTORY: '/api/history',
  SITE_HISTORY_CSV: '/api/history.csv',
  FEED: '/feed.xml',
  BADGE: '/badge.svg',
  OG_IMAGE: '/og.png',
  MCP: '/mcp',
  A2A: '/a2a',
  // The transparency log (https://c2sp.org/tlog-tiles): its page, checkpoint, tiles and receipts.
  LOG: '/log/',
  LOG_DEMO: '/log/demo/',
  LOG_CHECKPOINT: '/log/checkpoint',
  LOG_CHECKPOINTS: '/log/checkpoint/',
  LOG_POLICY: '/log/policy',
  LOG_TILES: '/log/tile/',
  LOG_PROOF: '/log/proof/',
  LOG_VERIFIER: '/log/verify.mjs',
  // Every independent audit attestation published for the log, verbatim.
  LOG_AUDITS: '/log/audits',
} as const;

/** Paths on the API host {api_url}. */
export const API_PATHS = {
  REST_BASE: '/rest/v1',
  STATS: '/rest/v1/rpc/landing_stats',
  HEALTH: '/rest/v1/rpc/landing_health',
  HISTORY: '/rest/v1/rpc/landing_history',
  LOG: '/rest/v1/rpc/landing_log',
  PRM: '/.well-known/oauth-protected-resource',
  AUTH_ISSUER: '/auth/v1',
  // RFC 8414 §3.1: the well-known name goes between the host and the issuer's path.
  AS_METADATA: '/.well-known/oauth-authorization-server/auth/v1',
} as const;

/** The edge's own routes that only the API host's gateway calls, never clients. */
export const EDGE_PATHS = {
  /** Everything under it is the API host's alone: the site host answers it with a 404. */
  API_HOST_PREFIX: '/api-host/',
  /**
   * Where the API host's gateway fills a cached record from: this, then the record's function. The
   * edge fetches it from PostgREST, compresses it and signs it for the API host.
   */
  API_HOST_RPC: '/api-host/rpc/',
} as const;

/**
 * A record a gateway keeps in its microcache, one entry per content coding, filled by the edge,
 * which compresses and signs each answer. Its nginx location is generated from the row
 * (site/render/locations.ts), the edge keeps its entries warm, and the API host's 404 lists it.
 */
export interface CachedRecord {
  /** The gateway that serves it: the API host (behind the key, GET or POST) or the site host (GET). */
  host: 'api' | 'site';
  /** Its public path there. The last segment names it: its cache key's first part, and on the API host its SQL function. */
  path: string;
  /**
   * Whether the query string selects the answer (the history's from/to), so that it keys the entry
   * as sent; otherwise one entry answers every query. The API host's records take no arguments at
   * all: no body or {} is the one call (the gateway answers anything else with a 400).
   */
  query: boolean;
}

/**
 * Every cached record of both hosts. A new one is its path above and a row here for each host that
 * serves it; the edge fills the API host's from the row alone, and the site's with a handler of its own.
 */
export const CACHED_RECORDS: readonly CachedRecord[] = [
  { host: 'api', path: API_PATHS.STATS, query: false },
  { host: 'api', path: API_PATHS.HISTORY, query: false },
  { host: 'api', path: API_PATHS.LOG, query: false },
  { host: 'site', path: SITE_PATHS.SITE_STATS, query: false },
  { host: 'site', path: SITE_PATHS.SITE_HISTORY, query: true },
  { host: 'site', path: SITE_PATHS.SITE_HISTORY_CSV, query: true },
];

/** A record's name: the last segment of its path (landing_stats, history.csv). */
export function recordName(record: CachedRecord): string {
  return record.path.slice(record.path.lastIndexOf('/') + 1);
}

/** The cached records' paths by host, as the warm keeper asks for them. */
export const CACHED_RECORD_PATHS = {
  site: CACHED_RECORDS.filter((r) => r.host === 'site').map((r) => r.path),
  api: CACHED_RECORDS.filter((r) => r.host === 'api').map((r) => r.path),
};

/** Where the skills index lists a skill's SKILL.md (agent-skills discovery 0.2.0, https://schemas.agentskills.io/discovery/0.2.0/schema.json). */
export function skillPath(name: string): string {
  return SITE_PATHS.SKILLS_INDEX.replace(/index\.json$/, `${name}/SKILL.md`);
}

/**
 * The transparency log's origin (https://c2sp.org/tlog-checkpoint): the origin set (LOG_ORIGIN, or
 * the one the log's first real checkpoint fixed, see withStoredLogOrigin), else the site's host and
 * the log's path, schema-less. The demo nights' log is a different log, with an origin that says so.
 * The log's key is named after it.
 */
export function logOrigin(cfg: Pick<Origins, 'siteUrl' | 'logOrigin'>, demo: boolean): string {
  const real = cfg.logOrigin || `${new URL(cfg.siteUrl).host}${SITE_PATHS.LOG.replace(/\/$/, '')}`;
  return demo ? `${real}/demo` : real;
}

/**
 * The origins with the real log's origin as its first real checkpoint fixed it (`stored`, the first
 * line of that checkpoint's note, which the database gives as stats.log_origin()). An origin names a
 * log for life: once a real checkpoint is signed, every later one, every document and every witness
 * policy names that origin, whatever SITE_URL has become since. A LOG_ORIGIN that names another is
 * refused with both named. Before the first real checkpoint (none stored) the origins are as given.
 * The demo log, which is never witnessed and goes with the demo data, is `<origin in force>/demo`.
 */
export function withStoredLogOrigin<T extends Pick<Origins, 'siteUrl' | 'logOrigin'>>(cfg: T, stored: string | null | undefined): T {
  if (!stored) return cfg;
  if (cfg.logOrigin && cfg.logOrigin !== stored) {
    throw new Error(`LOG_ORIGIN is "${cfg.logOrigin}", but the transparency log's origin is "${stored}", fixed by its first checkpoint: ` +
      `an origin names a log for life, so set LOG_ORIGIN=${stored} or remove it, and start again.`);
  }
  return { ...cfg, logOrigin: stored };
}

/**
 * The log's origin and verifier key (https://c2sp.org/signed-note#verifier-keys), as witnesses and
 * readers pin them: the key of the log's signer, named after the origin `cfg` makes.
 */
export async function logIdentity(cfg: Pick<Origins, 'siteUrl' | 'logOrigin'>, publicKey: Uint8Array, demo: boolean): Promise<{ origin: string; vkey: string }> {
  const origin = logOrigin(cfg, demo);
  return { origin, vkey: await noteVerifierKey(origin, publicKey) };
}

/** Whether a URL names its host by a loopback or IP address (localhost, 127.0.0.1, [::1], 203.0.113.5): not a name a site keeps. */
export function namedByAddress(url: string): boolean {
  const host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return isIP(host) !== 0 || host === 'localhost' || host.endsWith('.localhost');
}

/**
 * What the owner hears (the start banner, `npm run writer -- check`) while no real checkpoint has
 * fixed the log's origin and the origin would come from a SITE_URL that is a loopback or IP address,
 * with no LOG_ORIGIN: the first real checkpoint will fix that name for good. Undefined otherwise.
 */
export function unfixedLogOriginNotice(cfg: Pick<Origins, 'siteUrl' | 'logOrigin'>): string | undefined {
  if (cfg.logOrigin || !namedByAddress(cfg.siteUrl)) return undefined;
  return `The transparency log's name is not fixed yet: its first real checkpoint will fix it as ${logOrigin(cfg, false)}, ` +
    `made from SITE_URL ${cfg.siteUrl}, and the log keeps it for good, also after the site moves. ` +
    'To name the log after the address it will have, set LOG_ORIGIN in .env (such as stats.example.org/log) before the first real night is written.';
}

/** Where a log's files are served: the real log under /log/, the demo log under /log/demo/. */
export function logPrefix(demo: boolean): string {
  return demo ? SITE_PATHS.LOG_DEMO : SITE_PATHS.LOG;
}

export type UrlName = `${keyof typeof SITE_PATHS}_URL` | `API_${keyof typeof API_PATHS}_URL` | 'SITE_URL' | 'API_URL';

/** Absolute URLs by template name: SITE_PATHS.X -> X_URL, API_PATHS.X -> API_X_URL. */
export function publicUrls(cfg: Origins): Record<UrlName, string> {
  const urls: Record<string, string> = { SITE_URL: cfg.siteUrl, API_URL: cfg.apiUrl };
  for (const [name, p] of Object.entries(SITE_PATHS)) urls[`${name}_URL`] = cfg.siteUrl + p;
  for (const [name, p] of Object.entries(API_PATHS)) urls[`API_${name}_URL`] = cfg.apiUrl + p;
  // The site origin itself, as scanners and RFC 9728 compare it: no trailing slash.
  urls.HOME_URL = `${cfg.siteUrl}/`;
  return urls as Record<UrlName, string>;
}
