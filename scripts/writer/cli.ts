// `npm run writer -- <command>`: the writer job's command line. See `--help`.
import { loadEnv } from '../lib/config.ts';
import { backfill } from './backfill.ts';
import { CHECK_NIGHTS, formatCheck, runCheck } from './check.ts';
import { writerConfigFromEnv, type WriterConfig } from './config.ts';
import { heartbeat, runCycle } from './cycle.ts';
import { openWriterDb } from './db.ts';
import { isCalendarDate } from '../../contract/dates.ts';
import { EVENT_TYPES, eventFormat, MAX_USD, type EventType } from './events.ts';
import { importEvents, openInput } from './import.ts';
import { LockLost, tryWriterLock, WriterSession } from './lock.ts';
import { createLogger, type Logger } from './log.ts';
import { PolymarketSource } from './polymarket/source.ts';
import { formatStatus, readStatus } from './status.ts';
import { RealDataPresent } from './store.ts';
import { makeSource, startWriter } from './writer.ts';

/** What the help says after an event's format, one line each. */
const EVENT_NOTES: Partial<Record<EventType, string[]>> = {
  trading_cost: ['(signed: a gain is a negative cost; dated like', " the payout: a day's cost carries the next date)"],
};

/** The import format, one event type a line, made from the parser's own table. */
const EVENT_LINES = EVENT_TYPES.map((type) => {
  const format = `  ${eventFormat(type)}`;
  const [first, ...more] = EVENT_NOTES[type] ?? [];
  if (first === undefined) return format;
  return [`${format}     ${first}`, ...more.map((line) => `${' '.repeat(format.length + 5)}${line}`)].join('\n');
}).join('\n');

const HELP: Record<string, string> = {
  '': `Usage: npm run writer -- <command> [options]

Commands:
  run                         the long-running loop (heartbeat every minute, figures every WRITER_INTERVAL_MINUTES);
                              a standby while another writer holds the writer lock
  once                        one cycle; exit code 0 when every figure was written, 1 otherwise
  import <file|->             NDJSON events from a file or stdin, in one transaction
  backfill --since YYYY-MM-DD settled nights from a date, one request per night (polymarket source)
  status                      what the database holds and when each kind was last written
  check                       read-only dry run against the Polymarket account: what would be published

The source is WRITER_SOURCE (demo | polymarket | none); without it, polymarket when CLOB_API_KEY is set,
else demo. One writer writes at a time: run, once and backfill take the writer lock (a Postgres advisory
lock) first. Run \`npm run writer -- <command> --help\` for details.`,
  run: `Usage: npm run writer -- run

Runs until Ctrl-C / SIGTERM. It first takes the writer lock; while another writer holds it, this one
waits as a standby (saying so at once, then every WRITER_STANDBY_LOG_SECONDS) and takes over within
seconds of the other's end. Holding it: a heartbeat every WRITER_HEARTBEAT_SECONDS (default 60), named
WRITER_NAME (or a random name drawn at start); accrual, breadth and capital every
WRITER_INTERVAL_MINUTES (default 5); the last two settled nights and the last settled day's trading
cost on every cycle. A failing source call is logged and retried next cycle; it never stops the loop.
A writer whose lock's connection ends writes nothing more and waits as a standby again.
With the demo source it first loads the demo history into an empty database, and it stops (saying so)
once the database holds real data.`,
  once: `Usage: npm run writer -- once

One heartbeat and one cycle, then exit: 0 when every figure was written, 1 when any failed. While
another writer holds the writer lock it writes nothing and exits 1, naming that writer.`,
  import: `Usage: npm run writer -- import <file|->

Reads one JSON event per line (blank lines are skipped):
${EVENT_LINES}
Dates and timestamps lie between 1 January of IMPORT_EARLIEST_YEAR (default 2020) and now; amounts
within ±${MAX_USD.toExponential()} USD; numbers with no more digits than a double keeps exactly (about 15 significant).
The whole input is one transaction: one bad line writes nothing and the error names the line and why.
It does not take the writer lock, so it works beside a running writer: like each of the writer's own
transactions, it locks the settings row first, so the two take turns.
Re-importing the same data changes nothing; a changed payout is a correction (the old value is audited).
The first import removes the demo data.`,
  backfill: `Usage: npm run writer -- backfill --since YYYY-MM-DD

Fetches every settled night from that payout date to today from Polymarket, one request per night.
Nights already recorded are skipped (so it resumes after an interruption), except the last two,
which are asked again because Polymarket may revise them. Needs the polymarket source. While another
writer holds the writer lock it writes nothing and exits 1, naming that writer: stop the running writer
(and its standby) first.`,
  check: `Usage: npm run writer -- check

Reads the configured Polymarket account and prints what the writer would publish, writing nothing:
the last ${CHECK_NIGHTS} nightly payouts beside the REWARD credits of each night, today's accrual and
its markets, the markets quoted in 24 h, capital, and yesterday's cash flows by kind. It flags what
looks implausible: no paid earnings for nights on end, zero cash with positions held, a night whose
earnings and REWARD credits differ, activity of unknown types. Figures only: no address or id.
Exit code 0 when nothing is flagged, 1 otherwise. Run it before the first real write.`,
  status: `Usage: npm run writer -- status

Prints the data source, the writer holding the writer lock (null when none), row counts (and demo rows),
the latest date or observation of each kind, when it was last written, and the number of payout corrections.`,
};

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
  try {
    // The same file `npm start` reads (ENV_FILE, else .env), so both reach the same database.
    cfg = writerConfigFromEnv(env);
    log = createLogger({ minLevel: cfg.logLevel });
  } catch (error) {
    log.error((error as Error).message);
    return 1;
  }
  switch (command) {
    case 'run': return run(cfg, log);
    case 'once': return once(cfg, log);
    case 'import': return importCommand(cfg, log, rest[0]!);
    case 'backfill': return backfillCommand(cfg, log, since!);
    case 'check': return checkCommand(cfg, log);
    default: return statusCommand(cfg);
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
  const result = await tryWriterLock(cfg.databaseUrl, cfg.name);
  if (result instanceof WriterSession) return result;
  log.error(`another writer (${result.heldBy ?? 'unnamed'}) holds the writer lock: ${command} writes nothing while it runs; ${advice}`);
  return undefined;
}

async function once(cfg: WriterConfig, log: Logger): Promise<number> {
  const source = makeSource(cfg, log);
  if (!source) {
    log.info('WRITER_SOURCE=none: nothing to fetch; data comes only from imports.');
    return 0;
  }
  const session = await holdLockOnce(cfg, log, 'once', 'it does this work already.');
  if (!session) return 1;
  try {
    const ctx = { db: session.db, source, log, writer: cfg.name };
    const results = [await heartbeat(ctx), ...(await runCycle(ctx))];
    return results.every((r) => r.ok) ? 0 : 1;
  } catch (error) {
    if (error instanceof RealDataPresent || error instanceof LockLost) {
      log.warn(error.message);
      return 1;
    }
    throw error;
  } finally {
    await session.release();
  }
}

async function importCommand(cfg: WriterConfig, log: Logger, file: string): Promise<number> {
  let input;
  try {
    input = openInput(file);
  } catch (error) {
    log.error(`import: ${(error as Error).message}`);
    return 1;
  }
  const db = openWriterDb(cfg.databaseUrl);
  try {
    await importEvents(db, input, log, cfg.importEarliestYear);
    return 0;
  } catch (error) {
    log.error(`import failed, nothing was written: ${(error as Error).message}`);
    return 1;
  } finally {
    await db.destroy();
  }
}

async function backfillCommand(cfg: WriterConfig, log: Logger, since: string): Promise<number> {
  const source = makeSource(cfg, log);
  if (source?.name !== 'polymarket') {
    log.error('backfill reads Polymarket: set its credentials (and WRITER_SOURCE=polymarket), see .env.example.');
    return 1;
  }
  const session = await holdLockOnce(cfg, log, 'backfill', 'stop it (and its standby) first, then backfill, then start them again.');
  if (!session) return 1;
  try {
    const result = await backfill(session.db, source, since, log);
    log.info('backfill done', { ...result, failed: result.failed.length });
    return result.failed.length === 0 ? 0 : 1;
  } catch (error) {
    if (!(error instanceof LockLost)) throw error;
    log.error(`backfill stopped: ${error.message}; run it again to resume.`);
    return 1;
  } finally {
    await session.release();
  }
}

async function checkCommand(cfg: WriterConfig, log: Logger): Promise<number> {
  const source = makeSource(cfg, log);
  if (!(source instanceof PolymarketSource)) {
    log.error('check reads Polymarket: set its credentials (and WRITER_SOURCE=polymarket), see .env.example.');
    return 1;
  }
  const report = await runCheck(source, new Date(), log);
  process.stdout.write(process.stdout.isTTY ? `${formatCheck(report)}\n` : `${JSON.stringify(report)}\n`);
  return report.flags.length === 0 ? 0 : 1;
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
