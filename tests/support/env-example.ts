// The variable names `.env.example` documents (set, or shown commented out as an example), and the
// names the code reads from the environment.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { ROOT_DIR } from '../../config/checkout.ts';
import { ROOMS } from './rooms.ts';

export function envExampleNames(): Set<string> {
  const text = readFileSync(path.join(ROOT_DIR, '.env.example'), 'utf8');
  return new Set([...text.matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!));
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).filter((entry) => entry !== 'node_modules').flatMap((entry) => {
    const full = path.join(dir, entry);
    return statSync(full).isDirectory() ? sourceFiles(full) : /\.(ts|mts)$/.test(entry) ? [full] : [];
  });
}

/** Names read as env.NAME, env['NAME'], process.env.NAME, or passed as (env, 'NAME', …) to a reader, with the first file reading each. */
export function namesReadByCode(): Map<string, string> {
  const found = new Map<string, string>();
  for (const file of Object.keys(ROOMS).flatMap((room) => sourceFiles(path.join(ROOT_DIR, room)))) {
    const text = readFileSync(file, 'utf8');
    const patterns = [/\benv\.([A-Z][A-Z0-9_]+)/g, /\benv\[['"]([A-Z][A-Z0-9_]+)['"]\]/g, /\(env,\s*['"]([A-Z][A-Z0-9_]+)['"]/g];
    for (const re of patterns) for (const m of text.matchAll(re)) if (!found.has(m[1]!)) found.set(m[1]!, path.relative(ROOT_DIR, file));
  }
  return found;
}
