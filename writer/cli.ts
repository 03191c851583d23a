// writer/: the writer, which holds the account's secrets: it fetches the figures, stores them,
// signs the log and asks the witnesses. It imports contract/, config/, db-client/.
//
// `npm run writer -- <command>`: the writer job's command line. See `--help`.
import { isCalendarDate } from '../contract/dates.ts';
import { loadEnv } from '../config/checkout.ts';
import { logOrigins, writerConfigFromEnv, type LogSettings, type WriterConfig } from '../config/writer.ts';
import { SilentServer } from '../db-client/pg-connect.ts';
import { backfill } from './backfill.ts';
import { formatCheck, logOriginFinding, runCheck } from './check.ts';
import { heartbeat, runCycle } from './cycle.ts';
import { openWriterDb } from './db.ts';
import { readStoredOrigin } from './log-signer.ts';
import { seedDemoIfEmpty } from './demo.ts';
import { HELP } from './help.ts';
import { importEvents, openInput } from './import.ts';
import { LockLost, RENEW_EVERY_MS, STANDBY_ADVICE } from './lock.ts';
import { tryWriterLock } from './lock-acquire.ts';
import { WriterSession } from './lock-session.ts';
import { createLogger, type Logger } from './log.ts';
import { PolymarketSource } from './polymarket/source.ts';
import { EXIT_ONE_NODE, ONE_NODE, WrittenOnOneNode } from './replication.ts';
import { formatStatus, readStatus } from './status.ts';
import { RealDataPresent } from './store.ts';
import { logDuties, makeSource, prepareLog, startWriter, type LogDuties } from './writer.ts';

function usageError(message: string, command = ''): never {
  process.stderr.write(`${message}\n\n${HELP[command] ?? HELP['']}\n`);
  process.exit(2);
}

async function main(argv: string[]): Promise<number> {
  const [command = '', ...rest] = argv;
  if (command === '' || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${HELP['']}\n`);
    return command === '' ? 2 : 0;
  }
  if (!(command in HELP)) usageError(`Unknown command "${command}".`);
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`${HELP[command]}\n`);
    return 0;
  }
  // Arguments first, so a usage error is reported as one whatever the configuration holds.
  if (command === 'import' && rest.length !== 1) usageError('import takes exactly one argument: a file, or - for stdin.', 'import');
  const sinceAt = rest.indexOf('--since');
  const since = sinceAt >= 0 ? rest[sinceAt + 1] : undefined;
  if (command === 'backfill' && (!since || !isCalendarDate(since))) {
    usageError('backfill needs --since YYYY-MM-DD.', 'backfill');
  }
  const env = loadEnv();
  let log = createLogger();
  let cfg: WriterConfig;
  let origins: LogSettings['origins'];
  try {
    // The same file `npm start` reads (ENV_FILE, else .env), so both reach the same database.
    cfg = writerConfigFromEnv(env);
    origins = logOrigins(env);
    log = createLogger({ minLevel: cfg.logLevel });
  } catch (error) {
    log.error((error as Error).message);
    return 1;
  }
  if (command === 'check') return checkCommand(cfg, origins, log);
  if (command === 'status') return statusCommand(cfg);
  if (command === 'run') return run(cfg, log);
  // Every other command writes: each of its writes signs the log's new tree.
  let duties: LogDuties | undefined;
  try {
    duties = await prepareLog(cfg, log);
  } catch (error) {
    log.error((error as Error).message);
    return 1;
  }
  switch (command) {
    case 'once': return once(cfg, log, duties);
    case 'import': return importCommand(cfg, log, rest[0]!, duties);
    case 'backfill': return backfillCommand(cfg, log, since!, duties);
    case 'sign': return signCommand(cfg, log, duties);
    default: return seedDemoCommand(cfg, duties);
  }
}

async function run(cfg: WriterConfig, log: Logger): Promise<number> {
  const writer = startWriter(cfg, log);
  const stop = (signal: string) => {
    log.info(`${signal}: stopping after the current step`);
    void writer.stop();
    // A request stuck in its timeout must not keep the process alive for long.
    setTimeout(() => process.exit(0), 10_000).unref();
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
  await writer.done;
  return 0;
}

/**
 * The writer lock for a one-shot command, or undefined (having said why) when another writer holds it:
 * a second writer beside a running one would poll the source twice.
 */
async function holdLockOnce(cfg: WriterConfig, log: Logger, command: string, advice: string): Promise<WriterSession | undefined> {
  let result;
  try {
    result = await tryWriterLock(cfg.databaseUrl, cfg.name);
  } catch (error) {
    log.error(`cannot reach the database: ${command} writes nothing (${(error as Error).message})`);
    return undefined;
  }
  if (result instanceof WriterSession) return result;
  if ('standby' in result) log.error(`${command}: ${STANDBY_ADVICE}.`);
  else log.error(`another writer (${result.heldBy ?? 'unnamed'}) holds the writer lock: ${command} writes nothing while it runs; ${advice}`);
  return undefined;
}

async function once(cfg: WriterConfig, log: Logger, duties: LogDuties | undefined): Promise<number> {
  const source = makeSource(cfg, log);
  if (!source) {
    log.info('WRITER_SOURCE=none: nothing to fetch; data comes only from imports.');
    return 0;
  }
  const session = await holdLockOnce(cfg, log, 'once', 'it does this work already.');
  if (!session) return 1;
  // A one-shot command renews the lease on a plain timer: a stopped process renews nothing anyway.
  const stopRenewing = session.renewEvery(RENEW_EVERY_MS);
  try {
    const ctx = { db: session.db, source, log, writer: cfg.name };
    const results = [await heartbeat(ctx), ...(await runCycle(ctx))];
    await logDuties(session.db, duties);
    if (results.every((r) => r.ok)) return 0;
    return results.every((r) => r.ok || r.error === ONE_NODE) ? EXIT_ONE_NODE : 1;
  } catch (error) {
    if (error instanceof RealDataPresent || error instanceof LockLost) {
      log.warn(error.message);
      return 1;
    }
    throw error;
  } finally {
    stopRenewing();
    await session.release();
  }
}

async function importCommand(cfg: WriterConfig, log: Logger, file: string, duties: LogDuties | undefined): Promise<number> {
  let input;
  try {
    input = openInput(file);
  } catch (error) {
    log.error(`import: ${(error as Error).message}`);
    return 1;
  }
  const db = openWriterDb(cfg.databaseUrl);
  let written = false;
  try {
    await importEvents(db, input, log, cfg.importEarliestYear);
    written = true;
    if (!(await logDuties(db, duties))) log.warn(`the import is held on two nodes, but the log's latest commit is ${ONE_NODE}: its entries are signed once a standby holds it`);
    return 0;
  } catch (error) {
    if (error instanceof WrittenOnOneNode) {
      log.error(`the import was ${ONE_NODE}: it is stored, but neither signed nor acknowledged until a standby holds it, and lost should this node be lost first. ` +
        'Health and `npm run writer -- status` say when a standby streams again; importing the same input again is safe (it changes nothing twice).');
      return EXIT_ONE_NODE;
    }
    // The server went silent, perhaps while it committed: only it knows whether the import landed.
    if (error instanceof SilentServer && !written) log.error(`import stopped: ${error.message}. Whether it was written is unknown: \`npm run writer -- status\` tells, and importing the same input again is safe (it changes nothing twice).`);
    // The import committed; what failed is the log's work after it, which the next write or `sign` does again.
    else if (written) log.error(`the import was written, but the log's work after it failed: ${(error as Error).message}. \`npm run writer -- status\` tells what the log holds, and \`npm run writer -- sign\` signs what is not yet signed.`);
    else log.error(`import failed, nothing was written: ${(error as Error).message}`);
    return 1;
  } finally {
    await db.destroy();
  }
}

async function backfillCommand(cfg: WriterConfig, log: Logger, since: string, duties: LogDuties | undefined): Promise<number> {
  const source = makeSource(cfg, log);
  if (source?.name !== 'polymarket') {
    log.error('backfill reads Polymarket: set its credentials (and WRITER_SOURCE=polymarket), see .env.example.');
    return 1;
  }
  const session = await holdLockOnce(cfg, log, 'backfill', 'stop it (and its standby) first, then backfill, then start them again.');
  if (!session) return 1;
  const stopRenewing = session.renewEvery(RENEW_EVERY_MS);
  try {
    const result = await backfill(session.db, source, since, log);
    log.info('backfill done', { ...result, failed: result.failed.length });
    await logDuties(session.db, duties);
    return result.failed.length === 0 ? 0 : 1;
  } catch (error) {
    if (!(error instanceof LockLost)) throw error;
    log.error(`backfill stopped: ${error.message}; run it again to resume.`);
    return 1;
  } finally {
    stopRenewing();
    await session.release();
  }
}

async function checkCommand(cfg: WriterConfig, origins: LogSettings['origins'], log: Logger): Promise<number> {
  const source = makeSource(cfg, log);
  if (!(source instanceof PolymarketSource)) {
    log.error('check reads Polymarket: set its credentials (and WRITER_SOURCE=polymarket), see .env.example.');
    return 1;
  }
  const report = await runCheck(source, new Date(), log);
  const finding = await logOriginFinding(origins, async () => {
    const db = openWriterDb(cfg.databaseUrl);
    try {
      return await readStoredOrigin(db);
    } finally {
      await db.destroy();
    }
  });
  if (finding && 'flag' in finding) report.flags.push(finding.flag);
  if (finding && 'note' in finding) report.notes.push(finding.note);
  process.stdout.write(process.stdout.isTTY ? `${formatCheck(report)}\n` : `${JSON.stringify(report)}\n`);
  return report.flags.length === 0 ? 0 : 1;
}

async function seedDemoCommand(cfg: WriterConfig, duties: LogDuties | undefined): Promise<number> {
  const loaded = await seedDemoIfEmpty(cfg.databaseUrl);
  const db = openWriterDb(cfg.databaseUrl);
  try {
    await logDuties(db, duties);
  } finally {
    await db.destroy();
  }
  process.stdout.write(loaded ? 'The database was empty: loaded the demo dataset (data_source "demo").\n' : 'The database holds data: no demo dataset loaded.\n');
  return 0;
}

async function signCommand(cfg: WriterConfig, log: Logger, duties: LogDuties | undefined): Promise<number> {
  if (!duties) {
    log.error('sign needs the log\'s key: set LOG_SIGNING_KEY (`npm run keys` makes one).');
    return 1;
  }
  const db = openWriterDb(cfg.databaseUrl);
  try {
    if (!(await logDuties(db, duties))) {
      log.warn(`the transparency log's new entries are ${ONE_NODE}: nothing is signed until a standby holds them`);
      return EXIT_ONE_NODE;
    }
    const halted = await db.selectFrom('stats.log_halt').select('reason').orderBy('at', 'desc').limit(1).executeTakeFirst();
    if (halted) {
      log.error(`the transparency log is halted: ${halted.reason}`);
      return 1;
    }
    const latest = await db.selectFrom('stats.log_checkpoint').select(['size', 'is_demo']).orderBy('size', 'desc').limit(1).executeTakeFirst();
    log.info('the transparency log is signed', { size: Number(latest?.size ?? 0), demo: latest?.is_demo ?? null, ...(await duties.signer.identity(latest?.is_demo ?? false)) });
    return 0;
  } finally {
    await db.destroy();
  }
}

async function statusCommand(cfg: WriterConfig): Promise<number> {
  const db = openWriterDb(cfg.databaseUrl);
  try {
    const status = await readStatus(db);
    process.stdout.write(process.stdout.isTTY ? `${formatStatus(status)}\n` : `${JSON.stringify(status)}\n`);
    return 0;
  } finally {
    await db.destroy();
  }
}

// Whatever escapes (an error event nobody listened to) still ends as one line, never a stack trace.
process.on('uncaughtException', (error) => {
  createLogger().error(`writer failed: ${error.message}`);
  process.exit(1);
});

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (error: Error) => {
    createLogger().error(`writer failed: ${error.message}`);
    process.exitCode = 1;
  },
);
