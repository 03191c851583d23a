// `npm run build:site -- <outDir>`: renders the site documents for a deployment (e.g. into the
// nginx image's document root) from the same configuration `npm start` reads.
import path from 'node:path';
import { configFromEnv, loadEnv } from '../../scripts/lib/config.ts';
import { renderSiteDocuments } from './render.ts';

const outDir = process.argv[2];
if (!outDir) {
  console.error('Usage: npm run build:site -- <outDir>');
  process.exit(2);
}
try {
  const cfg = configFromEnv(loadEnv(), ['ANON_KEY', 'HTTP_SIG_PRIVATE_KEY']);
  await renderSiteDocuments(cfg, path.resolve(outDir));
  console.log(`Rendered the site documents for ${cfg.siteUrl} (API host ${cfg.apiUrl}) into ${path.resolve(outDir)}.`);
} catch (error) {
  console.error(`build:site failed: ${(error as Error).message}`);
  process.exit(1);
}
