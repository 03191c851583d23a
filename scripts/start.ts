// `npm start`: the whole service on this machine, in the foreground. Ctrl-C or SIGTERM stops every child.
import path from 'node:path';
import { configFromEnv, envFilePath, loadEnv, ROOT_DIR } from './lib/config.ts';
import { startStack } from './stack/stack.ts';
import { ensureEnvFile } from './keys.ts';
import { writerConfigFromEnv } from './writer/config.ts';
import { createLogger } from './writer/log.ts';
import { startWriter } from './writer/writer.ts';

const log = (line: string) => console.log(line);

type Running = { stop(): Promise<void> };
/** What is running so far, stopped in reverse order: the writer before the stack. */
const running: Running[] = [];
let stopping: Promise<never> | undefined;
/** The start-up; a stop waits for it, so whatever it started is stopped too. */
let startup: Promise<void> | undefined;

/**
 * Stops everything that runs and exits: 0 when asked to stop, 1 when the stack could not start or
 * keep running. Called again while stopping, it waits for the first call.
 */
function shutdown(why: string, code: number): Promise<never> {
  stopping ??= (async () => {
    log(`\n${why}: stopping …`);
    await startup?.catch(() => {});
    for (const part of running.reverse()) await part.stop().catch((error: Error) => log(`stop: ${error.message}`));
    log('Stopped.');
    process.exit(code);
  })();
  return stopping;
}

// Installed first, so a Ctrl-C during start-up also stops whatever has started by then.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void shutdown(signal, 0));
// npm exits on SIGTERM without passing it on; a start that lost its parent stops too.
const parent = process.ppid;
setInterval(() => { if (process.ppid !== parent) void shutdown('parent exited', 0); }, 1000).unref();
// A fault of this process itself is reported in one line, and still stops the children.
// Output to a terminal or parent that has gone away fails (EPIPE); that is no fault of the service,
// and reporting it would write to the same closed pipe again: such errors are dropped.
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});
let faulted = false;
for (const event of ['uncaughtException', 'unhandledRejection'] as const) {
  process.on(event, (error: unknown) => {
    if (faulted) return;
    faulted = true;
    console.error(`Internal error (${error instanceof Error ? error.message : String(error)}): the service is stopping; start it again, and report this line if it repeats.`);
    void shutdown('internal error', 1);
  });
}

async function main() {
  // ENV_FILE lets a test (or a second local instance) keep its secrets apart from the checkout's .env.
  const envFile = envFilePath();
  const generated = await ensureEnvFile(envFile);
  if (generated.length) log(`Generated ${generated.join(', ')} into ${path.relative(ROOT_DIR, envFile) || envFile} (kept across restarts; never commit it).`);
  const env = loadEnv(envFile);
  const cfg = configFromEnv(env);
  // Read before anything starts, so a Polymarket setup with a missing variable fails with its name.
  const writerCfg = writerConfigFromEnv(env);
  const stack = await startStack(cfg, {
    log,
    seedDemo: writerCfg.source === 'demo',
    // A part that keeps failing: the stack ends with a non-zero exit, for an outer supervisor to act on.
    onGiveUp: (reason) => void shutdown(`${reason}; giving up`, 1),
  });
  running.push(stack);
  if (stopping) return;
  // The writer runs in this process: it stops with the stack and leaves no process behind.
  running.push(startWriter({ ...writerCfg, databaseUrl: stack.db.urlFor('stats_writer') },
    createLogger({ json: false, minLevel: writerCfg.logLevel, write: (line) => log(`[writer] ${line}`) })));

  log(`
Public Stats Service is running (Ctrl-C stops it).
  site       ${cfg.siteUrl}/   (landing page; Markdown with Accept: text/markdown)
             ${cfg.siteUrl}/api/stats   ${cfg.siteUrl}/api/health   (no key)
             ${cfg.siteUrl}/api/history (also .csv)   ${cfg.siteUrl}/feed.xml   ${cfg.siteUrl}/badge.svg
             ${cfg.siteUrl}/mcp (MCP, POST, alpha)   ${cfg.siteUrl}/a2a (A2A message/send, alpha)
  API host   ${cfg.apiUrl}/rest/v1/rpc/landing_stats   (GET or POST {})
             ${cfg.apiUrl}/rest/v1/rpc/landing_history   ${cfg.apiUrl}/rest/v1/rpc/landing_health
  anon key   ${cfg.ANON_KEY}
  database   ${cfg.databaseUrl ? 'DATABASE_URL' : `embedded Postgres, data in ${path.join(cfg.dataDir, 'postgres')}`}
  writer     source ${writerCfg.source}${writerCfg.source === 'demo' ? ' (demo figures; set the Polymarket variables of .env.example for real ones)' : ''}${writerCfg.source === 'none' ? '' : `
             named ${writerCfg.name}; it waits as a standby while another writer holds the writer lock`}

  curl ${cfg.siteUrl}/api/stats
  curl -H "apikey: ${cfg.ANON_KEY}" ${cfg.apiUrl}/rest/v1/rpc/landing_stats
`);
}

startup = main();
startup.catch((error: Error) => {
  console.error(`Start-up failed: ${error.message}`);
  // A failed start-up has stopped what it started; a stop already under way exits by itself.
  if (stopping) return;
  if (running.length) void shutdown('start-up failed', 1);
  else process.exit(1);
});
