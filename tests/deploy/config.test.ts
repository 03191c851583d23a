// One source of configuration: every variable the code, the compose file or the nginx templates read
// is documented in .env.example, and every variable .env.example documents is read somewhere.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../scripts/lib/config.ts';
import { envExampleNames } from '../support/env-example.ts';

// Read from the environment but not configuration an operator sets: the process's own environment,
// variables the stack hands its children (edge/writer) from settings .env.example already names,
// and the benchmark's knobs (documented in the README).
const NOT_OPERATOR_SETTINGS = new Set(['PATH', 'HOME', 'NODE_ENV', 'TZ', 'CI', 'BENCH_SECONDS', 'BENCH_ROUNDS']);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).filter((entry) => entry !== 'node_modules').flatMap((entry) => {
    const full = path.join(dir, entry);
    return statSync(full).isDirectory() ? sourceFiles(full) : /\.(ts|mts)$/.test(entry) ? [full] : [];
  });
}

/** Names read as env.NAME, env['NAME'], process.env.NAME, or passed as (env, 'NAME', …) to a reader. */
function namesReadByCode(): Map<string, string> {
  const found = new Map<string, string>();
  for (const file of [...sourceFiles(path.join(ROOT_DIR, 'scripts')), ...sourceFiles(path.join(ROOT_DIR, 'edge'))]) {
    const text = readFileSync(file, 'utf8');
    const patterns = [/\benv\.([A-Z][A-Z0-9_]+)/g, /\benv\[['"]([A-Z][A-Z0-9_]+)['"]\]/g, /\(env,\s*['"]([A-Z][A-Z0-9_]+)['"]/g];
    for (const re of patterns) for (const m of text.matchAll(re)) if (!found.has(m[1]!)) found.set(m[1]!, path.relative(ROOT_DIR, file));
  }
  return found;
}

describe('configuration', () => {
  const documented = envExampleNames();

  it('documents in .env.example every variable the code reads', () => {
    const missing = [...namesReadByCode()].filter(([name]) => !documented.has(name) && !NOT_OPERATOR_SETTINGS.has(name));
    expect(missing.map(([name, file]) => `${name} (${file})`)).toEqual([]);
  });

  it('reads every variable .env.example documents', () => {
    const compose = readFileSync(path.join(ROOT_DIR, 'docker-compose.yml'), 'utf8');
    const read = new Set([...namesReadByCode().keys(), ...[...compose.matchAll(/\$\{([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]!)]);
    expect([...documented].filter((name) => !read.has(name))).toEqual([]);
  });
});
