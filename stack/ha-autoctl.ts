// The programs of the high-availability mode (initdb, pg_autoctl), run as the servers' user where each
// server is placed, and the commands that create the monitor and the nodes with the stack's settings.
// Everything lives under <data dir>/ha: the clusters, pg_autoctl's configuration and state
// (XDG_CONFIG_HOME, XDG_DATA_HOME), and the servers' sockets in a directory only their OS user can
// enter, which is why local socket connections are trusted.
import { appendFileSync, chmodSync, chownSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { HA_MODE, type Config } from '../config/config.ts';
import { SERVER_MALLOC_ENV } from './database.ts';
import type { HaHost, HaPlacement, HaPorts } from './ha-placement.ts';
import { hba, MONITOR_SETTINGS, NODE_SETTINGS, serverSettings } from './ha-settings.ts';
import { pgTool } from './pg-tools.ts';
import { idsOf, type Log } from './processes.ts';

const PG_BIN = () => path.dirname(pgTool('pg_ctl'));

export function pgAutoctl(): string {
  for (const dir of ['/usr/bin', ...(process.env.PATH ?? '').split(':')]) {
    const file = path.join(dir, 'pg_autoctl');
    if (dir && existsSync(file)) return file;
  }
  throw new Error(`POSTGRES_HA=${HA_MODE} needs pg_autoctl: install Debian's pg-auto-failover-cli and postgresql-15-auto-failover (apt-get install -y postgresql-15 postgresql-15-auto-failover pg-auto-failover-cli).`);
}

export interface Layout {
  dir: string;
  socketDir: string;
  monitorDir: string;
  /** One per node: node1, node2 (and node3). */
  nodeDirs: string[];
  env: Record<string, string>;
  ids: { uid?: number; gid?: number };
}

export function layoutOf(cfg: Config): Layout {
  const dir = path.join(cfg.dataDir, 'ha');
  return {
    dir,
    socketDir: path.join(dir, 'run'),
    monitorDir: path.join(dir, 'monitor'),
    nodeDirs: (cfg.postgresHa?.nodePorts ?? [0, 0]).map((_, i) => path.join(dir, `node${i + 1}`)),
    env: {
      // Debian's server programs first, and none of the caller's own directories, which the servers' user may not read.
      PATH: [PG_BIN(), '/usr/bin', '/bin'].join(':'),
      HOME: dir,
      PGHOST: path.join(dir, 'run'),
      XDG_CONFIG_HOME: path.join(dir, 'config'),
      XDG_DATA_HOME: path.join(dir, 'share'),
      XDG_RUNTIME_DIR: path.join(dir, 'runtime'),
      LC_MESSAGES: 'C',
      ...SERVER_MALLOC_ENV,
    },
    // As root, the servers run as the `postgres` user, as the embedded one does.
    ids: process.getuid?.() === 0 ? idsOf('postgres') : {},
  };
}

/** Makes a directory the servers' user owns; `private` ones only that user may enter. */
function ownDir(dir: string, ids: Layout['ids'], mode: number): void {
  mkdirSync(dir, { recursive: true });
  chmodSync(dir, mode);
  if (ids.uid !== undefined) chownSync(dir, ids.uid, ids.gid!);
}

/** Makes the mode's directories, owned by the servers' user: the top one, and the private ones of the sockets and of pg_autoctl's runtime. */
export function makeDirs(layout: Layout): void {
  ownDir(layout.dir, layout.ids, 0o755);
  ownDir(layout.socketDir, layout.ids, 0o700);
  ownDir(path.join(layout.dir, 'runtime'), layout.ids, 0o700);
}

/** The program, arguments and spawn ids that run `program args` as the servers' user at `at`. */
export function placed(layout: Layout, at: HaHost | undefined, program: string, args: string[]): { file: string; args: string[]; ids: Layout['ids'] } {
  if (!at?.command) return { file: program, args, ids: layout.ids };
  const [file, wrapped] = at.command(program, args, layout.ids);
  return { file, args: wrapped, ids: {} };
}

async function run(layout: Layout, program: string, args: string[], log: Log, at?: HaHost): Promise<void> {
  const how = placed(layout, at, program, args);
  try {
    await promisify(execFile)(how.file, how.args, { ...how.ids, env: layout.env, cwd: layout.dir, timeout: 10 * 60_000 });
  } catch (error) {
    const { stderr, message } = error as { stderr?: string; message: string };
    const lines = (stderr ?? message).split('\n').filter((line) => /ERROR|FATAL/.test(line));
    for (const line of lines) log(`[${path.basename(program)}] ${line}`);
    throw new Error(`${path.basename(program)} ${args[0]} ${args[1] ?? ''} failed: ${lines.at(-1) ?? message}`);
  }
}

async function initdb(layout: Layout, dir: string, log: Log, at: HaHost): Promise<void> {
  ownDir(dir, layout.ids, 0o700);
  await run(layout, path.join(PG_BIN(), 'initdb'), ['-D', dir, '-U', 'postgres', '--encoding=UTF8', '--locale=C', '--auth=trust'], log, at);
}

/** Whether pg_autoctl has created the node of `pgdata` (its configuration file lives under XDG_CONFIG_HOME). */
export const created = (layout: Layout, pgdata: string) => existsSync(path.join(layout.dir, 'config', 'pg_autoctl', pgdata, 'pg_autoctl.cfg'));

/** Creates the monitor: its cluster with the stack's settings and client authentication, then pg_autoctl's own. */
export async function createMonitor(layout: Layout, autoctl: string, placement: HaPlacement, ports: HaPorts, log: Log): Promise<void> {
  const at = placement.monitor;
  log(`Creating the pg_auto_failover monitor in ${layout.monitorDir} …`);
  await initdb(layout, layout.monitorDir, log, at);
  appendFileSync(path.join(layout.monitorDir, 'postgresql.conf'), serverSettings(at.host, layout.socketDir, MONITOR_SETTINGS));
  writeFileSync(path.join(layout.monitorDir, 'pg_hba.conf'), hba(true, placement.trustFrom));
  await run(layout, autoctl, ['create', 'monitor', '--pgctl', path.join(PG_BIN(), 'pg_ctl'), '--pgdata', layout.monitorDir, '--pgport', String(ports.monitor),
    '--hostname', at.host, '--no-ssl', '--skip-pg-hba'], log, at);
  // pg_autoctl starts postgres with its own listen_addresses on the command line.
  await run(layout, autoctl, ['config', 'set', '--pgdata', layout.monitorDir, 'postgresql.listen_addresses', at.host], log, at);
}

/**
 * Creates node `i` through the monitor: the first as a new cluster with the stack's settings and
 * client authentication, every other one as a standby of the primary.
 */
export async function createNode(layout: Layout, autoctl: string, placement: HaPlacement, ports: HaPorts, i: number, log: Log): Promise<void> {
  const at = placement.nodes[i]!;
  const pgdata = layout.nodeDirs[i]!;
  const monitorUri = `postgres://autoctl_node@${placement.monitor.host}:${ports.monitor}/pg_auto_failover?sslmode=disable`;
  log(`Creating Postgres node ${i + 1} in ${pgdata}${i ? ' (a copy of the primary, as its standby)' : ''} …`);
  if (i === 0) {
    await initdb(layout, pgdata, log, at);
    // The standby's copy keeps this listen address; pg_autoctl gives each node its own (--listen) on its command line.
    appendFileSync(path.join(pgdata, 'postgresql.conf'), serverSettings(at.host, layout.socketDir, NODE_SETTINGS));
    writeFileSync(path.join(pgdata, 'pg_hba.conf'), hba(false, placement.trustFrom));
  } else {
    // pg_autoctl copies the primary with pg_basebackup, its configuration files with it.
    ownDir(pgdata, layout.ids, 0o700);
  }
  await run(layout, autoctl, ['create', 'postgres', '--pgctl', path.join(PG_BIN(), 'pg_ctl'), '--pgdata', pgdata, '--pgport', String(ports.nodes[i]), '--listen', at.host,
    '--hostname', at.host, '--name', `node${i + 1}`, '--monitor', monitorUri, '--username', 'postgres', '--dbname', 'postgres',
    '--no-ssl', '--skip-pg-hba', '--replication-quorum', 'true'], log, at);
}
