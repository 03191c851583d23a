// `npm run db:diff -- <name>`: writes the next migration. It applies the migration history to one
// scratch database and the declared schema (sql/) to another, on the server of `npm start` (or
// DATABASE_URL), and writes what turns the first into the second, as computed by migra
// (https://github.com/mmkal/pgkit/tree/main/packages/migra), to supabase/migrations/<UTC stamp>_<name>.sql.
// Review the file before committing it: migra writes what it sees, and a rename looks like a drop and a create.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { readCommandLine } from '../config/command-line.ts';
import { adminDatabaseUrl } from '../config/database-urls.ts';
import { MIGRATIONS_DIR } from '../stack/migrations.ts';
import { schemaDifference } from '../stack/schema-diff.ts';

const USAGE = `Usage: npm run db:diff -- <name>
Writes supabase/migrations/<UTC stamp>_<name>.sql: what turns the schema of the migration history into
the declared one of sql/, as migra computes it on scratch databases of the server of npm start (or
DATABASE_URL). <name> says what the migration does: lower case, digits and underscores.
  --help   print this help and do nothing else`;
const args = readCommandLine(USAGE, { options: {}, allowPositionals: true });
const [name, ...extra] = args.positionals;
if (!name || !/^[a-z0-9_]+$/.test(name) || extra.length) {
  console.error(USAGE);
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
