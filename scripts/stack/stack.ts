// The whole local stack in one call: Postgres, migrations, PostgREST, the edge server, nginx. Used by `npm start`,
// the tests and the benchmark, so all three run exactly the same thing. Every process is supervised:
// one that dies is started again, and one that keeps dying ends the stack through onGiveUp.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../lib/config.ts';
import { openDatabase, type Database } from '../lib/database.ts';
import { startEdge } from '../lib/edge.ts';
import { findNginx, prepareNginx, startNginx } from '../lib/nginx.ts';
import { startPostgrest } from '../lib/postgrest.ts';
import { assertPortFree, GroupRecord, type Child, type Log } from '../lib/processes.ts';
import { supervise, type RestartPolicy, type SupervisedPart } from '../lib/supervisor.ts';
import { openWriterDb } from '../writer/db.ts';
import { seedDemoHistory } from '../writer/demo.ts';
import { warmOnce, warmTargets } from '../../edge/warm.ts';
import { apiDocumentLocations, documentLocations } from '../../site/render/locations.ts';
import { renderSiteDocuments } from '../../site/render/render.ts';

export interface Stack {
  cfg: Config;
  db: Database;
  postgrest: SupervisedPart;
  edge: SupervisedPart;
  nginx: SupervisedPart;
  /** Stops PostgREST on purpose (for tests of the down path); startPostgrest() brings it back. */
  stopPostgrest(): Promise<void>;
  startPostgrest(): Promise<void>;
  /** Stops the edge server on purpose (for tests of the site host without it); startEdge() brings it back. */
  stopEdge(): Promise<void>;
  startEdge(): Promise<void>;
  stop(): Promise<void>;
}

export interface StackOptions {
  log: Log;
  /** Load the demo dataset into an empty database. */
  seedDemo: boolean;
  /** Called once when a part keeps failing to run; the stack is of no use after it. */
  onGiveUp?: (reason: string) => void;
  restartPolicy?: RestartPolicy;
}

export async function startStack(cfg: Config, { log, seedDemo, onGiveUp, restartPolicy }: StackOptions): Promise<Stack> {
  findNginx(cfg.nginxBin);
  const record = new GroupRecord(path.join(cfg.dataDir, 'processes.json'));
  await record.reapLeftovers(log);
  const ports: [number, string, string][] = [
    [cfg.apiPort, 'API host', 'API_PORT'],
    [cfg.sitePort, 'site host', 'SITE_PORT'],
    [cfg.edgePort, 'edge server', 'EDGE_PORT'],
    [cfg.postgrestPort, 'PostgREST', 'POSTGREST_PORT'],
    [cfg.postgrestAdminPort, 'PostgREST admin', 'POSTGREST_ADMIN_PORT'],
  ];
  if (!cfg.databaseUrl) ports.push([cfg.postgresPort, 'embedded Postgres', 'POSTGRES_PORT']);
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
  try {
    const db = await openDatabase(cfg, log, keepRunning);
    started.push(db);
    if (seedDemo && (await seedDemoIfEmpty(db.adminUrl))) log('The database was empty: loaded the demo dataset (data_source "demo").');
    const postgrest = await keepRunning('postgrest', () => startPostgrest(cfg, db.urlFor('authenticator'), log));
    started.push(postgrest);
    // Before nginx, so the site host never proxies to an edge that is not listening yet.
    const edge = await keepRunning('edge', () => startEdge(cfg, log));
    started.push(edge);
    // Rendered once; a restarted nginx serves the same configuration and documents.
    const prepared = await prepareNginx(cfg, async (siteRoot, locations) => {
      await renderSiteDocuments(cfg, siteRoot);
      writeFileSync(locations.site, documentLocations());
      writeFileSync(locations.api, apiDocumentLocations());
    });
    const nginx = await keepRunning('nginx', () => startNginx(cfg, log, prepared));
    started.push(nginx);
    // Every cached answer is in both gateways' microcaches before the stack is ready: no first
    // caller waits for one. The edge keeps them fresh from here on.
    if (Number(cfg.edgeTunables.EDGE_WARM_SECONDS) !== 0) {
      const local = (port: number) => `http://${cfg.bindHost}:${port}`;
      const failed = await warmOnce(warmTargets({ site: local(cfg.sitePort), api: local(cfg.apiPort) }, cfg.ANON_KEY), 10_000);
      if (failed.length) log(`The gateways' caches could not all be warmed before start (${failed.length}); first: ${failed[0]}`);
    }
    return {
      cfg,
      db,
      postgrest,
      edge,
      nginx,
      stopPostgrest: () => postgrest.stop(),
      startPostgrest: () => postgrest.start(),
      stopEdge: () => edge.stop(),
      startEdge: () => edge.start(),
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/**
 * Loads the demo history when the database holds no data at all. The writer's demo source
 * (scripts/writer/demo.ts) makes it, so the seed and the running demo writer tell one story.
 */
export async function seedDemoIfEmpty(adminUrl: string): Promise<boolean> {
  const db = openWriterDb(adminUrl);
  try {
    return await seedDemoHistory(db);
  } finally {
    await db.destroy();
  }
}
