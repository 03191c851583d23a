// The bundles the stack runs instead of its TypeScript: made from the sources, never run once a source
// is newer.
import { readdirSync, readFileSync, statSync, utimesSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../config/checkout.ts';
import { buildRuntime, bundleEntry, freshBundle, RUNTIME_PROGRAMS } from '../../stack/runtime-build.ts';

afterAll(async () => {
  // Whatever a test here left older than its sources is made afresh for the files that run after it.
  await buildRuntime();
});

describe('the runtime bundles', () => {
  it('are made for every long-running program, each source keeping its own import.meta.url', async () => {
    await buildRuntime();
    for (const name of Object.keys(RUNTIME_PROGRAMS) as (keyof typeof RUNTIME_PROGRAMS)[]) {
      expect(freshBundle(name), name).toBe(bundleEntry(name));
      const dir = path.dirname(bundleEntry(name));
      for (const file of readdirSync(dir).filter((f) => f.endsWith('.mjs'))) expect(readFileSync(path.join(dir, file), 'utf8'), file).not.toContain('import.meta');
    }
    // The checkout's root is taken relative to config/checkout.ts, wherever the bundle lies.
    expect(readFileSync(bundleEntry('start'), 'utf8')).toContain(JSON.stringify(pathToFileURL(path.join(ROOT_DIR, 'config', 'checkout.ts')).href));
  });

  it('are not run once a source they were made from is newer: the source runs instead', async () => {
    await buildRuntime();
    const source = path.join(ROOT_DIR, 'edge', 'app.ts');
    const { atime, mtime } = statSync(source);
    try {
      utimesSync(source, atime, new Date(Date.now() + 60_000));
      expect(freshBundle('edge')).toBeUndefined();
      expect(freshBundle('start')).toBe(bundleEntry('start'));
    } finally {
      utimesSync(source, atime, mtime);
    }
  });
});
