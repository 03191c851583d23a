// The whole local stack in one call: Postgres, migrations, PostgREST, the edge server, nginx. Used by `npm start`,
// the tests and the benchmark, so all three run exactly the same thing.
import type { Config } from './config.ts';
import { openDatabase, seedDemoIfEmpty, type Database } from './database.ts';
import { startEdge } from './edge.ts';
import { startNginx, findNginx } from './nginx.ts';
import { startPostgrest } from './postgrest.ts';
import { assertPortFree, type Child, type Log } from './processes.ts';

export interface Stack {
  cfg: Config;
  db: Database;
  postgrest: Child;
  edge: Child;
  nginx: Child;
  /** Stops PostgREST (for tests of the down path); startPostgrest() brings it back. */
  stopPostgrest(): Promise<void>;
  startPostgrest(): Promise<void>;
  /** Stops the edge server (for tests of the site host without it); startEdge() brings it back. */
  stopEdge(): Promise<void>;
  startEdge(): Promise<void>;
  stop(): Promise<void>;
}

export interface StackOptions {
  log: Log;
  /** Load the demo dataset into an empty database. */
  seedDemo: boolean;
}

export async function startStack(cfg: Config, { log, seedDemo }: StackOptions): Promise<Stack> {
  findNginx();
  const ports: [number, string, string][] = [
    [cfg.apiPort, 'API host', 'API_PORT'],
    [cfg.sitePort, 'site host', 'SITE_PORT'],
    [cfg.edgePort, 'edge server', 'EDGE_PORT'],
    [cfg.postgrestPort, 'PostgREST', 'POSTGREST_PORT'],
    [cfg.postgrestAdminPort, 'PostgREST admin', 'POSTGREST_ADMIN_PORT'],
  ];
  if (!cfg.databaseUrl) ports.push([cfg.postgresPort, 'embedded Postgres', 'POSTGRES_PORT']);
  for (const [port, what, variable] of ports) await assertPortFree(cfg.bindHost, port, what, variable);

  const started: { stop(): Promise<void> }[] = [];
  const stopAll = async () => {
    for (const part of started.reverse()) await part.stop().catch((error: Error) => log(`stop: ${error.message}`));
    started.length = 0;
  };
  try {
    const db = await openDatabase(cfg, log);
    started.push(db);
    if (seedDemo && (await seedDemoIfEmpty(db.adminUrl))) log('The database was empty: loaded the demo dataset (data_source "demo").');
    const stack: Stack = {
      cfg,
      db,
      postgrest: await startPostgrest(cfg, db.urlFor('authenticator'), log),
      edge: undefined as unknown as Child,
      nginx: undefined as unknown as Child,
      stopPostgrest: () => stack.postgrest.stop(),
      startPostgrest: async () => { stack.postgrest = await startPostgrest(cfg, db.urlFor('authenticator'), log); },
      stopEdge: () => stack.edge.stop(),
      startEdge: async () => { stack.edge = await startEdge(cfg, log); },
      stop: stopAll,
    };
    started.push({ stop: () => stack.postgrest.stop() });
    // Before nginx, so the site host never proxies to an edge that is not listening yet.
    stack.edge = await startEdge(cfg, log);
    started.push({ stop: () => stack.edge.stop() });
    stack.nginx = await startNginx(cfg, log);
    started.push(stack.nginx);
    return stack;
  } catch (error) {
    await stopAll();
    throw error;
  }
}
