// `import <file|->`: streams NDJSON events into the database in one transaction. Lines are read
// one at a time (readline) and written in small batches, so memory stays flat for any file size;
// any bad line rolls everything back and names the line. `npm run writer` (package.json) bounds V8's
// young generation at 1 MiB semi-spaces: with the default, the short-lived parsed events fill a young
// generation grown to tens of MiB and the old one grows with what survives between collections, so
// the resident size drifts up by tens of MiB over a large import
// (https://nodejs.org/api/cli.html#--max-semi-space-sizesize-in-mib).
import { closeSync, createReadStream, fstatSync, openSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import pg from 'pg';
import type { WriterDb } from './db.ts';
import { LineError, parseEvent, type EventOf, type EventType, type ImportEvent } from './events.ts';
import type { Logger } from './log.ts';
import * as store from './store.ts';

const BATCH = 1000;
const PROGRESS_EVERY = 10_000;

export interface ImportResult { lines: number; events: number; byType: Record<string, number> }

/** Thrown inside the transaction so that an input without events changes nothing (not even demo rows). */
class NothingToImport extends Error {}

/** Where each event type is written: a type added to the format without its write fails to compile. */
const WRITES: { [K in EventType]: (trx: store.Trx, rows: EventOf<K>[]) => Promise<void> } = {
  payout: store.upsertPayouts,
  accrual: store.upsertAccruals,
  breadth: store.upsertBreadth,
  capital: store.upsertCapital,
  trading_cost: store.upsertTradingCosts,
  heartbeat: store.upsertHeartbeats,
};

/** Pending rows per table, keyed so that a second event for the same key flushes the first. */
class Batches {
  readonly rows = new Map<EventType, Map<string, { event: ImportEvent; line: number }>>();
  size = 0;
  keyOf(e: ImportEvent): string {
    return 'date' in e ? e.date : e.at.toISOString();
  }
  has(e: ImportEvent) {
    return this.rows.get(e.type)?.has(this.keyOf(e)) ?? false;
  }
  add(e: ImportEvent, line: number) {
    let table = this.rows.get(e.type);
    if (!table) this.rows.set(e.type, (table = new Map()));
    table.set(this.keyOf(e), { event: e, line });
    this.size++;
  }
}

async function flush(trx: store.Trx, batches: Batches): Promise<void> {
  for (const [kind, table] of batches.rows) {
    const entries = [...table.values()];
    const events = entries.map((x) => x.event);
    try {
      // Every event of a batch has the batch's type (Batches keys them by it).
      await (WRITES[kind] as (trx: store.Trx, rows: ImportEvent[]) => Promise<void>)(trx, events);
    } catch (error) {
      // A lost connection is no line's fault.
      if (!(error instanceof pg.DatabaseError)) throw error;
      // Parsing already checks what the constraints check; this names the span if the database still objects.
      const lines = entries.map((x) => x.line);
      throw new LineError(Math.min(...lines), `the database rejected a ${kind} event among lines ${Math.min(...lines)}-${Math.max(...lines)}: ${(error as Error).message}`);
    }
  }
  batches.rows.clear();
  batches.size = 0;
}

export async function importEvents(db: WriterDb, input: Readable, log: Logger, earliestYear: number): Promise<ImportResult> {
  const bounds = { now: await store.serverNow(db), earliestYear };
  const started = Date.now();
  const result: ImportResult = { lines: 0, events: 0, byType: {} };
  await store.realWrite(db, 'import', async (trx) => {
    const batches = new Batches();
    const lines = createInterface({ input, crlfDelay: Infinity });
    for await (const text of lines) {
      result.lines++;
      if (text.trim() === '') continue;
      const event = parseEvent(text, result.lines, bounds);
      // A repeated key in one batch would hit "ON CONFLICT cannot affect a row twice"; flushing
      // first also keeps every intermediate value of a corrected payout in the audit table.
      if (batches.has(event)) await flush(trx, batches);
      batches.add(event, result.lines);
      result.events++;
      result.byType[event.type] = (result.byType[event.type] ?? 0) + 1;
      if (batches.size >= BATCH) await flush(trx, batches);
      if (result.lines % PROGRESS_EVERY === 0) {
        log.info('import progress', { lines: result.lines, events: result.events, rss_mb: Math.round(process.memoryUsage().rss / 2 ** 20) });
      }
    }
    await flush(trx, batches);
    if (result.events === 0) throw new NothingToImport();
  }).catch((error: unknown) => {
    if (!(error instanceof NothingToImport)) throw error;
  });
  if (result.events === 0) {
    log.warn('the input held no events; nothing was written', { lines: result.lines });
    return result;
  }
  log.info('import committed', { ...result, seconds: (Date.now() - started) / 1000 });
  return result;
}

/** The input of an import: standard input for '-', else the file, opened now so a bad path is one clear sentence. */
export function openInput(file: string): Readable {
  if (file === '-') return process.stdin;
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'there is no such file' : code === 'EACCES' ? 'permission is denied' : (error as Error).message;
    throw new Error(`cannot read ${file} (${why}): give the path of an NDJSON file, or - to read standard input.`);
  }
  if (fstatSync(fd).isDirectory()) {
    closeSync(fd);
    throw new Error(`${file} is a directory: give the path of an NDJSON file, or - to read standard input.`);
  }
  return createReadStream('', { fd, encoding: 'utf8' });
}
