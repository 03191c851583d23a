// site/: the site's documents and nginx templates, and the renderer that makes them for a
// deployment. It imports contract/.
//
// `node site/render/build.ts <outDir>`: renders the site documents and both hosts' generated nginx
// locations (under _nginx/, which no location serves) into outDir, from SITE_URL, API_URL, ANON_KEY,
// LOG_PUBLIC_KEY (LOG_ORIGIN) and POLICY_UPDATED in the environment. docker-compose's site service runs it
// for the gateway; the local stack and `npm run build:site` run it with their configuration
// (stack/site.ts).
import path from 'node:path';
import { writeLocations } from './locations.ts';
import { renderSiteDocuments } from './render.ts';
import { documentsConfigFromEnv } from './settings.ts';

const outDir = process.argv[2];
if (!outDir) {
  console.error('Usage: node site/render/build.ts <outDir>, with SITE_URL, API_URL, ANON_KEY and LOG_PUBLIC_KEY set (npm run build:site -- <outDir> takes them from .env)');
  process.exit(2);
}
try {
  const cfg = documentsConfigFromEnv(process.env);
  await renderSiteDocuments(cfg, path.resolve(outDir));
  writeLocations(path.resolve(outDir));
  console.log(`Rendered the site documents for ${cfg.siteUrl} (API host ${cfg.apiUrl}) into ${path.resolve(outDir)}.`);
} catch (error) {
  console.error(`Rendering the site documents failed: ${(error as Error).message}`);
  process.exit(1);
}
