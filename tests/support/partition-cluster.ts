// The service spread over network namespaces (tests/support/netns.ts), for the partition tests: the
// pg_auto_failover monitor and both Postgres nodes each in a namespace of its own, run by
// stack/ha.ts as the stack runs them (placed on LAN addresses, trusting `samenet`); two sides,
// each with a writer (`npm run writer -- run`, reading a fake Polymarket on its own loopback) and a node
// of the service (PostgREST, the edge, nginx) with a reader polling it, each in its own namespace; a
// witness on the WAN that both writers reach and no cut touches. The test process reaches the
// databases only through their Unix sockets, never over the network.
//
//   LAN 198.18.0.0/24, bridges a and b joined by the trunk:   WAN 198.18.1.0/24:
//     mon .10 (moves to the side the test needs)                wa .21, wb .31, wit .40
//     side a: n1 .11, wa .21, ra .22
//     side b: n2 .12, wb .31, rb .32
//
// Every process's output goes into the run's history (partition-history.ts) and its log.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { noteVerifierKey } from '../../contract/log-key.ts';
import { logOrigin } from '../../contract/paths.ts';
import { ROOT_DIR } from '../../config/checkout.ts';
import { configFromEnv, type Config } from '../../config/config.ts';
import type { Env } from '../../config/settings.ts';
import type { HaHost } from '../../stack/ha-placement.ts';
import { openHaDatabase, type HaDatabase, type HaNodeState } from '../../stack/ha.ts';
import { completeSecrets } from '../../stack/secrets.ts';
import { idsOf } from '../../stack/processes.ts';
import { supervise } from '../../stack/supervisor.ts';
import { fakeAccount } from './fake-polymarket.ts';
import { Network, type HostSpec } from './netns.ts';
import { Recorder } from './partition-history.ts';
import { WRITER_COMMAND } from './writer.ts';

export const NETWORK_PREFIX = 'pst-';

export const HOSTS: HostSpec[] = [
  { name: 'mon', lan: 10, bridge: 'b' },
  { name: 'n1', lan: 11, bridge: 'a' },
  { name: 'n2', lan: 12, bridge: 'b' },
  { name: 'wa', lan: 21, bridge: 'a', wan: 21 },
  { name: 'ra', lan: 22, bridge: 'a' },
  { name: 'wb', lan: 31, bridge: 'b', wan: 31 },
  { name: 'rb', lan: 32, bridge: 'b' },
  { name: 'wit', wan: 40 },
];

/** One side of the service: a database node, the writer beside it and a node of the service with its reader. */
export interface Side {
  name: 'a' | 'b';
  /** The database node of this side (0: n1, 1: n2). */
  db: 0 | 1;
  dbHost: 'n1' | 'n2';
  writer: 'wa' | 'wb';
  reader: 'ra' | 'rb';
  writerName: string;
}

export const SIDES: [Side, Side] = [
  { name: 'a', db: 0, dbHost: 'n1', writer: 'wa', reader: 'ra', writerName: 'writer-a' },
  { name: 'b', db: 1, dbHost: 'n2', writer: 'wb', reader: 'rb', writerName: 'writer-b' },
];

const WITNESS_PORT = 7380;
const SITE_PORT = 8080;
const API_PORT = 54321;
const NODE = process.execPath;

interface Tracked { name: string; child: ChildProcess; exited: Promise<number | null> }

export class PartitionCluster {
  readonly net: Network;
  readonly cfg: Config;
  readonly dir: string;
  readonly recorder = new Recorder();
  readonly logs: string[] = [];
  ha!: HaDatabase;
  /** The log's verifier key, and the witness's. */
  logVkey = '';
  witnessVkey = '';
  readonly #tracked = new Set<Tracked>();
  readonly #writers = new Map<string, Tracked>();
  #fakeEnv: Record<string, string> = {};
  #nightSerial = 0;
  #importing = false;
  #importers: Promise<void>[] = [];

  private constructor(net: Network, cfg: Config, dir: string) {
    this.net = net;
    this.cfg = cfg;
    this.dir = dir;
  }

  static async start(): Promise<PartitionCluster> {
    const dir = mkdtempSync(path.join(tmpdir(), 'public-stats-partition-'));
    chmodSync(dir, 0o755);
    const net = await Network.create(NETWORK_PREFIX, HOSTS, { cleanup: [dir] }).catch((error: Error) => {
      rmSync(dir, { recursive: true, force: true });
      throw error;
    });
    const secrets = await completeSecrets({});
    const env: Env = {
      ...secrets,
      DATA_DIR: path.join(dir, 'db'),
      POSTGRES_HA: 'pg_auto_failover',
      // Each server has its own address; the ports differ only because their sockets share one directory.
      POSTGRES_PORT: '54329',
      POSTGRES_STANDBY_PORT: '54328',
      POSTGRES_MONITOR_PORT: '54327',
      SITE_URL: `http://127.0.0.1:${SITE_PORT}`,
      API_URL: `http://127.0.0.1:${API_PORT}`,
      LOG_ORIGIN: 'partition.test/log',
    };
    mkdirSync(env.DATA_DIR!, { mode: 0o755 });
    const cluster = new PartitionCluster(net, configFromEnv(env), dir);
    try {
      await cluster.#startAll();
    } catch (error) {
      await cluster.destroy();
      throw new Error(`${(error as Error).message}\n${cluster.logs.slice(-80).join('\n')}`);
    }
    return cluster;
  }

  log(line: string): void {
    this.logs.push(`${new Date().toISOString().slice(11, 23)} ${line}`);
  }

  /** Spawns `program args` inside `host`'s namespace, its output lines to `onLine` and the log. */
  spawnIn(host: string, name: string, program: string, args: string[], { env = {}, onLine, stdin }: { env?: Env; onLine?: (line: string) => void; stdin?: string } = {}): Tracked {
    const [file, wrapped] = this.net.command(host, program, args);
    const child = spawn(file, wrapped, { cwd: ROOT_DIR, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env } as NodeJS.ProcessEnv, stdio: ['pipe', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    const tracked = { name, child, exited };
    this.#tracked.add(tracked);
    void exited.then(() => this.#tracked.delete(tracked));
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => {
        onLine?.(line);
        if (name.startsWith('reader')) return;
        this.log(`[${name}] ${line.slice(0, 400)}`);
      });
    }
    child.stdin!.end(stdin ?? '');
    return tracked;
  }

  /** Waits for a line of `tracked` that `match` accepts; fails when it exits first or after `timeoutMs`. */
  #waitLine(tracked: Tracked, match: (line: string) => boolean, timeoutMs: number): Promise<string> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${tracked.name}: no expected line within ${timeoutMs / 1000} s`)), timeoutMs);
      for (const stream of [tracked.child.stdout!, tracked.child.stderr!]) {
        createInterface({ input: stream }).on('line', (line) => {
          if (match(line)) {
            clearTimeout(timer);
            resolve(line);
          }
        });
      }
      void tracked.exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`${tracked.name} exited (${code}) before it was ready`));
      });
    });
  }

  #placed(host: string): HaHost {
    return { host: this.net.lanAddress(host), command: (program, args, ids) => this.net.command(host, program, args, ids) };
  }

  async #startAll(): Promise<void> {
    const log = (line: string) => this.log(line);
    this.ha = await openHaDatabase(this.cfg, log, (name, launch) => supervise(name, launch, { log, onGiveUp: log }), {
      monitor: this.#placed('mon'),
      nodes: [this.#placed('n1'), this.#placed('n2')],
      trustFrom: 'samenet',
      reach: 'socket',
    });
    const origin = logOrigin(this.cfg, false);
    this.logVkey = await noteVerifierKey(origin, Buffer.from(this.cfg.LOG_PUBLIC_KEY, 'base64url'));
    await Promise.all([this.#startWitness(), ...SIDES.map((side) => this.#startNode(side)), this.#startFakes()]);
    // Writer a first, so it is the active writer and b its standby.
    for (const side of SIDES) {
      this.startWriter(side);
      await until(`${side.writerName} to ${side.name === 'a' ? 'hold the lock' : 'wait as standby'}`, () =>
        this.logs.some((l) => l.includes(`[${side.writerName}]`) && (side.name === 'a' ? l.includes('heartbeat done') : l.includes('waiting as standby'))), 60_000);
    }
    for (const side of SIDES) this.#startReader(side);
  }

  async #startWitness(): Promise<void> {
    const dir = path.join(this.dir, 'witness');
    mkdirSync(dir, { recursive: true });
    const trust = path.join(dir, 'trust.policy');
    writeFileSync(trust, `log ${this.logVkey}\nquorum none\n`);
    const witness = this.spawnIn('wit', 'witness', NODE, [path.join(ROOT_DIR, 'witness', 'cli.ts'), '--key', path.join(dir, 'key'), '--name', 'witness.partition.test/w1',
      '--policy', trust, '--state', path.join(dir, 'state'), '--listen', `${this.net.wanAddress('wit')}:${WITNESS_PORT}`]);
    const line = await this.#waitLine(witness, (l) => l.startsWith('vkey: '), 60_000);
    this.witnessVkey = line.slice('vkey: '.length);
    writeFileSync(path.join(this.dir, 'log.policy'), `log ${this.logVkey}\nwitness w1 ${this.witnessVkey} http://${this.net.wanAddress('wit')}:${WITNESS_PORT}\nquorum w1\n`);
  }

  /** The checkpoint the witness holds as the latest it cosigned, read from its state. */
  witnessState(): { size: number; root: string } | undefined {
    const dir = path.join(this.dir, 'witness', 'state');
    if (!existsSync(dir)) return undefined;
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
      const state = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as { size: number; root: string };
      return { size: state.size, root: state.root };
    }
    return undefined;
  }

  /** The environment of a node of the service on `side`: the shared secrets and public URLs, its own data directory. */
  #nodeEnv(side: Side): Env {
    const dataDir = path.join(this.dir, `node-${side.name}`);
    mkdirSync(dataDir, { mode: 0o755 });
    chmodSync(dataDir, 0o755);
    const { cfg } = this;
    return {
      JWT_SECRET: cfg.JWT_SECRET, ANON_KEY: cfg.ANON_KEY, AUTHENTICATOR_PASSWORD: cfg.AUTHENTICATOR_PASSWORD, WRITER_DB_PASSWORD: cfg.WRITER_DB_PASSWORD,
      POSTGRES_PASSWORD: cfg.POSTGRES_PASSWORD, HTTP_SIG_PRIVATE_KEY: cfg.HTTP_SIG_PRIVATE_KEY, HTTP_SIG_PUBLIC_KEY: cfg.HTTP_SIG_PUBLIC_KEY,
      LOG_SIGNING_KEY: cfg.LOG_SIGNING_KEY, LOG_PUBLIC_KEY: cfg.LOG_PUBLIC_KEY, LOG_ORIGIN: cfg.logOrigin,
      SITE_URL: cfg.siteUrl, API_URL: cfg.apiUrl, SITE_PORT: String(SITE_PORT), API_PORT: String(API_PORT),
      DATA_DIR: dataDir, NGINX_WORKERS: '1', EDGE_WORKERS: '1',
      // Readers see the database's state within a second or two: the caches hold an answer for 1 s.
      API_MICROCACHE_SECONDS: '1', SITE_MICROCACHE_SECONDS: '1', EDGE_HEALTH_TTL_SECONDS: '1', EDGE_UPSTREAM_TIMEOUT_SECONDS: '3',
      AUTHENTICATOR_URL: this.ha.urlFor('authenticator'),
    };
  }

  async #startNode(side: Side): Promise<void> {
    const node = this.spawnIn(side.reader, `node-${side.name}`, NODE, [path.join(ROOT_DIR, 'tests', 'support', 'partition-agent.ts'), 'node', JSON.stringify(this.#nodeEnv(side))]);
    await this.#waitLine(node, (l) => l === 'ready', 180_000);
  }

  async #startFakes(): Promise<void> {
    const account = fakeAccount();
    const facts = { ...account, chainBalance: String(account.chainBalance) };
    await Promise.all(SIDES.map(async (side) => {
      const fake = this.spawnIn(side.writer, `fake-${side.name}`, NODE, [path.join(ROOT_DIR, 'tests', 'support', 'partition-agent.ts'), 'fake', JSON.stringify(facts)]);
      this.#fakeEnv[side.name] = await this.#waitLine(fake, (l) => l.startsWith('{'), 60_000);
    }));
  }

  /** The environment `npm run writer` has on `side`'s writer machine: the stack's secrets, every node in its URL, its own signer state. */
  writerEnv(side: Side, extra: Env = {}): Env {
    const { cfg } = this;
    const dataDir = path.join(this.dir, `writer-${side.name}`);
    mkdirSync(dataDir, { recursive: true });
    return {
      JWT_SECRET: cfg.JWT_SECRET, ANON_KEY: cfg.ANON_KEY, AUTHENTICATOR_PASSWORD: cfg.AUTHENTICATOR_PASSWORD, WRITER_DB_PASSWORD: cfg.WRITER_DB_PASSWORD,
      POSTGRES_PASSWORD: cfg.POSTGRES_PASSWORD, HTTP_SIG_PRIVATE_KEY: cfg.HTTP_SIG_PRIVATE_KEY,
      LOG_SIGNING_KEY: cfg.LOG_SIGNING_KEY, SITE_URL: cfg.siteUrl, LOG_ORIGIN: cfg.logOrigin,
      DATA_DIR: dataDir, ENV_FILE: '/dev/null', DATABASE_URL: '',
      WRITER_DATABASE_URL: this.ha.urlFor('stats_writer'),
      LOG_SIGNER_STATE: path.join(dataDir, 'log-signer.json'),
      LOG_POLICY: path.join(this.dir, 'log.policy'),
      WRITER_SOURCE: 'none',
      ...extra,
    };
  }

  /** `npm run writer -- run` on `side`'s writer machine: the fake Polymarket's account, a heartbeat every second, a cycle every 15 s. */
  startWriter(side: Side): Tracked {
    const fake = JSON.parse(this.#fakeEnv[side.name]!) as Env;
    const writer = this.spawnIn(side.writer, side.writerName, NODE, [...WRITER_COMMAND.slice(1), 'run'], {
      env: this.writerEnv(side, { ...fake, WRITER_NAME: side.writerName, WRITER_HEARTBEAT_SECONDS: '1', WRITER_INTERVAL_MINUTES: '0.25', WRITER_LOG_LEVEL: 'debug' }),
      onLine: (line) => this.recorder.writerLine(side.writerName, line),
    });
    this.#writers.set(side.writerName, writer);
    return writer;
  }

  /** Stops `side`'s writer (SIGTERM, as a supervisor stops it) and starts it again. */
  async restartWriter(side: Side): Promise<void> {
    const running = this.#writers.get(side.writerName);
    running?.child.kill('SIGTERM');
    await running?.exited;
    this.startWriter(side);
  }

  #startReader(side: Side): void {
    this.spawnIn(side.reader, `reader-${side.name}`, NODE, [path.join(ROOT_DIR, 'tests', 'support', 'partition-agent.ts'), 'read', JSON.stringify({
      name: `reader-${side.name}`, site: `http://127.0.0.1:${SITE_PORT}`, api: `http://127.0.0.1:${API_PORT}`, anonKey: this.cfg.ANON_KEY,
    })], { onLine: (line) => this.recorder.readerLine(line) });
  }

  /**
   * Imports one new final night through `npm run writer -- import` on `side`'s writer machine, as an
   * operator does: each one appends an entry to the log and signs a new checkpoint. Resolves when the
   * command ends, having recorded the outcome (acknowledged on exit 0, unknown otherwise).
   */
  async importNight(side: Side): Promise<void> {
    const serial = ++this.#nightSerial;
    const date = new Date(Date.UTC(2023, 0, 1) + serial * 86_400_000).toISOString().slice(0, 10);
    const usd = 10 + (serial % 97) + 0.25;
    const startedAt = Date.now();
    const run = this.spawnIn(side.writer, `import-${side.name}`, NODE, [...WRITER_COMMAND.slice(1), 'import', '-'], {
      env: this.writerEnv(side), stdin: `${JSON.stringify({ type: 'payout', date, usd })}\n`,
    });
    const code = await run.exited;
    this.recorder.night({ importer: `importer-${side.name}`, date, usd, startedAt, endedAt: Date.now(), outcome: code === 0 ? 'ok' : 'unknown' });
  }

  /**
   * Both sides import a night every `everyMs` until stopImporting(), each side with at most two imports
   * under way: one that hangs on a server cut off from it does not stop the next from trying.
   */
  startImporting(everyMs = 4000): void {
    this.#importing = true;
    this.#importers = SIDES.map(async (side) => {
      const underWay = new Set<Promise<void>>();
      while (this.#importing) {
        if (underWay.size < 2) {
          const run = this.importNight(side);
          underWay.add(run);
          void run.then(() => underWay.delete(run));
        }
        await sleep(everyMs);
      }
      await Promise.all(underWay);
    });
  }

  /** Stops starting imports and waits for those under way, at most `timeoutMs` (one hanging on a cut-off server may outlive it; destroy() ends it). */
  async stopImporting(timeoutMs = 60_000): Promise<void> {
    this.#importing = false;
    await Promise.race([Promise.all(this.#importers), sleep(timeoutMs)]);
  }

  // The databases, asked on their sockets.

  socketUrl(i: 0 | 1): string {
    return this.ha.nodeUrl(i);
  }

  async states(): Promise<HaNodeState[]> {
    return this.ha.states();
  }

  /** The node the monitor has as primary (reported and assigned), if one is. */
  async primary(): Promise<0 | 1 | undefined> {
    const states = await this.states().catch(() => []);
    const i = this.ha.ports.nodes.findIndex((port) => states.some((s) => s.port === port && ['primary', 'wait_primary', 'single'].includes(s.reported) && s.reported === s.assigned));
    return i < 0 ? undefined : i as 0 | 1;
  }

  /** What node `i` answers now on its socket: whether it takes writes, is in recovery, or is down. */
  async nodeStatus(i: 0 | 1): Promise<'writable' | 'standby' | 'down'> {
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
  serverOf(i: 0 | 1): string {
    return `${this.net.lanAddress(SIDES[i].dbHost)}:${this.ha.ports.nodes[i]}`;
  }

  /**
   * Node `i`'s Postgres crashes and restarts: one of its backends gets SIGKILL (`backend`, else one
   * waiting for the standby to confirm a commit, if one is), so the postmaster ends every session and starts again
   * through crash recovery (restart_after_crash), without its keeper. Returns the backend's pid.
   */
  async crashPostgres(i: 0 | 1, backend?: number): Promise<number> {
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
  async query<Row extends pg.QueryResultRow = Record<string, unknown>>(i: 0 | 1, sql: string, params: unknown[] = []): Promise<Row[]> {
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
  async waitingCommits(i: 0 | 1): Promise<number> {
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

  #postmaster(i: 0 | 1): number {
    return Number(readFileSync(path.join(this.cfg.dataDir, 'ha', `node${i + 1}`, 'postmaster.pid'), 'utf8').split('\n')[0]);
  }

  /** Node `i`'s machine lost: its postmaster and its keeper's process group killed, the keeper kept down until startDbNode(). */
  async killDbNode(i: 0 | 1): Promise<void> {
    const keeper = this.ha.nodes[i].child!.process.pid!;
    process.kill(this.#postmaster(i), 'SIGKILL');
    process.kill(-keeper, 'SIGKILL');
    await this.ha.nodes[i].stop();
  }

  async startDbNode(i: 0 | 1): Promise<void> {
    await this.ha.nodes[i].start();
  }

  async destroy(): Promise<void> {
    this.#importing = false;
    for (const t of this.#tracked) t.child.kill('SIGTERM');
    await Promise.race([Promise.all([...this.#tracked].map((t) => t.exited)), sleep(15_000)]);
    await this.ha?.stop().catch((error: Error) => this.log(`stopping the database: ${error.message}`));
    await this.net.destroy();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export async function until<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs: number, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await Promise.resolve().then(probe).catch(() => undefined);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await sleep(everyMs);
  }
}
