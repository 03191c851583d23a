// The database in high-availability mode (POSTGRES_HA=pg_auto_failover): a pg_auto_failover monitor
// and two Postgres nodes (three with POSTGRES_THIRD_NODE_PORT), from Debian's postgresql-15,
// postgresql-15-auto-failover and pg-auto-failover-cli, each `pg_autoctl run` supervised like every
// other part of the stack. The
// monitor promotes the standby when the primary is lost (https://pg-auto-failover.readthedocs.io/en/v2.0/failover-state-machine.html);
// nothing of ours decides a failover. Replication is synchronous (--replication-quorum true, under
// which pg_autoctl sets synchronous_standby_names to the standby and keeps its default
// synchronous_commit = on): a commit is acknowledged once the standby has flushed it to disk, so a
// promoted standby holds every acknowledged commit, signed checkpoints among them. `on` rather than
// remote_write: the acknowledged commit then also survives the standby's own crash right after the
// primary's loss. Where the servers run, the commands that create them and the settings files they
// get are ha-placement.ts, ha-autoctl.ts and ha-settings.ts; this module starts and supervises them.
import pg from 'pg';
import { HA_MODE, type Config } from '../config/config.ts';
import { databaseUrl, haDatabaseUrl } from '../config/database-urls.ts';
import { setLoginPasswords, type Database, type Supervise } from './database.ts';
import { created, createMonitor, createNode, layoutOf, makeDirs, pgAutoctl, placed } from './ha-autoctl.ts';
import { loopbackPlacement, type HaHost, type HaPlacement, type HaPorts } from './ha-placement.ts';
import { migrate } from './migrations.ts';
import { startChild, waitUntil, type Log } from './processes.ts';
import type { SupervisedPart } from './supervisor.ts';

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
  /** The nodes' keepers (`pg_autoctl run`, which runs the node's postgres as its child), in the order of ports.nodes. */
  nodes: SupervisedPart[];
  ports: HaPorts;
  /** A single-host connection string of node `i` (0, 1, 2), as `role` (the superuser when not given). */
  nodeUrl(i: number, role?: 'authenticator' | 'stats_writer'): string;
  /** The nodes' states as the monitor sees them. */
  states(): Promise<HaNodeState[]>;
}

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

/** Sets the formation's number_sync_standbys on the monitor, when it differs (the primary then applies it). */
async function setNumberSyncStandbys(monitorUrl: string, wanted: number): Promise<void> {
  const now = await tryQuery<{ n: number }>(monitorUrl, "select number_sync_standbys as n from pgautofailover.formation where formationid = 'default'");
  if (now?.rows[0]?.n === wanted) return;
  if (!await tryQuery(monitorUrl, "select pgautofailover.set_formation_number_sync_standbys('default', $1)", [wanted])) {
    throw new Error(`The monitor did not take number_sync_standbys ${wanted}.`);
  }
}

/**
 * Starts (creating on the first start) the monitor and every node, migrates the primary and sets the
 * login roles' passwords. `placement` says where each server runs (by default all on BIND_HOST).
 */
export async function openHaDatabase(cfg: Config, log: Log, supervise: Supervise, placement: HaPlacement = loopbackPlacement(cfg)): Promise<HaDatabase> {
  if (!cfg.postgresHa) throw new Error(`openHaDatabase needs POSTGRES_HA=${HA_MODE}`);
  const ports: HaPorts = { monitor: cfg.postgresHa.monitorPort, nodes: cfg.postgresHa.nodePorts };
  const layout = layoutOf(cfg);
  const autoctl = pgAutoctl();
  makeDirs(layout);
  const { monitor: monitorAt, nodes: nodesAt } = placement;
  const socketUrl = (port: number, db = 'postgres', role = 'postgres') => `postgres://${role}@/${db}?host=${encodeURIComponent(layout.socketDir)}&port=${port}`;
  // This process asks the monitor on its socket, where every local connection is trusted.
  const monitorSocketUrl = socketUrl(ports.monitor, 'pg_auto_failover', 'autoctl_node');
  const login = (role?: 'authenticator' | 'stats_writer') =>
    role ? { name: role, password: role === 'authenticator' ? cfg.AUTHENTICATOR_PASSWORD : cfg.WRITER_DB_PASSWORD } : { name: 'postgres', password: cfg.POSTGRES_PASSWORD };
  if (nodesAt.length !== ports.nodes.length) throw new Error(`${ports.nodes.length} nodes to place, ${nodesAt.length} places given`);
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

  if (!created(layout, layout.monitorDir)) await createMonitor(layout, autoctl, placement, ports, log);
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
    const all = ports.nodes.map((_, i) => i);
    const nodes: (SupervisedPart | undefined)[] = all.map(() => undefined);
    const runNode = async (i: number) => {
      const port = ports.nodes[i]!;
      // Ready once it serves queries on its socket, as primary or standby.
      nodes[i] = await keeper(`pg-node${i + 1}`, layout.nodeDirs[i]!, () => canQuery(socketUrl(port)), nodesAt[i]!);
      started.push(nodes[i]!);
    };
    const made = all.filter((i) => created(layout, layout.nodeDirs[i]!));
    const monitor = await keeper('pg-monitor', layout.monitorDir, () => canQuery(monitorSocketUrl), monitorAt);
    started.push(monitor);
    // One at a time, the standby last: a restarted keeper reports to the monitor before its Postgres
    // is up, and the monitor takes a primary whose keeper reports Postgres not running for failed
    // (IsUnhealthy); should the standby report in then, it is promoted and a restart swaps the roles
    // (https://github.com/hapostgres/pg_auto_failover/blob/v2.0/src/monitor/node_metadata.c,
    // group_state_machine.c "when primary fails"). So each node starts once the monitor has heard
    // from the one before, since its start, that it runs (what it heard before is the last run's).
    const inTurn = async (which: readonly number[], start: (i: number) => Promise<unknown>) => {
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
    for (const i of all.filter((n) => !made.includes(n))) {
      await createNode(layout, autoctl, placement, ports, i, log);
      await runNode(i);
    }
    // Two standbys: a commit waits for one of them (number_sync_standbys 1, which pg_auto_failover
    // sets itself when the second standby joins; set here too, so no start leaves it at 0). The
    // primary then stays synchronous with either standby down, and holds writes with both down.
    if (ports.nodes.length > 2) await setNumberSyncStandbys(monitorSocketUrl, ports.nodes.length - 2);

    // Serving once one node is a primary that takes writes, and (on the first start) the standby replicates.
    let primary = -1;
    await waitUntil('a pg_auto_failover primary', async () => {
      const now = await states().catch(() => []);
      primary = ports.nodes.findIndex((port) => now.some((n) => n.port === port && ['single', 'wait_primary', 'primary'].includes(n.reported) && n.reported === n.assigned));
      return primary >= 0 && await canQuery(socketUrl(ports.nodes[primary]!), 'create temporary table t(); drop table t');
    }, 5 * 60_000);
    await waitUntil('a standby to replicate', async () =>
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
    // So every standby that replicates now is waited for.
    const written = (await tryQuery<{ lsn: string }>(socketUrl(ports.nodes[primary]!), 'select pg_current_wal_lsn()::text as lsn'))?.rows[0]?.lsn;
    if (!written) throw new Error('The primary did not tell its WAL position.');
    const secondaries = (await states()).filter((n) => n.reported === 'secondary').map((n) => ports.nodes.indexOf(n.port));
    for (const i of all.filter((n) => n !== primary && secondaries.includes(n))) {
      await waitUntil(`node ${i + 1} to replay the login passwords`, () => replayed(socketUrl(ports.nodes[i]!), written), 5 * 60_000);
    }

    return {
      adminUrl,
      // Every node, in order: the writer's connection takes the one that accepts writes; PostgREST's
      // prefers the standby and falls back to the primary.
      urlFor: (role) => haDatabaseUrl({ ...cfg, nodeHosts: nodesAt.map((at) => at.host) }, login(role), role === 'stats_writer' ? 'read-write' : 'prefer-standby'),
      server: undefined,
      monitor,
      nodes: nodes as SupervisedPart[],
      ports,
      nodeUrl,
      states,
      stop: stopAll,
      start: async () => {
        await monitor.start();
        await inTurn(all, (i) => nodes[i]!.start());
      },
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
