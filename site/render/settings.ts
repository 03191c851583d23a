// The renderer's settings, read from the environment it is started with: the local stack hands it
// its own configuration (stack/site.ts), docker-compose's site service the deployment's.
import type { DocumentsConfig } from './render.ts';

export type SiteEnv = Record<string, string | undefined>;

const REQUIRED = ['SITE_URL', 'API_URL', 'ANON_KEY', 'LOG_PUBLIC_KEY'] as const;

/** An origin as given (a trailing slash allowed), without it; anything with a path is refused. */
function origin(env: SiteEnv, name: 'SITE_URL' | 'API_URL'): string {
  const raw = env[name]!;
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (!url || !/^https?:$/.test(url.protocol) || url.pathname !== '/' || url.search || url.hash) {
    throw new Error(`${name} must be an http(s) origin without a path, got "${raw}".`);
  }
  return url.origin;
}

/** Throws with a sentence naming the variable when one is missing or malformed. */
export function documentsConfigFromEnv(env: SiteEnv): DocumentsConfig {
  const missing = REQUIRED.filter((name) => !env[name]);
  if (missing.length) throw new Error(`${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} not set: the documents are rendered from them.`);
  return {
    siteUrl: origin(env, 'SITE_URL'),
    apiUrl: origin(env, 'API_URL'),
    ANON_KEY: env.ANON_KEY!,
    LOG_PUBLIC_KEY: env.LOG_PUBLIC_KEY!,
    logOrigin: env.LOG_ORIGIN || undefined,
    policyUpdated: env.POLICY_UPDATED || undefined,
  };
}
