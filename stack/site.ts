// The site's documents and both hosts' generated nginx locations, rendered by the site's own program
// (site/render/build.ts) with exactly the settings it reads: the public URLs, the anon key, the
// log's public key and origin, and the policy's date.
import path from 'node:path';
import { ROOT_DIR } from '../config/checkout.ts';
import type { Config } from '../config/config.ts';
import { runNode } from './processes.ts';

export const SITE_RENDERER = path.join(ROOT_DIR, 'site', 'render', 'build.ts');

/** Renders into `outDir`; what the renderer said, or an Error with its own words. */
export function renderSite(cfg: Config, outDir: string): Promise<string> {
  return runNode(SITE_RENDERER, [outDir], {
    SITE_URL: cfg.siteUrl,
    API_URL: cfg.apiUrl,
    ANON_KEY: cfg.ANON_KEY,
    LOG_PUBLIC_KEY: cfg.LOG_PUBLIC_KEY,
    ...(cfg.logOrigin ? { LOG_ORIGIN: cfg.logOrigin } : {}),
    ...(cfg.policyUpdated ? { POLICY_UPDATED: cfg.policyUpdated } : {}),
  });
}
