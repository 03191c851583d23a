// edge/: the edge server: every answer of both hosts, the page, the log under /log/, MCP and A2A,
// signed. It imports contract/.
//
// Node entry of the edge: the portable Hono app (edge/app.ts) on @hono/node-server (edge/serve.ts).
// Started by the local stack (stack/edge.ts) as `node edge/server.ts` with the EDGE_* variables.
// One process serves on one core; with EDGE_WORKERS above 1 (by default see defaultWorkers) this process
// forks that many workers that share the listening socket (https://nodejs.org/api/cluster.html),
// keeps the gateways warm itself and holds the transparency log's state for all of them. A worker that
// dies takes the whole edge down, so whoever supervises the edge starts it again whole.
import cluster from 'node:cluster';
import { availableParallelism, totalmem } from 'node:os';
import { edgeConfigFromEnv } from './config.ts';
import { LogHolder, postgrestReads, type LogSource } from './log-holder.ts';
import { logSourceFromPrimary, serveLogHolder } from './log-ipc.ts';
import { keepWarm, warmTargets } from './warm.ts';

const cfg = edgeConfigFromEnv(process.env);
const hostname = process.env.EDGE_HOST || '127.0.0.1';
const port = Number(process.env.EDGE_PORT);
if (!Number.isInteger(port) || port < 1 || port > 65535) {
  console.error(`EDGE_PORT must be a TCP port number, got "${process.env.EDGE_PORT}".`);
  process.exit(1);
}

/** What one more worker process may come to cost in memory (its heap is bounded at 128 MiB). */
const WORKER_MEMORY_BYTES = 256 * 1024 ** 2;

/**
 * Workers by cores and by memory: none beyond one on a machine of one or two cores, where nginx,
 * Postgres and PostgREST want the other core and a second worker plus the primary that holds them
 * would cost some 150 MB of a small machine's memory; above that one per core, at most one per
 * WORKER_MEMORY_BYTES of a quarter of the machine's memory.
 */
function defaultWorkers(): number {
  const cores = availableParallelism();
  if (cores <= 2) return 1;
  return Math.max(1, Math.min(cores, Math.floor(totalmem() / 4 / WORKER_MEMORY_BYTES)));
}

const workers = process.env.EDGE_WORKERS ? Number(process.env.EDGE_WORKERS) : defaultWorkers();
if (!Number.isInteger(workers) || workers < 1 || workers > 64) {
  console.error(`EDGE_WORKERS must be a whole number from 1 to 64, got "${process.env.EDGE_WORKERS}".`);
  process.exit(1);
}

/** Both gateways' microcaches, kept filled and fresh from here (the edge knows every cached path). */
function warmGateways(): () => void {
  if (!cfg.siteGateway || cfg.warmPeriodMs <= 0) return () => {};
  return keepWarm(warmTargets({ site: cfg.siteGateway, api: cfg.apiUpstream }, cfg.anonKey), cfg.warmPeriodMs, cfg.upstreamTimeoutMs, (failed) => {
    console.error(`edge: ${failed.length} cached answer(s) could not be warmed, first: ${failed[0]}`);
  });
}

// Loaded only where it is served: a cluster primary that loaded the app would hold tens of MiB it never uses.
const served = (onStop: () => void, logSource?: LogSource) => import('./serve.ts').then(({ serveApp }) => serveApp(cfg, hostname, port, onStop, logSource));

if (workers === 1) {
  await served(warmGateways());
} else if (cluster.isPrimary) {
  // The log's one holder, which every worker asks, so that no two answers disagree on the log.
  serveLogHolder(new LogHolder(postgrestReads(cfg.postgrestUpstream, cfg.upstreamTimeoutMs)));
  let stopping = false;
  for (let i = 0; i < workers; i++) cluster.fork();
  const stopWarming = warmGateways();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
      return;
    }
    console.error(`edge: worker ${worker.id} exited (${signal ?? `code ${code}`}); stopping the edge, to be started again whole.`);
    stopping = true;
    for (const other of Object.values(cluster.workers ?? {})) other?.process.kill('SIGKILL');
    process.exit(1);
  });
  const stop = () => {
    if (stopping) return;
    stopping = true;
    stopWarming();
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
} else {
  // The primary stops the workers; a signal from the terminal to the whole group stops them too.
  await served(() => {}, logSourceFromPrimary());
}
