// The service spread over network namespaces (tests/support/netns.ts), for the partition tests: the
// pg_auto_failover monitor and both Postgres nodes (three with `nodes: 3`), each in a namespace of its
// own, run by stack/ha.ts as the stack runs them (placed on LAN addresses, trusting `samenet`); two sides,
// each with a writer (`npm run writer -- run`, reading a fake Polymarket on its own loopback) and a node
// of the service (PostgREST, the edge, nginx) with a reader polling it, each in its own namespace; a
// witness on the WAN that both writers reach and no cut touches. The test process reaches the
// databases only through their Unix sockets, never over the network.
//
// Every process's output goes into the run's history (partition-history.ts) and its log.
// The hosts and sides are in partition-topology.ts, the databases' probes in partition-databases.ts.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { noteVerifierKey } from '../../contract/log-key.ts';
import { logOrigin } from '../../contract/paths.ts';
import { ROOT_DIR } from '../../config/checkout.ts';
import { configFromEnv, type Config } from '../../config/config.ts';
import type { Env } from '../../config/settings.ts';
import type { HaHost } from '../../stack/ha-placement.ts';
import { openHaDatabase } from '../../stack/ha.ts';
import { completeSecrets } from '../../stack/secrets.ts';
import { supervise } from '../../stack/supervisor.ts';
import { fakeAccount } from './fake-polymarket-account.ts';
import { Network } from './netns.ts';
import { PartitionDatabases } from './partition-databases.ts';
import { API_PORT, nodeEnv, SITE_PORT, writerEnv } from './partition-env.ts';
import { Recorder } from './partition-history.ts';
import { HOSTS, NETWORK_PREFIX, SIDES, THIRD_DB, type Side } from './partition-topology.ts';
import { WRITER_COMMAND } from './writer.ts';

const WITNESS_PORT = 7380;
const NODE = process.execPath;
/** libfaketime (Debian's faketime), preloaded into a writer whose clock a test skews: FAKETIME="+5m" moves its clock, timers included. */
const FAKETIME_LIB = '/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1';

export interface Tracked { name: string; child: ChildProcess; exited: Promise<number | null> }

export class PartitionCluster extends PartitionDatabases {
  readonly dir: string;
  readonly recorder = new Recorder();
  readonly logs: string[] = [];
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
    super(net, cfg);
    this.dir = dir;
  }

  /** Starts the cluster: two database nodes, or three (two standbys, number_sync_standbys 1) with `nodes: 3`. */
  static async start({ nodes = 2 }: { nodes?: 2 | 3 } = {}): Promise<PartitionCluster> {
    const dir = mkdtempSync(path.join(tmpdir(), 'public-stats-partition-'));
    chmodSync(dir, 0o755);
    const net = await Network.create(NETWORK_PREFIX, nodes === 3 ? [...HOSTS, THIRD_DB] : HOSTS, { cleanup: [dir] }).catch((error: Error) => {
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
      POSTGRES_THIRD_NODE_PORT: nodes === 3 ? '54326' : '',
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
      nodes: this.dbHosts.map((host) => this.#placed(host)),
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

  async #startNode(side: Side): Promise<void> {
    const node = this.spawnIn(side.reader, `node-${side.name}`, NODE, [path.join(ROOT_DIR, 'tests', 'support', 'partition-agent.ts'), 'node', JSON.stringify(nodeEnv(this.cfg, this.ha, this.dir, side))]);
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

  /**
   * `npm run writer -- run` on `side`'s writer machine: the fake Polymarket's account, a heartbeat every
   * second, a cycle every 15 s; its clock moved by `skewMinutes` (libfaketime) when given.
   */
  startWriter(side: Side, { skewMinutes }: { skewMinutes?: number } = {}): Tracked {
    const fake = JSON.parse(this.#fakeEnv[side.name]!) as Env;
    const skew: Env = skewMinutes ? { LD_PRELOAD: FAKETIME_LIB, FAKETIME: `${skewMinutes > 0 ? '+' : ''}${skewMinutes}m` } : {};
    const writer = this.spawnIn(side.writer, side.writerName, NODE, [...WRITER_COMMAND.slice(1), 'run'], {
      env: writerEnv(this.cfg, this.ha, this.dir, side, { ...fake, ...skew, WRITER_NAME: side.writerName, WRITER_HEARTBEAT_SECONDS: '1', WRITER_INTERVAL_MINUTES: '0.25', WRITER_LOG_LEVEL: 'debug' }),
      onLine: (line) => this.recorder.writerLine(side.writerName, line),
    });
    this.#writers.set(side.writerName, writer);
    return writer;
  }

  /** `side`'s writer process as last started (it may have exited since). */
  writer(side: Side): Tracked | undefined {
    return this.#writers.get(side.writerName);
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
      env: writerEnv(this.cfg, this.ha, this.dir, side), stdin: `${JSON.stringify({ type: 'payout', date, usd })}\n`,
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
