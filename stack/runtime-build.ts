// The long-running Node programs of the stack, the supervisor with its writer (stack/start.ts) and the
// edge server (edge/server.ts), bundled into plain JavaScript under .build/ before they run. Node runs
// TypeScript by stripping its types with a WebAssembly module that each process loads on its first .ts
// file and keeps for its whole life: about 18 MB per process, a tenth of what the idle stack may take.
// Short-lived commands (the writer CLI, migrations, the site's renderer) still run their sources.
//
// npm packages stay imports, resolved from the checkout's node_modules as before. Each source file keeps
// its own import.meta.url, so paths taken relative to a source (the checkout's root, a document beside
// it) point where they did. https://esbuild.github.io/api/#build, https://esbuild.github.io/plugins/#on-load
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { ROOT_DIR } from '../config/checkout.ts';

/** Where the bundles are written: a folder of the checkout, so their imports of npm packages resolve. */
export const BUILD_DIR = path.join(ROOT_DIR, '.build');

/** The programs that run as long as the stack, by name: each one's source entry. */
export const RUNTIME_PROGRAMS = {
  start: 'stack/start.ts',
  edge: 'edge/server.ts',
} as const;
export type RuntimeProgram = keyof typeof RUNTIME_PROGRAMS;

const outDir = (name: RuntimeProgram) => path.join(BUILD_DIR, name);
/** The bundle's entry file, which `node` runs. */
export const bundleEntry = (name: RuntimeProgram) => path.join(outDir(name), `${path.basename(RUNTIME_PROGRAMS[name], '.ts')}.mjs`);
/** The source files a bundle was made from, to tell whether it is older than they are. */
const inputsFile = (name: RuntimeProgram) => path.join(outDir(name), 'inputs.json');

/** Gives every project source its own import.meta values as constants, since a bundle has one location for all. */
const ownImportMeta: Plugin = {
  name: 'own-import-meta',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, (args) => {
      if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const contents = readFileSync(args.path, 'utf8')
        .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href))
        .replaceAll('import.meta.dirname', JSON.stringify(path.dirname(args.path)))
        .replaceAll('import.meta.filename', JSON.stringify(args.path));
      return { contents, loader: 'ts' };
    });
  },
};

/** Bundles every runtime program into BUILD_DIR; a program's lazily loaded parts become chunks of their own. */
export async function buildRuntime(): Promise<void> {
  for (const name of Object.keys(RUNTIME_PROGRAMS) as RuntimeProgram[]) {
    const result = await build({
      absWorkingDir: ROOT_DIR,
      entryPoints: [RUNTIME_PROGRAMS[name]],
      outdir: outDir(name),
      outExtension: { '.js': '.mjs' },
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node24',
      packages: 'external',
      plugins: [ownImportMeta],
      metafile: true,
      logLevel: 'warning',
    });
    mkdirSync(outDir(name), { recursive: true });
    const inputs = Object.keys(result.metafile.inputs).map((input) => path.resolve(ROOT_DIR, input));
    writeFileSync(inputsFile(name), `${JSON.stringify(inputs)}\n`);
  }
}

/**
 * The bundle of `name` when it is there and no source it was made from has changed since; undefined
 * otherwise, so a caller runs the source instead of stale code.
 */
export function freshBundle(name: RuntimeProgram): string | undefined {
  const entry = bundleEntry(name);
  if (!existsSync(entry) || !existsSync(inputsFile(name))) return undefined;
  const builtAt = statSync(inputsFile(name)).mtimeMs;
  const inputs = JSON.parse(readFileSync(inputsFile(name), 'utf8')) as string[];
  return inputs.every((input) => existsSync(input) && statSync(input).mtimeMs <= builtAt) ? entry : undefined;
}
