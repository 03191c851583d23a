// stack/: the machinery that runs the service: Postgres and pg_auto_failover, PostgREST, the edge,
// nginx, TLS, processes, keys, backups and the systemd unit, with the writer inside `npm start`. It
// imports contract/, config/, db-client/, writer/.
//
// `npm start`: the whole service on this machine, in the foreground. Ctrl-C or SIGTERM stops every child.
// With NODE_DATABASE_URL, only a node of it (PostgREST, edge, nginx) over a database that runs elsewhere.
import path from 'node:path';
import { envFilePath, loadEnv, ROOT_DIR } from '../config/checkout.ts';
import { configFromEnv, type Config } from '../config/config.ts';
import type { Env } from '../config/settings.ts';
import { ensureEnvFile, signingPublicKey } from './secrets.ts';
import { isReplica } from './replica.ts';
import type { CertificateKeeper } from './tls-serving.ts';
import { startNode, startStack } from './stack.ts';
import { writerConfigFromEnv } from '../config/writer.ts';
import { createLogger } from '../writer/log.ts';
import { startWriter } from '../writer/writer.ts';
import { noteVerifierKey } from '../contract/log-key.ts';
import { logOrigin, unfixedLogOriginNotice } from '../contract/paths.ts';

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
  // A node of a service that runs elsewhere takes that service's keys: none are generated for it.
  const given = loadEnv(envFile);
  if (given.NODE_DATABASE_URL) return startNodeOnly(given);
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
  // The signer keeps its record of the last checkpoint it signed beside the data, unless LOG_SIGNER_STATE says where,
  // and signs under the log's origin as the stack read it from the database.
  const logSettings = writerCfg.log && {
    ...writerCfg.log,
    origins: { siteUrl: stack.cfg.siteUrl, logOrigin: stack.cfg.logOrigin },
    stateFile: writerCfg.log.stateFile ?? path.join(cfg.dataDir, 'log-signer.json'),
  };
  running.push(startWriter({ ...writerCfg, databaseUrl: stack.db.urlFor('stats_writer'), log: logSettings },
    createLogger({ json: false, minLevel: writerCfg.logLevel, write: (line) => log(`[writer] ${line}`) })));

  log(`
Public Stats Service is running (Ctrl-C stops it).
${addresses(cfg)}${httpsLines(cfg, stack.tls)}
  database   ${databaseLine(cfg)}
  writer     source ${writerCfg.source}${writerCfg.source === 'demo' ? ' (demo figures; set the Polymarket variables of .env.example for real ones)' : ''}${writerCfg.source === 'none' ? '' : `
             named ${writerCfg.name}; it waits as a standby while another writer holds the writer lock`}
${await logLines(stack.cfg, stack.storedLogOrigin, writerCfg.log?.policyFile)}

  curl ${cfg.siteUrl}/api/stats
  curl -H "apikey: ${cfg.ANON_KEY}" ${cfg.apiUrl}/rest/v1/rpc/landing_stats
`);
}

/** The log's origin and key, whether its first checkpoint fixed that origin (and if not, what the owner should know), and its witnessing: for the start-up banner. */
async function logLines(cfg: Config, stored: string | null, policyFile: string | undefined): Promise<string> {
  const origin = logOrigin(cfg, false);
  const notice = unfixedLogOriginNotice(cfg);
  return `  log        origin ${origin}${stored ? ', fixed by its first checkpoint' : ` (demo figures: ${logOrigin(cfg, true)})`}, verifier key
             ${await noteVerifierKey(origin, Buffer.from(cfg.LOG_PUBLIC_KEY, 'base64url'))}
             ${policyFile ? `witnessed under the policy ${policyFile}` : 'not witnessed: set LOG_POLICY to a tlog-policy file naming witnesses (docs/witness.md)'}${notice ? `
             ${wrap(notice, 85).join('\n             ')}` : ''}`;
}

/** Words in lines of at most `width` characters, for the banner. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const word of text.split(' ')) {
    const last = lines.at(-1);
    if (last !== undefined && last.length + 1 + word.length <= width) lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  return lines;
}

/** Which database the stack runs on, as `npm start` says it. */
function databaseLine(cfg: Config): string {
  if (cfg.databaseUrl) return 'DATABASE_URL';
  if (!cfg.postgresHa) return `embedded Postgres, data in ${path.join(cfg.dataDir, 'postgres')}`;
  const ports = cfg.postgresHa.nodePorts;
  return `pg_auto_failover: monitor on ${cfg.postgresHa.monitorPort}, nodes on ${ports.slice(0, -1).join(', ')} and ${ports.at(-1)}`
    + ` (synchronous replication, automatic failover), data in ${path.join(cfg.dataDir, 'ha')}`;
}

/**
 * Keys every node of one service shares: a node with keys of its own would sign what the others' key
 * directory does not list, or publish another log key than the one that signs the log.
 */
const SHARED_KEYS = ['JWT_SECRET', 'ANON_KEY', 'HTTP_SIG_PRIVATE_KEY', 'LOG_PUBLIC_KEY'] as const;

async function startNodeOnly(env: Env) {
  const missing = [...SHARED_KEYS, 'SITE_URL', 'API_URL'].filter((name) => !env[name]);
  if (missing.length) {
    throw new Error(`NODE_DATABASE_URL runs one more node of a service that exists already, with its keys and public URLs, and ${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} not set: copy the first machine's .env here, then start again.`);
  }
  // The public half is derived, as `npm run keys` does, so it never disagrees with the private key.
  const cfg = configFromEnv({ ...env, HTTP_SIG_PUBLIC_KEY: signingPublicKey(env.HTTP_SIG_PRIVATE_KEY!) }, SHARED_KEYS);
  const url = cfg.nodeDatabaseUrl!;
  const replica = await isReplica(url).catch((error: Error) => {
    throw new Error(`NODE_DATABASE_URL could not be reached (${error.message}): check the host, the port and the authenticator's password.`);
  });
  const node = await startNode(cfg, url, { log, replica, onGiveUp: (reason) => void shutdown(`${reason}; giving up`, 1) });
  running.push(node);
  if (stopping) return;
  log(`
Public Stats Service node is running (Ctrl-C stops it): PostgREST, the edge and nginx over ${replica ? 'a read replica' : 'the primary'}; the database and the writer run elsewhere.
${addresses(cfg)}${httpsLines(cfg, node.tls)}
  database   NODE_DATABASE_URL (${replica ? 'a read replica: PostgREST\'s notification channel is off' : 'the primary'})
`);
}

/** With HTTPS: the certificate served (or that it is being obtained) and the listeners, for the start-up banner. */
function httpsLines(cfg: Config, tls: CertificateKeeper | undefined): string {
  if (!cfg.tls || !tls) return '';
  const served = tls.status.certificate;
  const source = cfg.tls.ownCertificate
    ? `your own certificate (TLS_CERT_FILE ${cfg.tls.ownCertificate.certFile}), reloaded when it changes`
    : `from ${cfg.tls.acmeDirectoryUrl}, renewed by itself (\`npm run tls -- renew --force\` renews now)`;
  return `
  https      ${served ? `certificate for ${served.names.join(' and ')}, expires ${served.notAfter.toISOString()}` : 'certificate being obtained: until it is, plain HTTP answers the ACME challenges and redirects'}
             ${source}; nginx on port ${cfg.tls.httpsPort} (HTTPS, HTTP/2) and ${cfg.tls.httpPort} (challenges, redirect) on every address`;
}

/** Where the two hosts answer, for the start-up banner. */
function addresses(cfg: Config): string {
  return `  site       ${cfg.siteUrl}/   (landing page; Markdown with Accept: text/markdown)
             ${cfg.siteUrl}/api/stats   ${cfg.siteUrl}/api/health   (no key)
             ${cfg.siteUrl}/api/history (also .csv)   ${cfg.siteUrl}/feed.xml   ${cfg.siteUrl}/badge.svg
             ${cfg.siteUrl}/mcp (MCP, POST, alpha)   ${cfg.siteUrl}/a2a (A2A message/send, alpha)
  API host   ${cfg.apiUrl}/rest/v1/rpc/landing_stats   (GET or POST {})
             ${cfg.apiUrl}/rest/v1/rpc/landing_history   ${cfg.apiUrl}/rest/v1/rpc/landing_health
  anon key   ${cfg.ANON_KEY}`;
}

startup = main();
startup.catch((error: Error) => {
  console.error(`Start-up failed: ${error.message}`);
  // A failed start-up has stopped what it started; a stop already under way exits by itself.
  if (stopping) return;
  if (running.length) void shutdown('start-up failed', 1);
  else process.exit(1);
});
