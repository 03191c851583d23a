// supabase/ is generated from sql/ (one source) and exposes only the public schema.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseToml } from 'smol-toml';
import { ROOT_DIR } from '../../scripts/lib/config.ts';
import { SUPABASE_MIGRATIONS_DIR, supabaseMigrations } from '../../scripts/deploy/supabase-migrations.ts';

describe('supabase/', () => {
  it('holds exactly the migrations generated from sql/migrations (run `npm run build:supabase` after changing sql/)', () => {
    const expected = supabaseMigrations();
    const actual = new Map(readdirSync(SUPABASE_MIGRATIONS_DIR).map((f) => [f, readFileSync(path.join(SUPABASE_MIGRATIONS_DIR, f), 'utf8')]));
    expect([...actual.keys()].sort()).toEqual([...expected.keys()].sort());
    for (const [name, content] of expected) expect(actual.get(name), name).toBe(content);
  });

  it('names migrations as the Supabase CLI does and keeps no down section', () => {
    for (const [name, content] of supabaseMigrations()) {
      expect(name).toMatch(/^\d{14}_[a-z0-9_]+\.sql$/);
      expect(content).not.toMatch(/down migration/i);
    }
  });

  it('exposes the public schema only, with sign-ups and anonymous sign-ins off', () => {
    const config = parseToml(readFileSync(path.join(ROOT_DIR, 'supabase', 'config.toml'), 'utf8')) as Record<string, Record<string, unknown>>;
    expect(config.api!.schemas).toEqual(['public']);
    expect(config.auth!.enable_signup).toBe(false);
    expect(config.auth!.enable_anonymous_sign_ins).toBe(false);
  });
});
