// `npm run backup -- dump <file>` · `restore <file> [--database-url URL]` · `schedule <dir>`
// A backup is a data-only pg_dump (custom format) of the `stats` schema: the schema itself comes from
// the migrations, so a restore first migrates the target, then loads the rows with their original
// times, corrections and settings, in one transaction. The target must hold no data.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readCommandLine } from '../config/command-line.ts';
import { NIGHTS, WALLETS } from '../contract/audit/transfer-vault.ts';
import { DATA_TABLES, DERIVED_TABLES } from '../contract/tables.ts';
import { loadEnv } from '../config/checkout.ts';
import { configFromEnv } from '../config/config.ts';
import { adminDatabaseUrl } from '../config/database-urls.ts';
import { vaultDir } from '../config/writer.ts';
import { migrate } from './migrations.ts';
import { connectDatabase, SERVER_TIMEOUTS, withoutPassword } from '../db-client/pg-connect.ts';
import { pgTool } from './pg-tools.ts';

/**
 * The openings of the reward-transfer commitments are rows of the dump, sealed under OPENINGS_KEY,
 * which stays in .env. Backups made before they moved into the database carry them in a file of their
 * own beside the dump; a restore puts such a file's openings back where the writer kept them, under
 * the data directory, keeping every line already there, and the writer moves them into the database
 * when it next writes a night's reward transfers.
 */
const VAULT_FILES = [WALLETS, NIGHTS] as const;
export const vaultBackupOf = (file: string): string => `${file}.reward-transfers.json`;

function restoreVault(dir: string, file: string): void {
  if (!existsSync(vaultBackupOf(file))) return;
  const held = JSON.parse(readFileSync(vaultBackupOf(file), 'utf8')) as Record<string, string>;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const name of VAULT_FILES) {
    const target = path.join(dir, name);
    const present = new Set(existsSync(target) ? readFileSync(target, 'utf8').split('\n') : []);
    const missing = (held[name] ?? '').split('\n').filter((line) => line !== '' && !present.has(line));
    if (missing.length) writeFileSync(target, missing.map((l) => `${l}\n`).join(''), { flag: 'a', mode: 0o600 });
  }
}

/**
 * The schedule's settings where the environment leaves them unset. .env.example, docker-compose.yml
 * and the usage show these values; tests/stack/config.test.ts holds them to it.
 */
export const BACKUP_DEFAULTS = { BACKUP_INTERVAL_HOURS: 24, BACKUP_KEEP: 14 } as const;

/**
 * Runs a client tool against `databaseUrl`. The password travels in PGPASSWORD, never on the command
 * line (where `ps` shows it), and a failure reports the tool's own stderr, never the command.
 */
function run(tool: string, args: string[], databaseUrl?: string): void {
  let password: Record<string, string> = {};
  if (databaseUrl) {
    const split = withoutPassword(databaseUrl);
    if (split.password !== undefined) password = { PGPASSWORD: split.password };
    args = [...args, `--dbname=${split.url}`];
  }
  const env = { ...process.env, ...password };
  try {
    execFileSync(pgTool(tool), args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(`${tool} failed: ${stderr || `exit ${(error as { status?: number }).status ?? 'by signal'}`}`);
  }
}

/** Writes the dump beside `file` first and renames it on success, so a failed dump never replaces a good one. */
export function dump(databaseUrl: string, file: string): void {
  mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const partial = `${file}.partial`;
  try {
    // The snapshots are derived from the rest, and rebuilt after a restore.
    const derived = DERIVED_TABLES.map((t) => `--exclude-table-data=stats.${t}`);
    run('pg_dump', ['--data-only', '--schema=stats', ...derived, '--format=custom', '--no-owner', '--no-privileges', `--file=${partial}`], databaseUrl);
    renameSync(partial, file);
  } finally {
    rmSync(partial, { force: true });
  }
}

export async function restore(databaseUrl: string, file: string, transfersDir = vaultDir(configFromEnv(loadEnv(), []).dataDir)): Promise<void> {
  if (!existsSync(file)) throw new Error(`${file} does not exist.`);
  await migrate(databaseUrl, () => {});
  const client = await connectDatabase(databaseUrl, { applicationName: 'stats-restore', timeouts: SERVER_TIMEOUTS });
  try {
    const counts = await client.query(DATA_TABLES.map((t) => `select '${t}' as t, count(*)::int as n from stats.${t}`).join(' union all '));
    const held = counts.rows.filter((r) => r.n > 0).map((r) => `${r.n} ${r.t}`);
    if (held.length) throw new Error(`A restore needs a database without data, and this one holds ${held.join(', ')}: restore into a fresh database.`);
  } finally {
    await client.end();
  }
  // The settings row the migrations made is replaced by the backed-up one, in the same transaction;
  // the rows load with triggers off, so the snapshots are rebuilt from them at the end.
  const sqlFile = path.join(tmpdir(), `restore-${process.pid}-${Date.now()}.sql`);
  try {
    run('pg_restore', ['--data-only', '--disable-triggers', '--no-owner', `--file=${sqlFile}`, file]);
    writeFileSync(sqlFile, `delete from stats.settings;\n${readFileSync(sqlFile, 'utf8')}\nselect stats.refresh_figures();\n`);
    run('psql', ['--no-psqlrc', '--quiet', '--single-transaction', '--set=ON_ERROR_STOP=1', `--file=${sqlFile}`], databaseUrl);
  } finally {
    rmSync(sqlFile, { force: true });
  }
  restoreVault(transfersDir, file);
}

/** Dumps into `dir` every BACKUP_INTERVAL_HOURS and keeps the newest BACKUP_KEEP. */
async function schedule(databaseUrl: string, dir: string): Promise<never> {
  const whole = (name: keyof typeof BACKUP_DEFAULTS, max: number) => {
    const value = Number(process.env[name] || BACKUP_DEFAULTS[name]);
    if (!Number.isInteger(value) || value < 1 || value > max) throw new Error(`${name} must be a whole number from 1 to ${max}, got "${process.env[name]}".`);
    return value;
  };
  const hours = whole('BACKUP_INTERVAL_HOURS', 24 * 7); // a week at most: setTimeout's limit is 24.8 days
  const keep = whole('BACKUP_KEEP', 10_000);
  mkdirSync(dir, { recursive: true });
  for (;;) {
    const file = path.join(dir, `stats-${new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}.dump`);
    try {
      dump(databaseUrl, file);
      console.log(JSON.stringify({ at: new Date().toISOString(), msg: 'backup written', file, bytes: statSync(file).size }));
      const old = readdirSync(dir).filter((f) => /^stats-.*\.dump$/.test(f)).sort().reverse().slice(keep);
      for (const f of old) for (const gone of [f, vaultBackupOf(f)]) rmSync(path.join(dir, gone), { force: true });
    } catch (error) {
      console.error(JSON.stringify({ at: new Date().toISOString(), msg: 'backup failed', error: (error as Error).message }));
    }
    await new Promise((resolve) => setTimeout(resolve, hours * 3_600_000));
  }
}

export const USAGE = `Usage: npm run backup -- <command>
  dump <file>                              data-only dump of the stats schema (pg_dump custom format), and beside it
                                           (the openings of the nights' commitments among them, sealed under OPENINGS_KEY)
  restore <file> [--database-url URL]      migrate the target, then load the dump; the target must hold no data
                                           (an older backup's <file>.reward-transfers.json goes back under DATA_DIR)
  schedule <dir>                           dump every BACKUP_INTERVAL_HOURS (${BACKUP_DEFAULTS.BACKUP_INTERVAL_HOURS}), keep BACKUP_KEEP (${BACKUP_DEFAULTS.BACKUP_KEEP})
  --help                                   print this help and do nothing else
The database is DATABASE_URL, else the embedded one of \`npm start\`.`;

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = readCommandLine(USAGE, { options: { 'database-url': { type: 'string' } }, allowPositionals: true });
  const [command, target, ...extra] = args.positionals;
  // The usage is judged before the database is looked for: a mistyped command is told so, whatever is configured.
  if (!(command === 'dump' || command === 'restore' || command === 'schedule') || !target || extra.length) {
    console.error(USAGE);
    process.exit(2);
  }
  try {
    const url = args.values['database-url'] || adminDatabaseUrl();
    if (command === 'dump') { dump(url, target); console.log(`Wrote ${target}.`); }
    else if (command === 'restore') { await restore(url, target); console.log(`Restored ${target}.`); }
    else await schedule(url, target);
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
}
