// Renders the site host's static documents (discovery documents, llms.txt, auth.md, api-docs,
// robots.txt, sitemap.xml, …) into `outDir`, from one configuration: the public URLs, the current
// anon key, the public signing keys. Called at start-up by scripts/lib/nginx.ts.
import { mkdirSync } from 'node:fs';
import type { Config } from '../lib/config.ts';

export function renderSiteDocuments(_cfg: Config, outDir: string): void {
  mkdirSync(outDir, { recursive: true });
}
