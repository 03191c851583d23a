// The edge's own configuration. It is deliberately smaller than config/config.ts: the edge
// holds the public anon key, the URLs and the key that signs its key directory, never the JWT
// secret or database passwords, so the process that faces the internet cannot leak what it never had.
import { isSocketAddress } from './gateway.ts';

export interface EdgeConfig {
  /** Public origin of the site host, {base_url}: printed in documents, cards and the page. */
  siteUrl: string;
  /** Public origin of the API host, {api_url}: printed, never called. */
  apiUrl: string;
  /** The real log's origin (LOG_ORIGIN), as the pages name it; unset: the site's host and the log's path. */
  logOrigin?: string;
  /** Where the edge reaches the API host: its local listener, an http origin or `unix:<socket path>` (./gateway.ts). */
  apiUpstream: string;
  /** Where the edge reaches PostgREST itself, to sign the API host's answers (PostgREST's default role is anon). */
  postgrestUpstream: string;
  /** The public anon key, sent to the API host in the `apikey` header. */
  anonKey: string;
  /** Ed25519 private key (PKCS#8 DER, base64url) whose public half the key directory publishes, signed with it. */
  httpSigPrivateKey: string;
  /** Retired signing keys, each `<JWK x>@<ISO time retired>`: the key directory keeps listing them, with that time. */
  httpSigRetiredPublicKeys: string[];
  /** How long one upstream answer serves every surface (REST, MCP, A2A, the page). */
  statsTtlMs: number;
  /** Health must be near-live: never cached for longer than a few seconds. */
  healthTtlMs: number;
  /** Upper bound on one upstream call, so a hung API host turns into "down", not a hung request. */
  upstreamTimeoutMs: number;
  /** Where the edge reaches the site host's gateway (as apiUpstream) to keep both gateways' microcaches warm; none: it does not. */
  siteGateway?: string;
  /** How often every cached answer of both gateways is asked for, to fill and refresh it; 0: never. */
  warmPeriodMs: number;
}

export type EdgeEnv = Record<string, string | undefined>;

function required(env: EdgeEnv, name: string): string {
  const value = env[name];
  if (!value) throw new Error(`${name} is not set: the edge needs it (the local stack passes it when it starts the edge).`);
  return value;
}

function seconds(env: EdgeEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback * 1000;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number of seconds >= 0, got "${raw}".`);
  return value * 1000;
}

const origin = (value: string) => new URL(value).origin;
/** A gateway's address: its socket as given, or an http URL's origin. */
const gateway = (value: string) => (isSocketAddress(value) ? value : origin(value));

export function edgeConfigFromEnv(env: EdgeEnv): EdgeConfig {
  return {
    siteUrl: origin(required(env, 'SITE_URL')),
    apiUrl: origin(required(env, 'API_URL')),
    logOrigin: env.LOG_ORIGIN || undefined,
    apiUpstream: gateway(required(env, 'EDGE_API_UPSTREAM')),
    postgrestUpstream: origin(required(env, 'EDGE_POSTGREST_UPSTREAM')),
    anonKey: required(env, 'ANON_KEY'),
    httpSigPrivateKey: required(env, 'HTTP_SIG_PRIVATE_KEY'),
    httpSigRetiredPublicKeys: (env.HTTP_SIG_RETIRED_PUBLIC_KEYS ?? '').split(',').map((key) => key.trim()).filter(Boolean),
    statsTtlMs: seconds(env, 'EDGE_STATS_TTL_SECONDS', 5),
    healthTtlMs: seconds(env, 'EDGE_HEALTH_TTL_SECONDS', 2),
    upstreamTimeoutMs: seconds(env, 'EDGE_UPSTREAM_TIMEOUT_SECONDS', 3),
    siteGateway: env.EDGE_SITE_GATEWAY ? gateway(env.EDGE_SITE_GATEWAY) : undefined,
    warmPeriodMs: seconds(env, 'EDGE_WARM_SECONDS', 2),
  };
}
