// A read replica: Postgres' own streaming replication
// (https://www.postgresql.org/docs/15/warm-standby.html#STREAMING-REPLICATION), run as a hot standby
// that replays the primary's WAL and answers read-only queries
// (https://www.postgresql.org/docs/15/hot-standby.html). It is made and started by the same script
// docker-compose's db-replica runs (scripts/deploy/replica.sh: pg_basebackup -R into a replication
// slot of its own on the first start, or when the primary has lost that slot, then the server), here
// with the embedded server's binary and Debian's postgresql-client-15 pg_basebackup: physical
// replication needs one major version on both sides. The writer, the migrations and the backups stay
// on the primary; a replica serves the API role only.
import { chownSync, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { ROOT_DIR } from '../config/checkout.ts';
import type { Config } from '../config/config.ts';
import { databaseUrl } from '../config/database-urls.ts';
import { serverBinary, superviseServer, type Database, type Supervise } from './database.ts';
import { pgTool } from './pg-tools.ts';
import { idsOf, type Log } from './processes.ts';

/** docker-compose's db-replica entrypoint, which the local replica runs too. */
export const REPLICA_SCRIPT = path.join(ROOT_DIR, 'scripts', 'deploy', 'replica.sh');

/** The replica's slot on the primary unless told otherwise (replica.sh's default; docker-compose's db-replica names it too). */
export const DEFAULT_REPLICA_SLOT = 'db_replica';

/**
 * Whether the database behind `url` is a standby in recovery (a read replica) rather than a primary.
 * A URL listing several hosts (a failover pair) counts as one: PostgREST may be on a standby there.
 */
export async function isReplica(url: string): Promise<boolean> {
  if (/^postgres(?:ql)?:\/\/(?:[^@/?#]*@)?[^/?#]*,/.test(url)) return true;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    return (await client.query<{ r: boolean }>('select pg_is_in_recovery() as r')).rows[0]!.r;
  } finally {
    await client.end();
  }
}

export interface ReplicaOptions {
  /** Any connection string of the primary: its host and port are what the replica streams from. */
  primaryUrl: string;
  /** REPLICATION_PASSWORD: the replication role's password, kept in the replica's primary_conninfo. */
  replicationPassword: string;
  /**
   * A directory for the replica alone: its cluster is `postgres` inside it, copied from the primary
   * on the first start (the copy is made beside it, so the directory must be the server user's).
   */
  dir: string;
  port: number;
  /** Its replication slot's name on the primary (DEFAULT_REPLICA_SLOT unless given): one per replica. */
  slot?: string;
  log: Log;
  supervise: Supervise;
}

/**
 * Copies the primary into `dir` as a standby (once) and runs it under supervision. The copy carries
 * the primary's roles and passwords, so the same credentials log in to both.
 */
export async function openReplica(cfg: Config, { primaryUrl, replicationPassword, dir, port, slot = DEFAULT_REPLICA_SLOT, log, supervise }: ReplicaOptions): Promise<Database> {
  if (!replicationPassword) throw new Error('REPLICATION_PASSWORD is not set: run `npm run keys` to generate it into .env.');
  const databaseDir = path.join(dir, 'postgres');
  if (existsSync(path.join(databaseDir, 'PG_VERSION')) && !existsSync(path.join(databaseDir, 'standby.signal'))) {
    throw new Error(`${databaseDir} holds a cluster that is not a standby (no standby.signal): it was promoted, or is a primary. Move it away to make a new replica there.`);
  }
  mkdirSync(dir, { recursive: true });
  if (process.getuid?.() === 0) {
    const { uid, gid } = idsOf('postgres');
    chownSync(dir, uid, gid);
  }
  const primary = new URL(primaryUrl);
  const urlOn = (user: { name: string; password: string }) => databaseUrl({ databaseUrl: undefined, bindHost: cfg.bindHost, postgresPort: port }, user);
  const adminUrl = urlOn({ name: 'postgres', password: cfg.POSTGRES_PASSWORD });
  // The embedded server's binary first, so `postgres` is never Debian's server of another minor.
  const bins = [path.dirname(await serverBinary()), path.dirname(pgTool('pg_basebackup'))];
  const server = await superviseServer('postgres-replica', databaseDir, port, adminUrl, { ...cfg, dataDir: dir }, log, supervise, {
    script: REPLICA_SCRIPT,
    env: {
      PATH: [...bins, process.env.PATH ?? ''].join(':'),
      PRIMARY_HOST: primary.hostname,
      PRIMARY_PORT: primary.port || '5432',
      PGPASSWORD: replicationPassword,
      PGDATA: databaseDir,
      REPLICA_SLOT: slot,
      PGCONNECT_TIMEOUT: '10',
    },
    keepLine: /^(db-replica|pg_basebackup|pg_receivewal):/,
    // A large primary takes a while to copy; each start after the first is quick.
    readyWithinMs: 30 * 60_000,
  });
  return {
    adminUrl,
    urlFor: (role) => urlOn({ name: role, password: role === 'authenticator' ? cfg.AUTHENTICATOR_PASSWORD : cfg.WRITER_DB_PASSWORD }),
    server,
    stop: () => server.stop(),
    start: () => server.start(),
  };
}
