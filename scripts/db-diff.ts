// `npm run db:diff -- <name>`: writes the next migration. It applies the migration history to one
// scratch database and the declared schema (sql/) to another, on the server of `npm start` (or
// DATABASE_URL), and writes what turns the first into the second, as computed by migra
// (https://github.com/mmkal/pgkit/tree/main/packages/migra), to supabase/migrations/<UTC stamp>_<name>.sql.
// Review the file before committing it: migra writes what it sees, and a rename looks like a drop and a create.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { adminDatabaseUrl } from '../config/config.ts';
import { MIGRATIONS_DIR } from '../stack/migrations.ts';
import { schemaDifference } from '../stack/schema-diff.ts';

const name = process.argv[2];
if (!name || !/^[a-z0-9_]+$/.test(name)) {
  console.error('Usage: npm run db:diff -- <name>   (lower case, digits and underscores: what the migration does)');
  process.exit(2);
}
try {
  const sql = await schemaDifference(adminDatabaseUrl(), (line) => console.log(line));
  if (!sql.trim()) {
    console.log('The migration history already gives the declared schema: nothing to write.');
  } else {
    const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
    const file = path.join(MIGRATIONS_DIR, `${stamp}_${name}.sql`);
    writeFileSync(file, sql);
    console.log(`Wrote ${path.relative(process.cwd(), file)}; review it, then run the tests.`);
  }
} catch (error) {
  console.error(`db:diff failed: ${(error as Error).message}`);
  process.exit(1);
}
