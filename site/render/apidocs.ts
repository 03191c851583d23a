// /api-docs: a standalone HTML reference generated from the rendered openapi.json by Redocly's
// build-docs with its scripts inlined (no CDN at run time). build-docs takes about two seconds and
// every stack start renders the documents, so the output is kept by the hash of openapi.json:
// in memory for this process and on disk under the cache directory.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const memo = new Map<string, string>();
/** Part of the cache key: bump it when the way the page is produced changes. */
const RECIPE = 'redocly-build-docs-inline/1';

/**
 * The bundle's only outside asset is Redocly's "API docs by" logo image (it hides itself when it
 * fails to load); an empty inline SVG takes its place, so opening the page fetches nothing from a CDN.
 */
const CDN_LOGOS = /https:\/\/cdn\.redoc\.ly\/redoc\/logo-mini(?:-full)?\.svg/g;
const EMPTY_SVG = 'data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22/%3E';

export function withoutCdnAssets(html: string): string {
  return html.replace(CDN_LOGOS, EMPTY_SVG);
}

/** Environment for Redocly: no telemetry or update check (the documents are built offline). */
export const REDOCLY_ENV = { REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } as const;

export function redoclyCli(): string {
  return createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');
}

export function renderApiDocs(openapiJson: string, title: string, cacheDir: string): string {
  const hash = createHash('sha256').update(RECIPE).update('\0').update(title).update('\0').update(openapiJson).digest('hex').slice(0, 32);
  const cached = memo.get(hash);
  if (cached !== undefined) return cached;
  const cacheFile = path.join(cacheDir, `api-docs-${hash}.html`);
  if (existsSync(cacheFile)) {
    const html = readFileSync(cacheFile, 'utf8');
    memo.set(hash, html);
    return html;
  }
  mkdirSync(cacheDir, { recursive: true });
  const specFile = path.join(cacheDir, `openapi-${hash}.${process.pid}.json`);
  const outFile = `${cacheFile}.${process.pid}.tmp`;
  writeFileSync(specFile, openapiJson);
  try {
    execFileSync(process.execPath, [redoclyCli(), 'build-docs', specFile, '--output', outFile, '--inlineBundle', '--title', title], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...REDOCLY_ENV },
      timeout: 60_000,
    });
  } catch (error) {
    const detail = (error as { stderr?: Buffer; stdout?: Buffer });
    throw new Error(`Rendering /api-docs with Redocly build-docs failed: ${detail.stderr?.toString().trim() || detail.stdout?.toString().trim() || String(error)}`);
  } finally {
    rmSync(specFile, { force: true });
  }
  writeFileSync(outFile, withoutCdnAssets(readFileSync(outFile, 'utf8')));
  // Rename last, so a concurrent start never reads half a file.
  renameSync(outFile, cacheFile);
  // Only the current rendering is worth keeping (2.5 MB each; a new key or URL makes a new one).
  for (const old of readdirSync(cacheDir)) {
    if (/^api-docs-[0-9a-f]+\.html$/.test(old) && path.join(cacheDir, old) !== cacheFile) rmSync(path.join(cacheDir, old), { force: true });
  }
  const html = readFileSync(cacheFile, 'utf8');
  memo.set(hash, html);
  return html;
}
