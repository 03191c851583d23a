// `npm run build:site -- <outDir>`: renders the site documents and the gateway's generated locations
// for a deployment (e.g. into the nginx image's document root) from the same configuration
// `npm start` reads.
import path from 'node:path';
import { readCommandLine } from '../config/command-line.ts';
import { loadEnv } from '../config/checkout.ts';
import { configFromEnv } from '../config/config.ts';
import { renderSite } from '../stack/site.ts';

const USAGE = `Usage: npm run build:site -- <outDir>
Writes the site's documents and the gateway's generated nginx locations into <outDir>, from the
configuration npm start reads (.env and the environment, which must hold ANON_KEY and HTTP_SIG_PUBLIC_KEY).
  --help   print this help and write nothing`;
const args = readCommandLine(USAGE, { options: {}, allowPositionals: true });
const [outDir, ...extra] = args.positionals;
if (!outDir || extra.length) {
  console.error(USAGE);
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
