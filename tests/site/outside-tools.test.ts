// Two more tools from the wild, run as their users run them: Stoplight Spectral (the `spectral:oas`
// ruleset) lints both OpenAPI descriptions, and linkinator crawls the site from / and finds no
// broken link of its own (other hosts are not fetched: the tests run offline).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { check, LinkState } from 'linkinator';
import { describe, expect, inject, it } from 'vitest';
import { SITE_PATHS } from '../../contract/paths.ts';

const SPECTRAL = createRequire(import.meta.url).resolve('@stoplight/spectral-cli/dist/index.js');

describe('Spectral', () => {
  it('finds nothing, at any severity, in either OpenAPI description', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'spectral-'));
    try {
      const files: string[] = [];
      for (const doc of [SITE_PATHS.OPENAPI, SITE_PATHS.OPENAPI_KEYLESS]) {
        const file = path.join(dir, path.basename(doc));
        writeFileSync(file, await (await fetch(inject('stack').siteUrl + doc)).text());
        files.push(file);
      }
      writeFileSync(path.join(dir, '.spectral.yaml'), 'extends: ["spectral:oas"]\n');
      const { stdout } = await promisify(execFile)(process.execPath, [SPECTRAL, 'lint', ...files, '-r', path.join(dir, '.spectral.yaml'), '-F', 'hint', '-f', 'json', '--quiet'], { cwd: dir, timeout: 60_000 })
        .catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
      const results = JSON.parse(stdout.slice(stdout.indexOf('['))) as { code: string; message: string; path: string[] }[];
      expect(results.map((r) => `${r.code}: ${r.message} at ${r.path.join('.')}`)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('linkinator', () => {
  it('crawls the site from / and finds every link of its own alive', async () => {
    const { siteUrl } = inject('stack');
    const result = await check({ path: `${siteUrl}/`, recurse: true, linksToSkip: async (link) => !link.startsWith(siteUrl), timeout: 10_000 });
    const broken = result.links.filter((l) => l.state === LinkState.BROKEN).map((l) => `${l.status} ${l.url} (on ${l.parent})`);
    expect(broken).toEqual([]);
    // It did crawl: the page, the documents it links and the JSON endpoints.
    const seen = result.links.filter((l) => l.state === LinkState.OK).map((l) => new URL(l.url).pathname);
    for (const p of [SITE_PATHS.API_DOCS, SITE_PATHS.LLMS_TXT, SITE_PATHS.SITE_HISTORY_CSV, SITE_PATHS.FEED]) expect(seen).toContain(p);
    expect(result.passed).toBe(true);
  }, 120_000);
});
