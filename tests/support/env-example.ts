// The variable names `.env.example` documents (set, or shown commented out as an example).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT_DIR } from '../../scripts/lib/config.ts';

export function envExampleNames(): Set<string> {
  const text = readFileSync(path.join(ROOT_DIR, '.env.example'), 'utf8');
  return new Set([...text.matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!));
}
