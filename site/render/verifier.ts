// The verifier as the site serves it: its source folders (verify/ and the log-reader/ it reads the log
// with, TypeScript that imports only Node's own modules and these two) bundled by esbuild (https://esbuild.github.io/api/#build) into one
// ES module anyone runs with `node`, naming the site that serves it as the one it checks by default.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const VERIFIER_DIR = path.join(ROOT, 'verify');
/** The folders whose sources go into the bundle: the verifier, and its reading of the log. */
const SOURCE_DIRS = [VERIFIER_DIR, path.join(ROOT, 'log-reader')];
/** The command line: the bundle's entry, whose opening comment says what the file checks and from which standards. */
const VERIFIER_ENTRY = path.join(VERIFIER_DIR, 'cli.ts');
/** The module that names the site checked by default: the served file names the site that serves it. */
const DEFAULT_SITE_MODULE = path.join(VERIFIER_DIR, 'default-site.ts');
/** The oldest Node the served file is written for (its opening comment says so). */
const NODE_TARGET = 'node20';

/** An esbuild plugin (https://esbuild.github.io/plugins/#on-load) that gives the default-site module this site. */
const namingSite = (siteUrl: string): Plugin => ({
  name: 'default-site',
  setup(build) {
    build.onLoad({ filter: /default-site\.ts$/ }, (args) => (path.resolve(args.path) === DEFAULT_SITE_MODULE
      ? { contents: `export const DEFAULT_SITE = ${JSON.stringify(siteUrl)};\n`, loader: 'ts' }
      : undefined));
  },
});

/**
 * The entry's opening lines of `//` comments after their first paragraph: esbuild keeps no plain
 * comment, so they head the bundle as its banner. The first paragraph places the file among the
 * checkout's folders, which a reader of the served file does not have.
 */
function openingComment(source: string): string {
  const lines = source.split('\n');
  const end = lines.findIndex((line) => !line.startsWith('//'));
  const comment = lines.slice(0, end < 0 ? lines.length : end);
  return comment.slice(comment.indexOf('//') + 1).join('\n');
}

/** The served verifier for the site at `siteUrl`: one JavaScript file of both folders. */
export async function verifierScript(siteUrl: string): Promise<string> {
  const result = await build({
    entryPoints: [VERIFIER_ENTRY],
    // The bundle names each source by its path from here, so the served file is the same from any working directory.
    absWorkingDir: ROOT,
    bundle: true,
    write: false,
    platform: 'node',
    format: 'esm',
    target: NODE_TARGET,
    // Node's own modules stay imports; anything else would be bundled in, and fails below.
    external: ['node:*'],
    plugins: [namingSite(siteUrl)],
    banner: { js: openingComment(readFileSync(VERIFIER_ENTRY, 'utf8')) },
    legalComments: 'none',
    metafile: true,
    logLevel: 'silent',
  });
  // Written from the standards, not from the service's code: nothing outside its folder goes in.
  const foreign = Object.keys(result.metafile.inputs).filter((input) => !SOURCE_DIRS.some((dir) => path.resolve(ROOT, input).startsWith(dir + path.sep)));
  if (foreign.length) throw new Error(`The verifier's bundle takes in ${foreign.join(', ')}: verify/ and log-reader/ may import only Node's own modules (node:…) and each other.`);
  return result.outputFiles[0]!.text;
}
