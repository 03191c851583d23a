// supabase/ is a Supabase CLI project: its migrations are named and written as the CLI expects (what
// they build is checked against sql/ in tests/sql/declared-schema.test.ts), and it exposes only the
// public schema.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseToml } from 'smol-toml';
import { ROOT_DIR } from '../../config/checkout.ts';
import { MIGRATIONS_DIR } from '../../stack/migrations.ts';

describe('supabase/', () => {
  it('holds the one migration history, named as the Supabase CLI names migrations, plain SQL without runner markers', () => {
    const files = readdirSync(MIGRATIONS_DIR);
    expect(files.length).toBeGreaterThan(0);
    for (const name of files) {
      expect(name).toMatch(/^\d{14}_[a-z0-9_]+\.sql$/);
      expect(readFileSync(path.join(MIGRATIONS_DIR, name), 'utf8')).not.toMatch(/^\s*--[\s-]*(up|down)\s+migration/im);
    }
  });

  it('exposes the public schema only, with sign-ups and anonymous sign-ins off', () => {
    const config = parseToml(readFileSync(path.join(ROOT_DIR, 'supabase', 'config.toml'), 'utf8')) as Record<string, Record<string, unknown>>;
    expect(config.api!.schemas).toEqual(['public']);
    expect(config.auth!.enable_signup).toBe(false);
    expect(config.auth!.enable_anonymous_sign_ins).toBe(false);
  });
});
