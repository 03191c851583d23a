// The whole local stack in one call: Postgres, migrations, PostgREST, the edge server, nginx. Used by `npm start`,
// the tests and the benchmark, so all three run exactly the same thing. Every process is supervised:
// one that dies is started again, and one that keeps dying ends the stack through onGiveUp.
// startNode runs the same node (PostgREST, edge, nginx) over a database that runs elsewhere: the
// primary, or a read replica of it.
// The real log's origin comes from the database once its first checkpoint has fixed it: both read it
// there before anything names the log, and hand it to every part as LOG_ORIGIN.
// The parts built elsewhere run as programs, never imported: the site's renderer (through
// prepareNginx), the edge's first warming pass and the writer's demo seed.
import path from 'node:path';
import { withStoredLogOrigin } from '../contract/paths.ts';
import { ROOT_DIR } from '../config/checkout.ts';
import type { Config } from '../config/config.ts';
import { assertServableOrigins } from '../config/origins.ts';
import { openDatabase, type Database, type Supervise } from './database.ts';
import { openHaDatabase, type HaDatabase } from './ha.ts';
import { startEdge, warmGateways } from './edge.ts';
import { connectDatabase, SERVER_TIMEOUTS } from '../db-client/pg-connect.ts';
import { findNginx, prepareNginx, startNginx } from './nginx.ts';
import { startPostgrest } from './postgrest.ts';
import { assertPortFree, GroupRecord, runNodeLogged, type Child, type Log } from './processes.ts';
import { supervise, type RestartPolicy, type SupervisedPart } from './supervisor.ts';
import { currentStatus, keepCertificate, writeTlsParts, type CertificateKeeper } from './tls-serving.ts';

/** PostgREST, the edge server and nginx (the API host and the site host): one node of the service. */
export interface Node {
  cfg: Config;
  postgrest: SupervisedPart;
  edge: SupervisedPart;
  nginx: SupervisedPart;
  /** With HTTPS: what keeps the certificate nginx serves up to date. */
  tls: CertificateKeeper | undefined;
  /** Stops PostgREST on purpose (for tests of the down path); startPostgrest() brings it back. */
  stopPostgrest(): Promise<void>;
  startPostgrest(): Promise<void>;
  /** Stops the edge server on purpose (for tests of the site host without it); startEdge() brings it back. */
  stopEdge(): Promise<void>;
  startEdge(): Promise<void>;
  stop(): Promise<void>;
}

/** A node with the database it serves. */
export interface Stack extends Node {
  db: Database;
  /** The same database when POSTGRES_HA runs it: the monitor and both nodes. */
  ha: HaDatabase | undefined;
  /** The origin the real log's first checkpoint fixed when the stack started (cfg.logOrigin is then it); null while none was signed. */
  storedLogOrigin: string | null;
}

export interface NodeOptions {
  log: Log;
  /** Called once when a part keeps failing to run; the node is of no use after it. */
  onGiveUp?: (reason: string) => void;
  restartPolicy?: RestartPolicy;
}

export interface StackOptions extends NodeOptions {
  /** Load the demo dataset into an empty database. */
  seedDemo: boolean;
}

/** What runs from one data directory: its ports claimed, its processes recorded and supervised, stopped in reverse order. */
interface Parts {
  keepRunning: Supervise;
  started: { stop(): Promise<void> }[];
  stopAll(): Promise<void>;
}

async function prepareParts(cfg: Config, ports: [number, string, string][], { log, onGiveUp, restartPolicy }: NodeOptions): Promise<Parts> {
  assertServableOrigins(cfg);
  findNginx(cfg.nginxBin);
  const record = new GroupRecord(path.join(cfg.dataDir, 'processes.json'));
  await record.reapLeftovers(log);
  for (const [port, what, variable] of ports) await assertPortFree(cfg.bindHost, port, what, variable);
  let gaveUp = false;
  const keepRunning = (name: string, launch: () => Promise<Child>) =>
    supervise(name, async () => {
      const child = await launch();
      record.add(child);
      void child.exited.then(() => record.remove(child));
      return child;
    }, {
      log,
      policy: restartPolicy,
      onGiveUp: (reason) => {
        if (gaveUp) return;
        gaveUp = true;
        (onGiveUp ?? log)(reason);
      },
    });
  // Stopped in reverse order: nginx first, Postgres last.
  const started: { stop(): Promise<void> }[] = [];
  const stopAll = async () => {
    for (const part of started.reverse()) await part.stop().catch((error: Error) => log(`stop: ${error.message}`));
    started.length = 0;
  };
  return { keepRunning, started, stopAll };
}

/** The loopback ports a node listens on; with HTTPS the gateways listen on sockets instead (gatewayAddresses). */
const nodePorts = (cfg: Config): [number, string, string][] => [
  ...(cfg.tls ? [] : [[cfg.apiPort, 'API host', 'API_PORT'], [cfg.sitePort, 'site host', 'SITE_PORT']] as [number, string, string][]),
  [cfg.edgePort, 'edge server', 'EDGE_PORT'],
  [cfg.postgrestPort, 'PostgREST', 'POSTGREST_PORT'],
  [cfg.postgrestAdminPort, 'PostgREST admin', 'POSTGREST_ADMIN_PORT'],
];

/**
 * PostgREST on `authenticatorUrl` (the primary, or a read replica when `replica`), the edge and
 * nginx, with every cached answer in both gateways' microcaches before it returns.
 */
async function startNodeParts(cfg: Config, authenticatorUrl: string, { keepRunning, started }: Parts, log: Log, replica: boolean): Promise<Omit<Node, 'stop'>> {
  const postgrest = await keepRunning('postgrest', () => startPostgrest(cfg, authenticatorUrl, log, { replica }));
  started.push(postgrest);
  // Before nginx, so the site host never proxies to an edge that is not listening yet.
  const edge = await keepRunning('edge', () => startEdge(cfg, log));
  started.push(edge);
  // Rendered once; a restarted nginx serves the same configuration and documents. With HTTPS, nginx
  // starts with the certificate there is (a restart reuses it), or with only the plain-HTTP
  // challenges and redirect while the first is obtained.
  const tlsStatus = cfg.tls ? currentStatus(cfg) : undefined;
  const prepared = await prepareNginx(cfg, tlsStatus && (() => writeTlsParts(cfg, tlsStatus)));
  const nginx = await keepRunning('nginx', () => startNginx(cfg, log, prepared));
  started.push(nginx);
  const tls = tlsStatus && keepCertificate(cfg, tlsStatus, log);
  if (tls) started.push(tls);
  // Every cached answer is in both gateways' microcaches before the node is ready: no first
  // caller waits for one. The edge keeps them fresh from here on.
  if (Number(cfg.edgeTunables.EDGE_WARM_SECONDS) !== 0) await warmGateways(cfg, log);
  return {
    cfg,
    postgrest,
    edge,
    nginx,
    tls,
    stopPostgrest: () => postgrest.stop(),
    startPostgrest: () => postgrest.start(),
    stopEdge: () => edge.stop(),
    startEdge: () => edge.start(),
  };
}

/**
 * One more node of the service over a database that runs elsewhere: `authenticatorUrl` logs in as
 * PostgREST's role on the primary or, with `replica`, on a read replica. Nodes that share the
 * database, the secrets (JWT_SECRET, ANON_KEY, HTTP_SIG_PRIVATE_KEY) and the public URLs answer alike.
 */
export async function startNode(given: Config, authenticatorUrl: string, options: NodeOptions & { replica?: boolean }): Promise<Node> {
  const parts = await prepareParts(given, nodePorts(given), options);
  try {
    const cfg = withStoredLogOrigin(given, await publishedLogOrigin(authenticatorUrl));
    return { ...(await startNodeParts(cfg, authenticatorUrl, parts, options.log, options.replica ?? false)), stop: parts.stopAll };
  } catch (error) {
    await parts.stopAll();
    throw error;
  }
}

export async function startStack(given: Config, options: StackOptions): Promise<Stack> {
  let cfg = given;
  const ports = nodePorts(cfg);
  if (!cfg.databaseUrl) ports.push([cfg.postgresPort, cfg.postgresHa ? 'first Postgres node' : 'embedded Postgres', 'POSTGRES_PORT']);
  if (cfg.postgresHa) {
    ports.push([cfg.postgresHa.monitorPort, 'pg_auto_failover monitor', 'POSTGRES_MONITOR_PORT']);
    ports.push([cfg.postgresHa.standbyPort, 'second Postgres node', 'POSTGRES_STANDBY_PORT']);
    for (const port of cfg.postgresHa.nodePorts.slice(2)) ports.push([port, 'third Postgres node', 'POSTGRES_THIRD_NODE_PORT']);
  }
  const parts = await prepareParts(cfg, ports, options);
  const { log } = options;
  try {
    const ha = cfg.postgresHa
      ? await openHaDatabase(cfg, log, parts.keepRunning)
      : undefined;
    const db = ha ?? await openDatabase(cfg, log, parts.keepRunning);
    parts.started.push(db);
    const storedLogOrigin = await storedOrigin(db.adminUrl);
    cfg = withStoredLogOrigin(cfg, storedLogOrigin);
    if (options.seedDemo) await seedDemo(db.adminUrl, cfg, log);
    // Under failover PostgREST reads the standby and falls back to the primary: its notification channel stays off.
    return { ...(await startNodeParts(cfg, db.urlFor('authenticator'), parts, log, ha !== undefined)), db, ha, storedLogOrigin, stop: parts.stopAll };
  } catch (error) {
    await parts.stopAll();
    throw error;
  }
}

/** The origin the real log's first checkpoint fixed (stats.log_origin()), null while none is signed. */
async function storedOrigin(adminUrl: string): Promise<string | null> {
  const client = await connectDatabase(adminUrl, { applicationName: 'stats-start', timeouts: SERVER_TIMEOUTS });
  try {
    return (await client.query<{ origin: string | null }>('select stats.log_origin() as origin')).rows[0]!.origin;
  } finally {
    await client.end();
  }
}

/**
 * The same, for a node, which logs in only as PostgREST does: from the public log record, whose
 * latest checkpoint, once it is the real log's, names the origin every real checkpoint names.
 */
async function publishedLogOrigin(authenticatorUrl: string): Promise<string | null> {
  // PostgREST's URL: under failover it prefers a standby (target_session_attrs=prefer-standby), and so does this read.
  const client = await connectDatabase(authenticatorUrl, { applicationName: 'stats-node-start', timeouts: SERVER_TIMEOUTS, reading: true });
  try {
    await client.query('set role anon');
    const { rows } = await client.query<{ demo: boolean | null; origin: string | null }>(
      "select (l->>'demo')::boolean as demo, l->'log_checkpoint'->>'origin' as origin from public.landing_log() l");
    return rows[0]!.demo === false ? rows[0]!.origin : null;
  } catch (error) {
    throw new Error(`the log's origin could not be read from the database (${(error as Error).message}): check NODE_DATABASE_URL, then start again.`);
  } finally {
    await client.end();
  }
}

/** What the log's signer needs from the stack: its key, and the origin it signs under (the one the log's first checkpoint fixed, else LOG_ORIGIN, else made from the site's URL). */
export function logSignerEnv(cfg: Config): Record<string, string> {
  return { LOG_SIGNING_KEY: cfg.LOG_SIGNING_KEY, SITE_URL: cfg.siteUrl, ...(cfg.logOrigin ? { LOG_ORIGIN: cfg.logOrigin } : {}) };
}

/**
 * Loads the demo history when the database holds no data at all, by the writer's own command, so
 * the seed and the running demo writer tell one story, and its nights are signed into the demo log.
 * It is handed its database, source and the log's signer, and reads no env file.
 */
async function seedDemo(adminUrl: string, cfg: Config, log: Log): Promise<void> {
  await runNodeLogged(path.join(ROOT_DIR, 'writer', 'cli.ts'), ['seed-demo'], {
    WRITER_DATABASE_URL: adminUrl, WRITER_SOURCE: 'demo', ENV_FILE: '/dev/null', ...logSignerEnv(cfg),
  }, log);
}
