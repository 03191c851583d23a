// Postgres' client programs (pg_dump, pg_restore, psql, pg_basebackup) of the embedded server's
// major version: Debian's postgresql-client-15, or the directory PG_BIN_DIR names.
import { existsSync } from 'node:fs';
import path from 'node:path';

export function pgTool(name: string): string {
  for (const dir of [process.env.PG_BIN_DIR, '/usr/lib/postgresql/15/bin', ...(process.env.PATH ?? '').split(':')]) {
    if (dir && existsSync(path.join(dir, name))) return path.join(dir, name);
  }
  throw new Error(`${name} is not installed: install Debian's postgresql-client-15 (apt-get install -y postgresql-client-15) or set PG_BIN_DIR.`);
}
