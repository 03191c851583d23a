// A private, throw-away stack for tests and the benchmark: fresh secrets, free ports, a temporary data
// directory. Also more of the same service beside it: a streaming read replica of its database, and
// further nodes (PostgREST, edge, nginx) over that database or the replica.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { configFromEnv, type Config } from '../config/config.ts';
import type { Env } from '../config/settings.ts';
import type { Database } from './database.ts';
import { completeSecrets } from './secrets.ts';
import { freePort } from './processes.ts';
import { openReplica } from './replica.ts';
import { supervise } from './supervisor.ts';
import { startNode, startStack, type Node, type Stack } from './stack.ts';

export interface TestStack extends Stack {
  /** Everything the stack logged, for failure reports. */
  logs: string[];
  /** Stops the stack and deletes its data directory. */
  destroy(): Promise<void>;
  /** Stops the stack and starts it again on the same data directory, with `changes` to its environment. */
  restart(changes?: Env): Promise<TestStack>;
}

const NODE_PORTS = ['API_PORT', 'SITE_PORT', 'EDGE_PORT', 'POSTGREST_PORT', 'POSTGREST_ADMIN_PORT'];

/** A free port for each listener of a node (the two hosts, the edge, PostgREST and its admin server). */
export async function freeNodePorts(): Promise<Record<string, string>> {
  return Object.fromEntries(await Promise.all(NODE_PORTS.map(async (name) => [name, String(await freePort())] as const)));
}

function privateDataDir(): string {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'public-stats-'));
  chmodSync(dataDir, 0o755);
  return dataDir;
}

export async function startTestStack(options: { seedDemo?: boolean; env?: Env } = {}): Promise<TestStack> {
  const dataDir = privateDataDir();
  const secrets = await completeSecrets({});
  // One nginx worker and one edge process (tests run many stacks on two cores), and no cache warming
  // unless asked for: a test that changes the data reads it at once, from caches that only its own
  // requests filled.
  const env: Env = { ...secrets, DATA_DIR: dataDir, NGINX_WORKERS: '1', EDGE_WORKERS: '1', EDGE_WARM_SECONDS: '0', ...options.env };
  for (const name of [...NODE_PORTS, 'POSTGRES_PORT', 'POSTGRES_MONITOR_PORT', 'POSTGRES_STANDBY_PORT']) {
    env[name] ??= String(await freePort());
  }
  return stackOn(env, options.seedDemo ?? false, []);
}

async function stackOn(env: Env, seedDemo: boolean, logs: string[]): Promise<TestStack> {
  const dataDir = env.DATA_DIR!;
  const stack = await startStack(configFromEnv(env), { log: (line) => logs.push(line), seedDemo }).catch((error: Error) => {
    rmSync(dataDir, { recursive: true, force: true });
    throw new Error(`${error.message}\n${logs.join('\n')}`);
  });
  return Object.assign(stack, {
    logs,
    async destroy() {
      await stack.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
    async restart(changes: Env = {}) {
      await stack.stop();
      return stackOn({ ...env, ...changes }, seedDemo, logs);
    },
  });
}

/** What a second node shares with the first: every secret and key, the public URLs, the tunables. */
function sharedEnv(cfg: Config): Env {
  return {
    JWT_SECRET: cfg.JWT_SECRET,
    ANON_KEY: cfg.ANON_KEY,
    AUTHENTICATOR_PASSWORD: cfg.AUTHENTICATOR_PASSWORD,
    WRITER_DB_PASSWORD: cfg.WRITER_DB_PASSWORD,
    POSTGRES_PASSWORD: cfg.POSTGRES_PASSWORD,
    REPLICATION_PASSWORD: cfg.REPLICATION_PASSWORD,
    HTTP_SIG_PRIVATE_KEY: cfg.HTTP_SIG_PRIVATE_KEY,
    HTTP_SIG_PUBLIC_KEY: cfg.HTTP_SIG_PUBLIC_KEY,
    HTTP_SIG_RETIRED_PUBLIC_KEYS: cfg.HTTP_SIG_RETIRED_PUBLIC_KEYS,
    LOG_SIGNING_KEY: cfg.LOG_SIGNING_KEY,
    LOG_PUBLIC_KEY: cfg.LOG_PUBLIC_KEY,
    ...(cfg.logOrigin ? { LOG_ORIGIN: cfg.logOrigin } : {}),
    SITE_URL: cfg.siteUrl,
    API_URL: cfg.apiUrl,
    BIND_HOST: cfg.bindHost,
    NGINX_WORKERS: String(cfg.nginxWorkers),
    API_MICROCACHE_SECONDS: String(cfg.apiMicrocacheSeconds),
    SITE_MICROCACHE_SECONDS: String(cfg.siteMicrocacheSeconds),
    ...cfg.edgeTunables,
  };
}

export interface TestNode extends Node {
  logs: string[];
  /** Stops the node and deletes its data directory (its nginx prefix and caches). */
  destroy(): Promise<void>;
}

/**
 * Another node of `stack`'s service on ports of its own, as a second machine behind the same public
 * URLs would run it: over `authenticatorUrl` (the stack's database unless given), a read replica's
 * when `replica`.
 */
export async function startTestNode(stack: Stack, options: { authenticatorUrl?: string; replica?: boolean; env?: Env } = {}): Promise<TestNode> {
  const dataDir = privateDataDir();
  const env: Env = { ...sharedEnv(stack.cfg), DATA_DIR: dataDir, ...options.env };
  for (const name of NODE_PORTS) env[name] ??= String(await freePort());
  const cfg = configFromEnv(env);
  const logs: string[] = [];
  const node = await startNode(cfg, options.authenticatorUrl ?? stack.db.urlFor('authenticator'), { log: (line) => logs.push(line), replica: options.replica })
    .catch((error: Error) => {
      rmSync(dataDir, { recursive: true, force: true });
      throw new Error(`${error.message}\n${logs.join('\n')}`);
    });
  return Object.assign(node, {
    logs,
    async destroy() {
      await node.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  });
}

export interface TestReplica extends Database {
  logs: string[];
  /** Stops the replica and deletes its cluster. */
  destroy(): Promise<void>;
}

/**
 * A streaming read replica of the stack's embedded database (whose start made the replication role),
 * made by pg_basebackup -R, on a port of its own.
 */
export async function startTestReplica(stack: Stack): Promise<TestReplica> {
  const dataDir = privateDataDir();
  const logs: string[] = [];
  const log = (line: string) => logs.push(line);
  try {
    const replica = await openReplica({ ...stack.cfg, dataDir }, {
      primaryUrl: stack.db.adminUrl,
      replicationPassword: stack.cfg.REPLICATION_PASSWORD,
      dir: path.join(dataDir, 'replica'),
      port: await freePort(),
      log,
      supervise: (name, launch) => supervise(name, launch, { log, onGiveUp: log }),
    });
    return Object.assign(replica, {
      logs,
      async destroy() {
        await replica.stop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    });
  } catch (error) {
    rmSync(dataDir, { recursive: true, force: true });
    throw new Error(`${(error as Error).message}\n${logs.join('\n')}`);
  }
}
