// `npm run build:site -- <outDir>`: renders the site documents and the gateway's generated locations
// for a deployment (e.g. into the nginx image's document root) from the same configuration
// `npm start` reads.
import path from 'node:path';
import { configFromEnv, loadEnv } from '../config/config.ts';
import { renderSite } from '../stack/site.ts';

const outDir = process.argv[2];
if (!outDir) {
  console.error('Usage: npm run build:site -- <outDir>');
  process.exit(2);
}
let cfg;
try {
  cfg = configFromEnv(loadEnv(), ['ANON_KEY', 'HTTP_SIG_PUBLIC_KEY']);
} catch (error) {
  console.error(`build:site failed: ${(error as Error).message}`);
  process.exit(1);
}
try {
  process.stdout.write(await renderSite(cfg, path.resolve(outDir)));
} catch (error) {
  // The renderer's own words.
  console.error((error as Error).message);
  process.exit(1);
}
