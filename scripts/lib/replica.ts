// A read replica: Postgres' own streaming replication
// (https://www.postgresql.org/docs/15/warm-standby.html#STREAMING-REPLICATION). pg_basebackup -R
// copies the primary's cluster and writes standby.signal and primary_conninfo
// (https://www.postgresql.org/docs/15/app-pgbasebackup.html), and the embedded server runs the copy as a
// hot standby: it replays the primary's WAL and answers read-only queries
// (https://www.postgresql.org/docs/15/hot-standby.html). Physical replication needs the same major
// version on both sides: the embedded server's, with Debian's postgresql-client-15 pg_basebackup.
// The writer, the migrations and the backups stay on the primary; a replica serves the API role only.
import { execFile } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { databaseUrl, type Config } from './config.ts';
import { superviseServer, type Database, type Supervise } from './database.ts';
import { pgTool } from './pg-tools.ts';
import { idsOf, type Log } from './processes.ts';

const run = promisify(execFile);

/** The login role a replica streams as: REPLICATION and nothing else. */
export const REPLICATION_ROLE = 'stats_replicator';

/**
 * Creates (or updates) the replication role on the primary. It is a property of a cluster one runs
 * oneself, not of the schema, so the migrations leave it out: creating a REPLICATION role takes a
 * superuser, which a hosted database does not hand out (a hosted project has replicas of its own).
 */
export async function ensureReplicationRole(adminUrl: string, password: string): Promise<void> {
  if (!password) throw new Error('REPLICATION_PASSWORD is not set: run `npm run keys` to generate it into .env.');
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const exists = (await client.query('select from pg_roles where rolname = $1', [REPLICATION_ROLE])).rowCount;
    await client.query(`${exists ? 'alter' : 'create'} role ${REPLICATION_ROLE} with login replication password ${client.escapeLiteral(password)}`);
  } finally {
    await client.end();
  }
}

export interface ReplicaOptions {
  /** Any connection string of the primary: its host and port are what the replica streams from. */
  primaryUrl: string;
  /** REPLICATION_PASSWORD: the replication role's password, kept in the replica's primary_conninfo. */
  replicationPassword: string;
  /** The replica's cluster directory: made by pg_basebackup when it holds none, reused when it does. */
  databaseDir: string;
  port: number;
  log: Log;
  supervise: Supervise;
}

/**
 * Copies the primary into `databaseDir` as a standby (once), then runs it under supervision. The
 * copy carries the primary's roles and passwords, so the same credentials log in to both.
 */
export async function openReplica(cfg: Config, options: ReplicaOptions): Promise<Database> {
  const { databaseDir, port, log } = options;
  if (existsSync(path.join(databaseDir, 'PG_VERSION'))) {
    if (!existsSync(path.join(databaseDir, 'standby.signal'))) {
      throw new Error(`${databaseDir} holds a cluster that is not a standby (no standby.signal): it was promoted or is a primary. Move it away to make a new replica there.`);
    }
  } else {
    await baseBackup(options);
  }
  const urlOn = (user: { name: string; password: string }) => databaseUrl({ databaseUrl: undefined, bindHost: cfg.bindHost, postgresPort: port }, user);
  const adminUrl = urlOn({ name: 'postgres', password: cfg.POSTGRES_PASSWORD });
  const replica = await superviseServer('postgres-replica', databaseDir, port, adminUrl, cfg, log, options.supervise);
  return {
    adminUrl,
    urlFor: (role) => urlOn({ name: role, password: role === 'authenticator' ? cfg.AUTHENTICATOR_PASSWORD : cfg.WRITER_DB_PASSWORD }),
    server: replica,
    stop: () => replica.stop(),
    start: () => replica.start(),
  };
}

/**
 * pg_basebackup -R into an empty directory the server's user owns (mode 0700, as Postgres requires),
 * streaming the WAL written meanwhile (-X stream) after a fast checkpoint, so the copy is consistent
 * as soon as it starts. A failed copy is removed: it would not start.
 */
async function baseBackup({ primaryUrl, replicationPassword, databaseDir, log }: ReplicaOptions): Promise<void> {
  if (!replicationPassword) throw new Error('REPLICATION_PASSWORD is not set: run `npm run keys` to generate it into .env.');
  const primary = new URL(primaryUrl);
  mkdirSync(databaseDir, { recursive: true });
  if (readdirSync(databaseDir).length) throw new Error(`${databaseDir} is not empty: pg_basebackup copies only into an empty directory.`);
  const ids: { uid?: number; gid?: number } = process.getuid?.() === 0 ? idsOf('postgres') : {};
  if (ids.uid !== undefined && ids.gid !== undefined) chownSync(databaseDir, ids.uid, ids.gid);
  chmodSync(databaseDir, 0o700);
  log(`Copying the primary ${primary.hostname}:${primary.port} into ${databaseDir} (pg_basebackup) …`);
  const started = Date.now();
  try {
    await run(pgTool('pg_basebackup'), [
      `--host=${primary.hostname}`, `--port=${primary.port || '5432'}`, `--username=${REPLICATION_ROLE}`, '--no-password',
      `--pgdata=${databaseDir}`, '--write-recovery-conf', '--wal-method=stream', '--checkpoint=fast',
    ], { ...ids, cwd: databaseDir, env: { PATH: process.env.PATH ?? '', PGPASSWORD: replicationPassword, PGCONNECT_TIMEOUT: '10' } });
  } catch (error) {
    for (const entry of readdirSync(databaseDir)) rmSync(path.join(databaseDir, entry), { recursive: true, force: true });
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new Error(`pg_basebackup could not copy the primary: ${stderr || (error as Error).message}`);
  }
  log(`Copied the primary in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
}
