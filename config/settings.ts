// The stack's defaults, and the readers of one setting that fall back to them and refuse, with a
// sentence naming the variable, a malformed value.

export type Env = Record<string, string | undefined>;

/**
 * The stack's settings where the environment leaves them unset. .env.example, docker-compose.yml,
 * the README, the docs and the help texts show these values; tests/stack/config.test.ts holds them to it.
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

export function count(env: Env, name: NumberSetting, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return STACK_DEFAULTS[name];
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be a whole number of at least ${min}, got "${raw}".`);
  return value;
}

export function port(env: Env, name: NumberSetting): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return STACK_DEFAULTS[name];
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > 65535) {
    throw new Error(`${name} must be a TCP port number (1-65535), got "${raw}".`);
  }
  return value;
}

export function rate(env: Env, name: 'SITE_RATE_LIMIT'): string {
  const raw = env[name] || STACK_DEFAULTS[name];
  if (!/^\d+r\/[sm]$/.test(raw)) throw new Error(`${name} must be a rate like 10r/s or 600r/m, got "${raw}".`);
  return raw;
}
