// The partition cluster's databases as a test sees them: asked, crashed, killed and restarted through
// their Unix sockets and processes, never over the network that is being cut. Node i runs on host
// dbHosts[i]: n1 and n2, the two sides' nodes, and n3 in the three-node layout.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { Config } from '../../config/config.ts';
import type { HaDatabase, HaNodeState } from '../../stack/ha.ts';
import type { Network } from './netns.ts';
import { SIDES, THIRD_DB_HOST } from './partition-topology.ts';

export class PartitionDatabases {
  readonly net: Network;
  readonly cfg: Config;
  /** Opened by PartitionCluster.start() once the namespaces exist. */
  ha!: HaDatabase;
  /** The host of each node, in the order of ha.ports.nodes. */
  readonly dbHosts: string[];

  protected constructor(net: Network, cfg: Config) {
    this.net = net;
    this.cfg = cfg;
    this.dbHosts = [...SIDES.map((s) => s.dbHost), ...(cfg.postgresHa?.nodePorts.slice(2) ?? []).map(() => THIRD_DB_HOST)];
  }

  socketUrl(i: number): string {
    return this.ha.nodeUrl(i);
  }

  async states(): Promise<HaNodeState[]> {
    return this.ha.states();
  }

  /** The node the monitor has as primary (reported and assigned), if one is: any node. */
  async primaryNode(): Promise<number | undefined> {
    const states = await this.states().catch(() => []);
    const i = this.ha.ports.nodes.findIndex((port) => states.some((s) => s.port === port && ['primary', 'wait_primary', 'single'].includes(s.reported) && s.reported === s.assigned));
    return i < 0 ? undefined : i;
  }

  /** The side's node the monitor has as primary, if one of the two sides' nodes is. */
  async primary(): Promise<0 | 1 | undefined> {
    const i = await this.primaryNode();
    return i === 0 || i === 1 ? i : undefined;
  }

  /** What node `i` answers now on its socket: whether it takes writes, is in recovery, or is down. */
  async nodeStatus(i: number): Promise<'writable' | 'standby' | 'down'> {
    const client = new pg.Client({ connectionString: this.socketUrl(i), connectionTimeoutMillis: 1000, statement_timeout: 1000 } as pg.ClientConfig);
    client.on('error', () => {});
    try {
      await client.connect();
      const { rows } = await client.query<{ ro: string; rec: boolean }>("select current_setting('transaction_read_only') as ro, pg_is_in_recovery() as rec");
      return rows[0]!.rec || rows[0]!.ro === 'on' ? 'standby' : 'writable';
    } catch {
      return 'down';
    } finally {
      await client.end().catch(() => {});
    }
  }

  /** Asks both nodes what they are every 250 ms until stopped; gives each change with the time its answer came (the first answers included). */
  watchNodes(): { stop(): Promise<{ node: 0 | 1; status: 'writable' | 'standby' | 'down'; at: number }[]> } {
    const changes: { node: 0 | 1; status: 'writable' | 'standby' | 'down'; at: number }[] = [];
    let watching = true;
    const done = Promise.all(([0, 1] as const).map(async (i) => {
      let last: string | undefined;
      while (watching) {
        const asked = Date.now();
        const status = await this.nodeStatus(i);
        // Timed when the answer came: a change is seen no earlier than it happened.
        if (status !== last) changes.push({ node: i, status, at: Date.now() });
        last = status;
        await sleep(Math.max(0, 250 - (Date.now() - asked)));
      }
    }));
    return { stop: async () => { watching = false; await done; return changes; } };
  }

  /** The node's server label as the writer's URL names it (host:port). */
  serverOf(i: number): string {
    return `${this.net.lanAddress(this.dbHosts[i]!)}:${this.ha.ports.nodes[i]}`;
  }

  /**
   * Node `i`'s Postgres crashes and restarts: one of its backends gets SIGKILL (`backend`, else one
   * waiting for the standby to confirm a commit, if one is), so the postmaster ends every session and starts again
   * through crash recovery (restart_after_crash), without its keeper. Returns the backend's pid.
   */
  async crashPostgres(i: number, backend?: number): Promise<number> {
    const client = new pg.Client({ connectionString: this.socketUrl(i) });
    client.on('error', () => {});
    await client.connect();
    try {
      const { rows } = await client.query<{ pid: number }>(`select pid from pg_stat_activity where backend_type = 'client backend' and pid <> pg_backend_pid()
        order by (pid = $1) desc, (wait_event = 'SyncRep') desc nulls last, backend_start limit 1`, [backend ?? 0]);
      const pid = rows[0]?.pid ?? (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      process.kill(pid, 'SIGKILL');
      return pid;
    } finally {
      await client.end().catch(() => {});
    }
  }

  /** Runs `sql` on node `i` as the superuser, on its socket. */
  async query<Row extends pg.QueryResultRow = Record<string, unknown>>(i: number, sql: string, params: unknown[] = []): Promise<Row[]> {
    const client = new pg.Client({ connectionString: this.socketUrl(i), connectionTimeoutMillis: 2000 });
    client.on('error', () => {});
    await client.connect();
    try {
      return (await client.query<Row>(sql, params)).rows;
    } finally {
      await client.end().catch(() => {});
    }
  }

  /** The sessions of node `i` waiting for the standby to confirm their commit. */
  async waitingCommits(i: number): Promise<number> {
    const client = new pg.Client({ connectionString: this.socketUrl(i), connectionTimeoutMillis: 1000 });
    client.on('error', () => {});
    try {
      await client.connect();
      return Number((await client.query<{ n: string }>("select count(*) as n from pg_stat_activity where wait_event = 'SyncRep'")).rows[0]!.n);
    } catch {
      return 0;
    } finally {
      await client.end().catch(() => {});
    }
  }

  /**
   * Node `i`'s postmaster pid, from its postmaster.pid, when that process runs and is this node's
   * postmaster (a file left by a killed one may name a pid reused since); undefined otherwise.
   */
  postmaster(i: number): number | undefined {
    const dir = path.join(this.cfg.dataDir, 'ha', `node${i + 1}`);
    try {
      const pid = Number(readFileSync(path.join(dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(dir) ? pid : undefined;
    } catch {
      return undefined;
    }
  }

  /** Node `i`'s machine lost: its postmaster and its keeper's process group killed, the keeper kept down until startDbNode(). */
  async killDbNode(i: number): Promise<void> {
    const keeper = this.ha.nodes[i]!.child!.process.pid!;
    const postmaster = this.postmaster(i);
    if (postmaster !== undefined) process.kill(postmaster, 'SIGKILL');
    process.kill(-keeper, 'SIGKILL');
    await this.ha.nodes[i]!.stop();
  }

  async startDbNode(i: number): Promise<void> {
    await this.ha.nodes[i]!.start();
  }
}
