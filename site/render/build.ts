// `npm run build:site -- <outDir>`: renders the site documents for a deployment (e.g. into the
// nginx image's document root) from the same configuration `npm start` reads.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { configFromEnv, loadEnv } from '../../scripts/lib/config.ts';
import { apiDocumentLocations, documentLocations } from './locations.ts';
import { renderSiteDocuments } from './render.ts';

/** Beside the documents, under a path no location serves. */
const LOCATIONS_DIR = '_nginx';

const outDir = process.argv[2];
if (!outDir) {
  console.error('Usage: npm run build:site -- <outDir>');
  process.exit(2);
}
try {
  const cfg = configFromEnv(loadEnv(), ['ANON_KEY', 'HTTP_SIG_PUBLIC_KEY']);
  await renderSiteDocuments(cfg, path.resolve(outDir));
  // The gateway includes the documents' locations from here (SITE_/API_DOCUMENT_LOCATIONS in docker-compose.yml).
  mkdirSync(path.join(path.resolve(outDir), LOCATIONS_DIR), { recursive: true });
  writeFileSync(path.join(path.resolve(outDir), LOCATIONS_DIR, 'site-documents.conf'), documentLocations());
  writeFileSync(path.join(path.resolve(outDir), LOCATIONS_DIR, 'api-documents.conf'), apiDocumentLocations());
  console.log(`Rendered the site documents for ${cfg.siteUrl} (API host ${cfg.apiUrl}) into ${path.resolve(outDir)}.`);
} catch (error) {
  console.error(`build:site failed: ${(error as Error).message}`);
  process.exit(1);
}
