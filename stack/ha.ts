// The database in high-availability mode (POSTGRES_HA=pg_auto_failover): a pg_auto_failover monitor
// and two Postgres nodes, from Debian's postgresql-15, postgresql-15-auto-failover and
// pg-auto-failover-cli, each `pg_autoctl run` supervised like every other part of the stack. The
// monitor promotes the standby when the primary is lost (https://pg-auto-failover.readthedocs.io/en/v2.0/failover-state-machine.html);
// nothing of ours decides a failover. Replication is synchronous (--replication-quorum true, under
// which pg_autoctl sets synchronous_standby_names to the standby and keeps its default
// synchronous_commit = on): a commit is acknowledged once the standby has flushed it to disk, so a
// promoted standby holds every acknowledged commit, signed checkpoints among them. `on` rather than
// remote_write: the acknowledged commit then also survives the standby's own crash right after the
// primary's loss.
// Everything lives under <data dir>/ha: the clusters, pg_autoctl's configuration and state
// (XDG_CONFIG_HOME, XDG_DATA_HOME), and the servers' sockets in a directory only their OS user can
// enter, which is why local socket connections are trusted.
import { chmodSync, chownSync, existsSync, mkdirSync, writeFileSync, appendFileSync } from 'node:fs';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { databaseUrl, HA_MODE, haDatabaseUrl, type Config } from '../config/config.ts';
import { setLoginPasswords, SERVER_MALLOC_ENV, type Database, type Supervise } from './database.ts';
import { migrate } from './migrations.ts';
import { pgTool } from './pg-tools.ts';
import { idsOf, startChild, waitUntil, type Log } from './processes.ts';
import type { SupervisedPart } from './supervisor.ts';

/**
 * The monitor's failover timing, shortened from pg_auto_failover's defaults (20 s and 30 s, which
 * make a failover take about 50 s): a primary unhealthy for 10 s is failed over, and the standby
 * takes writes 20 s after the old primary was told to demote. Measured here: about 30 s after a
 * process kill or a cut that resets connections, about 42-48 s after a silent cut (the monitor's
 * health checks then time out, 3 tries of 5 s). Nothing here orders the old primary's stop before the
 * standby's promotion (a keeper cut off from the monitor demotes itself after network_partition_timeout,
 * 20 s, counted from when its standby's connection is gone; after a crash and restart it may never do
 * so): synchronous replication keeps the old primary from acknowledging anything once its standby has
 * stopped replicating, and the writer signs only entries a returned commit made durable
 * (docs/scale-out.md, section 8; tests/scale-out/partition.test.ts). A longer primary_demote_timeout
 * (30 s) made the old primary stop first in every cut measured, at 10-13 s more without writes in every
 * failover, a process kill's included. docker-compose's monitor (scripts/deploy/pg-auto-failover.sh)
 * has the same. https://pg-auto-failover.readthedocs.io/en/v2.0/ref/configuration.html
 */
const MONITOR_SETTINGS = {
  'pgautofailover.node_considered_unhealthy_timeout': '10000',
  'pgautofailover.primary_demote_timeout': '20000',
  // The monitor's first health checks run before the nodes of a restarted stack are back; without a
  // longer grace (10 s by default) they count as a failure of the primary, and a restart swaps the roles.
  'pgautofailover.startup_grace_period': '30000',
};

/**
 * Where one server of the mode runs: the address the other servers and the clients reach it at
 * (pg_autoctl's --hostname, the server's listen_addresses), and, when it runs where this process's
 * network is not (another network namespace, in the partition tests), how its programs are started
 * there.
 */
export interface HaHost {
  host: string;
  /**
   * The program and arguments that run `program args` at this host as the user `ids` (undefined: as
   * this process's user), spawned by this process as it is. Unset: `program` is run here directly.
   */
  command?: (program: string, args: string[], ids: { uid?: number; gid?: number }) => [string, string[]];
}

/**
 * Where the monitor and the two nodes run. By default (loopbackPlacement) all three on this machine's
 * BIND_HOST, reached over TCP. Placed elsewhere, each keeps its data under the stack's data
 * directory and its socket in the shared private directory, through which this process does its own
 * work (creating, migrating, asking the monitor); the servers reach each other over TCP at their hosts.
 */
export interface HaPlacement {
  monitor: HaHost;
  nodes: [HaHost, HaHost];
  /**
   * The pg_hba.conf address pg_auto_failover's own roles are trusted from: `samehost` (the servers'
   * own addresses) when they share one machine's loopback, `samenet` (the subnets the server is on)
   * when each has an address of its own.
   */
  trustFrom: 'samehost' | 'samenet';
  /** How this process connects to the nodes for its own work and hands out in nodeUrl: over TCP at their hosts, or over their sockets. */
  reach: 'tcp' | 'socket';
}

/** The default: the monitor and both nodes on BIND_HOST, on this machine, in this process's network. */
export function loopbackPlacement(cfg: Pick<Config, 'bindHost'>): HaPlacement {
  const here = { host: cfg.bindHost };
  return { monitor: here, nodes: [here, here], trustFrom: 'samehost', reach: 'tcp' };
}

/**
 * The nodes' own settings. wal_sender_timeout 10 s instead of pg_autoctl's 30 s: a primary's keeper
 * that can reach neither the monitor nor its standby counts its network_partition_timeout (20 s) only
 * from when the standby's replication connection is gone, which a silent network makes the walsender
 * notice only after wal_sender_timeout. Measured here (tests/scale-out/partition.test.ts) with the
 * primary's side cut off silently: the old primary stopped 50.7 s after the cut with 30 s, after the
 * standby took writes (42.8 s); 26.8 s after it with 10 s, the promotion unchanged (41.8 s). A standby
 * answers the sender's keepalive requests (sent after half the timeout) at once, so 10 s drops no
 * healthy connection. Safety does not rest on this order (docs/scale-out.md, section 8).
 */
const NODE_SETTINGS = { wal_sender_timeout: '10s' };

export interface HaPorts {
  monitor: number;
  /** The nodes' ports: the first is POSTGRES_PORT, the second POSTGRES_STANDBY_PORT. */
  nodes: [number, number];
}

export interface HaNodeState {
  name: string;
  port: number;
  reported: string;
  assigned: string;
  /** Whether the node's keeper last reported its Postgres running, and when it last reported. */
  running: boolean;
  reportedAt: Date;
}

export interface HaDatabase extends Database {
  monitor: SupervisedPart;
  /** The two nodes' keepers (`pg_autoctl run`, which runs the node's postgres as its child). */
  nodes: [SupervisedPart, SupervisedPart];
  ports: HaPorts;
  /** A single-host connection string of node `i` (0 or 1), as `role` (the superuser when not given). */
  nodeUrl(i: number, role?: 'authenticator' | 'stats_writer'): string;
  /** The nodes' states as the monitor sees them. */
  states(): Promise<HaNodeState[]>;
}

const PG_BIN = () => path.dirname(pgTool('pg_ctl'));

function pgAutoctl(): string {
  for (const dir of ['/usr/bin', ...(process.env.PATH ?? '').split(':')]) {
    const file = path.join(dir, 'pg_autoctl');
    if (dir && existsSync(file)) return file;
  }
  throw new Error(`POSTGRES_HA=${HA_MODE} needs pg_autoctl: install Debian's pg-auto-failover-cli and postgresql-15-auto-failover (apt-get install -y postgresql-15 postgresql-15-auto-failover pg-auto-failover-cli).`);
}

interface Layout {
  dir: string;
  socketDir: string;
  monitorDir: string;
  nodeDirs: [string, string];
  env: Record<string, string>;
  ids: { uid?: number; gid?: number };
}

function layoutOf(cfg: Config): Layout {
  const dir = path.join(cfg.dataDir, 'ha');
  return {
    dir,
    socketDir: path.join(dir, 'run'),
    monitorDir: path.join(dir, 'monitor'),
    nodeDirs: [path.join(dir, 'node1'), path.join(dir, 'node2')],
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

/** The program, arguments and spawn ids that run `program args` as the servers' user at `at`. */
function placed(layout: Layout, at: HaHost | undefined, program: string, args: string[]): { file: string; args: string[]; ids: Layout['ids'] } {
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

/**
 * The settings every cluster of the mode gets, after pg_autoctl's own include: loopback (BIND_HOST)
 * only, its socket in the private directory, and the stack's usual limits. A standby copies its
 * primary's postgresql.conf, so the two nodes always agree (a hot standby needs max_connections at
 * least its primary's).
 */
function serverSettings(host: string, layout: Layout, extra: Record<string, string> = {}): string {
  const settings = {
    listen_addresses: host,
    unix_socket_directories: layout.socketDir,
    max_connections: '60',
    timezone: 'UTC',
    ...extra,
  };
  return `\n# The stack's settings (stack/ha.ts), after pg_auto_failover's.\n${Object.entries(settings).map(([k, v]) => `${k} = '${v}'`).join('\n')}\n`;
}

/**
 * Client authentication, written instead of pg_autoctl's (--skip-pg-hba): the private socket is
 * trusted; over TCP, only from this machine (samehost), pg_auto_failover's own roles (the monitor's
 * health checks, replication and pg_rewind, the keepers' calls to the monitor) are trusted and every
 * other role logs in with its password. On one machine, anyone with a local login could act as those
 * roles: docs/scale-out.md says so, and that a deployment across machines sets passwords for them.
 * Placed on addresses of their own (HaPlacement), `samenet` takes samehost's place: samehost matches
 * only the server's own addresses, and the other servers then connect from theirs.
 * https://www.postgresql.org/docs/15/auth-pg-hba-conf.html
 */
function hba(monitor: boolean, from: HaPlacement['trustFrom']): string {
  const lines = [
    'local all all trust',
    ...(monitor
      ? [`host pg_auto_failover autoctl_node ${from} trust`]
      : [`host all pgautofailover_monitor ${from} trust`,
        `host replication pgautofailover_replicator ${from} trust`,
        `host postgres pgautofailover_replicator ${from} trust`]),
    `host all all ${from} scram-sha-256`,
  ];
  return `# Written by the stack (stack/ha.ts).\n${lines.join('\n')}\n`;
}

async function initdb(layout: Layout, dir: string, log: Log, at: HaHost): Promise<void> {
  ownDir(dir, layout.ids, 0o700);
  await run(layout, path.join(PG_BIN(), 'initdb'), ['-D', dir, '-U', 'postgres', '--encoding=UTF8', '--locale=C', '--auth=trust'], log, at);
}

/** Whether pg_autoctl has created the node of `pgdata` (its configuration file lives under XDG_CONFIG_HOME). */
const created = (layout: Layout, pgdata: string) => existsSync(path.join(layout.dir, 'config', 'pg_autoctl', pgdata, 'pg_autoctl.cfg'));

/** The result of `sql` on `url`, or undefined when the server cannot answer it. */
async function tryQuery<Row extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<pg.QueryResult<Row> | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  // A server that stops while this client is idle ends it with an 'error' event, which unheard would end the stack.
  client.on('error', () => {});
  try {
    await client.connect();
    return await client.query<Row>(sql, params);
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => {});
  }
}

const canQuery = async (url: string, sql = 'select 1') => (await tryQuery(url, sql)) !== undefined;

/** Whether the standby at `url` has replayed the WAL up to `lsn`. */
const replayed = async (url: string, lsn: string) =>
  (await tryQuery<{ done: boolean }>(url, 'select pg_last_wal_replay_lsn() >= $1::pg_lsn as done', [lsn]))?.rows[0]?.done === true;

/**
 * Starts (creating on the first start) the monitor and both nodes, migrates the primary and sets the
 * login roles' passwords. `placement` says where each server runs (by default all on BIND_HOST).
 */
export async function openHaDatabase(cfg: Config, log: Log, supervise: Supervise, placement: HaPlacement = loopbackPlacement(cfg)): Promise<HaDatabase> {
  if (!cfg.postgresHa) throw new Error(`openHaDatabase needs POSTGRES_HA=${HA_MODE}`);
  const ports: HaPorts = { monitor: cfg.postgresHa.monitorPort, nodes: [cfg.postgresPort, cfg.postgresHa.standbyPort] };
  const layout = layoutOf(cfg);
  const autoctl = pgAutoctl();
  ownDir(layout.dir, layout.ids, 0o755);
  ownDir(layout.socketDir, layout.ids, 0o700);
  ownDir(path.join(layout.dir, 'runtime'), layout.ids, 0o700);
  const { monitor: monitorAt, nodes: nodesAt } = placement;
  const monitorUri = `postgres://autoctl_node@${monitorAt.host}:${ports.monitor}/pg_auto_failover?sslmode=disable`;
  const socketUrl = (port: number, db = 'postgres', role = 'postgres') => `postgres://${role}@/${db}?host=${encodeURIComponent(layout.socketDir)}&port=${port}`;
  // This process asks the monitor on its socket, where every local connection is trusted.
  const monitorSocketUrl = socketUrl(ports.monitor, 'pg_auto_failover', 'autoctl_node');
  const login = (role?: 'authenticator' | 'stats_writer') =>
    role ? { name: role, password: role === 'authenticator' ? cfg.AUTHENTICATOR_PASSWORD : cfg.WRITER_DB_PASSWORD } : { name: 'postgres', password: cfg.POSTGRES_PASSWORD };
  const nodeUrl = (i: number, role?: 'authenticator' | 'stats_writer') => placement.reach === 'socket'
    ? socketUrl(ports.nodes[i]!, 'postgres', role ?? 'postgres')
    : databaseUrl({ databaseUrl: undefined, bindHost: nodesAt[i]!.host, postgresPort: ports.nodes[i]! }, login(role));
  const keeper = (name: string, pgdata: string, ready: () => Promise<boolean>, at: HaHost) => supervise(name, async () => {
    const how = placed(layout, at, autoctl, ['run', '--pgdata', pgdata]);
    const child = startChild(name, how.file, how.args, {
      ...how.ids, cwd: layout.dir, env: layout.env, log,
      keepLine: (line) => /ERROR|FATAL|PANIC|New state|FSM transition/.test(line),
    });
    await waitUntil(name, ready, 5 * 60_000, child);
    return child;
  });

  if (!created(layout, layout.monitorDir)) {
    log(`Creating the pg_auto_failover monitor in ${layout.monitorDir} …`);
    await initdb(layout, layout.monitorDir, log, monitorAt);
    appendFileSync(path.join(layout.monitorDir, 'postgresql.conf'), serverSettings(monitorAt.host, layout, MONITOR_SETTINGS));
    writeFileSync(path.join(layout.monitorDir, 'pg_hba.conf'), hba(true, placement.trustFrom));
    await run(layout, autoctl, ['create', 'monitor', '--pgctl', path.join(PG_BIN(), 'pg_ctl'), '--pgdata', layout.monitorDir, '--pgport', String(ports.monitor),
      '--hostname', monitorAt.host, '--no-ssl', '--skip-pg-hba'], log, monitorAt);
    // pg_autoctl starts postgres with its own listen_addresses on the command line.
    await run(layout, autoctl, ['config', 'set', '--pgdata', layout.monitorDir, 'postgresql.listen_addresses', monitorAt.host], log, monitorAt);
  }
  // The monitor stops first: with it gone nothing decides a failover, so the nodes stop in the roles
  // they have, and start again in them.
  const started: SupervisedPart[] = [];
  const stopAll = async () => {
    const monitorPart = started.find((part) => part.name === 'pg-monitor');
    await monitorPart?.stop();
    await Promise.all(started.filter((part) => part !== monitorPart).map((part) => part.stop()));
  };
  try {
    const states = async (): Promise<HaNodeState[]> => {
      const client = new pg.Client({ connectionString: monitorSocketUrl, connectionTimeoutMillis: 2000 });
      client.on('error', () => {});
      await client.connect();
      try {
        const { rows } = await client.query<HaNodeState>(`select nodename as name, nodeport as port, reportedstate::text as reported,
          goalstate::text as assigned, reportedpgisrunning as running, reporttime as "reportedAt" from pgautofailover.node order by nodeid`);
        return rows;
      } finally {
        await client.end();
      }
    };
    // The monitor first (a keeper that cannot reach it at its start gives up), then the nodes made
    // before, each in the role it had. A node not made yet joins through the monitor.
    const nodes: (SupervisedPart | undefined)[] = [undefined, undefined];
    const runNode = async (i: 0 | 1) => {
      const port = ports.nodes[i];
      // Ready once it serves queries on its socket, as primary or standby.
      nodes[i] = await keeper(`pg-node${i + 1}`, layout.nodeDirs[i], () => canQuery(socketUrl(port)), nodesAt[i]);
      started.push(nodes[i]!);
    };
    const made = ([0, 1] as const).filter((i) => created(layout, layout.nodeDirs[i]));
    const monitor = await keeper('pg-monitor', layout.monitorDir, () => canQuery(monitorSocketUrl), monitorAt);
    started.push(monitor);
    // One at a time, the standby last: a restarted keeper reports to the monitor before its Postgres
    // is up, and the monitor takes a primary whose keeper reports Postgres not running for failed
    // (IsUnhealthy); should the standby report in then, it is promoted and a restart swaps the roles
    // (https://github.com/hapostgres/pg_auto_failover/blob/v2.0/src/monitor/node_metadata.c,
    // group_state_machine.c "when primary fails"). So each node starts once the monitor has heard
    // from the one before, since its start, that it runs (what it heard before is the last run's).
    const inTurn = async (which: readonly (0 | 1)[], start: (i: 0 | 1) => Promise<unknown>) => {
      const before = await states();
      const wasStandby = (i: number) => before.some((n) => n.port === ports.nodes[i] && n.reported === 'secondary');
      for (const i of [...which].sort((a, b) => Number(wasStandby(a)) - Number(wasStandby(b)))) {
        const since = new Date();
        await start(i);
        await waitUntil(`the monitor to hear that node ${i + 1} runs`, async () =>
          (await states()).some((n) => n.port === ports.nodes[i] && n.running && n.reportedAt > since), 5 * 60_000, nodes[i]!.child);
      }
    };
    await inTurn(made, runNode);
    for (const i of ([0, 1] as const).filter((n) => !made.includes(n))) {
      const pgdata = layout.nodeDirs[i];
      log(`Creating Postgres node ${i + 1} in ${pgdata}${i ? ' (a copy of the primary, as its standby)' : ''} …`);
      if (i === 0) {
        await initdb(layout, pgdata, log, nodesAt[i]);
        // The standby's copy keeps this listen address; pg_autoctl gives each node its own (--listen) on its command line.
        appendFileSync(path.join(pgdata, 'postgresql.conf'), serverSettings(nodesAt[i].host, layout, NODE_SETTINGS));
        writeFileSync(path.join(pgdata, 'pg_hba.conf'), hba(false, placement.trustFrom));
      } else {
        // pg_autoctl copies the primary with pg_basebackup, its configuration files with it.
        ownDir(pgdata, layout.ids, 0o700);
      }
      await run(layout, autoctl, ['create', 'postgres', '--pgctl', path.join(PG_BIN(), 'pg_ctl'), '--pgdata', pgdata, '--pgport', String(ports.nodes[i]), '--listen', nodesAt[i].host,
        '--hostname', nodesAt[i].host, '--name', `node${i + 1}`, '--monitor', monitorUri, '--username', 'postgres', '--dbname', 'postgres',
        '--no-ssl', '--skip-pg-hba', '--replication-quorum', 'true'], log, nodesAt[i]);
      await runNode(i);
    }

    // Serving once one node is a primary that takes writes, and (on the first start) the standby replicates.
    let primary = -1;
    await waitUntil('a pg_auto_failover primary', async () => {
      const now = await states().catch(() => []);
      primary = ports.nodes.findIndex((port) => now.some((n) => n.port === port && ['single', 'wait_primary', 'primary'].includes(n.reported) && n.reported === n.assigned));
      return primary >= 0 && await canQuery(socketUrl(ports.nodes[primary]!), 'create temporary table t(); drop table t');
    }, 5 * 60_000);
    await waitUntil('the standby to replicate', async () =>
      (await states().catch(() => [])).some((n) => n.reported === 'secondary' && n.assigned === 'secondary'), 5 * 60_000);

    const local = new pg.Client({ connectionString: socketUrl(ports.nodes[primary]!) });
    await local.connect();
    try {
      await local.query(`alter role postgres with password ${local.escapeLiteral(cfg.POSTGRES_PASSWORD)}`);
    } finally {
      await local.end();
    }
    const adminUrl = nodeUrl(primary);
    await migrate(adminUrl, log);
    await setLoginPasswords(adminUrl, cfg);
    // The standby checks logins against its own replayed copy of the roles. The passwords' commit
    // waits for a synchronous standby to apply it, but a primary still in wait_primary, or with an
    // asynchronous standby, waits for none; until the standby has replayed them PostgREST's login there
    // fails, libpq then tries no other host ("If a connection is established successfully, but
    // authentication fails, the remaining hosts in the list are not tried",
    // https://www.postgresql.org/docs/15/libpq-connect.html#LIBPQ-MULTIPLE-HOSTS), and PostgREST ends.
    const written = (await tryQuery<{ lsn: string }>(socketUrl(ports.nodes[primary]!), 'select pg_current_wal_lsn()::text as lsn'))?.rows[0]?.lsn;
    if (!written) throw new Error('The primary did not tell its WAL position.');
    await waitUntil('the standby to replay the login passwords', () => replayed(socketUrl(ports.nodes[1 - primary]!), written), 5 * 60_000);

    return {
      adminUrl,
      // Every node, in order: the writer's connection takes the one that accepts writes; PostgREST's
      // prefers the standby and falls back to the primary.
      urlFor: (role) => haDatabaseUrl({ ...cfg, nodeHosts: [nodesAt[0].host, nodesAt[1].host] }, login(role), role === 'stats_writer' ? 'read-write' : 'prefer-standby'),
      server: undefined,
      monitor,
      nodes: nodes as [SupervisedPart, SupervisedPart],
      ports,
      nodeUrl,
      states,
      stop: stopAll,
      start: async () => {
        await monitor.start();
        await inTurn([0, 1], (i) => nodes[i]!.start());
      },
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
