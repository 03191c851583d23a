// `npm run build:supabase`: writes supabase/migrations in the Supabase CLI's form
// (<YYYYMMDDHHMMSS>_<name>.sql, the up section only) from sql/migrations, the one source.
// tests/deploy/supabase.test.ts fails when the two drift apart.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT_DIR } from '../lib/config.ts';
import { MIGRATIONS_DIR } from '../lib/database.ts';

export const SUPABASE_MIGRATIONS_DIR = path.join(ROOT_DIR, 'supabase', 'migrations');

/** File name → content of every Supabase migration generated from sql/migrations. */
export function supabaseMigrations(): Map<string, string> {
  const out = new Map<string, string>();
  for (const file of readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql')).sort()) {
    const match = file.match(/^(\d{13})_(.+)\.sql$/);
    if (!match) throw new Error(`sql/migrations/${file} is not named <epoch-ms>_<name>.sql.`);
    const stamp = new Date(Number(match[1])).toISOString().replace(/\D/g, '').slice(0, 14);
    const text = readFileSync(path.join(MIGRATIONS_DIR, file), 'utf8');
    const up = text.split(/^\s*--\s*down migration\s*$/im)[0]!.replace(/^\s*--\s*up migration\s*$/im, '').trim();
    out.set(`${stamp}_${match[2]}.sql`, `-- Generated from sql/migrations/${file} by \`npm run build:supabase\`; edit that file, not this one.\n\n${up}\n`);
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  rmSync(SUPABASE_MIGRATIONS_DIR, { recursive: true, force: true });
  mkdirSync(SUPABASE_MIGRATIONS_DIR, { recursive: true });
  for (const [name, content] of supabaseMigrations()) writeFileSync(path.join(SUPABASE_MIGRATIONS_DIR, name), content);
  console.log(`Wrote ${supabaseMigrations().size} migrations to supabase/migrations.`);
}
