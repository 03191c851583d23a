// Shared pieces of the NDJSON import tests: a stack of the file's own, the writer's connection to it
// and a scratch folder, events written as NDJSON lines, and a quiet logger for in-process imports.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { StatsTableName } from '../../contract/tables.ts';
import { openWriterDb, type WriterDb } from '../../writer/db.ts';
import { importEvents } from '../../writer/import.ts';
import { createLogger } from '../../writer/log.ts';
import { rowCounts } from './db.ts';
import { startTestStack, type TestStack } from './stack.ts';

export interface ImportStack { stack: TestStack; db: WriterDb; dir: string }

export async function startImportStack(): Promise<ImportStack> {
  const stack = await startTestStack();
  return { stack, db: openWriterDb(stack.db.urlFor('stats_writer')), dir: mkdtempSync(path.join(tmpdir(), 'writer-import-')) };
}

export async function stopImportStack({ stack, db, dir }: Partial<ImportStack>): Promise<void> {
  await db?.destroy();
  await stack?.destroy();
  if (dir) rmSync(dir, { recursive: true, force: true });
}

/** Events as the lines of an NDJSON file. */
export const lines = (...events: object[]) => events.map((e) => JSON.stringify(e)).join('\n') + '\n';

/** Logs of the imports a test runs in its own process: kept out of the test's output, and unread. */
export const log = createLogger({ json: true, write: () => {} });

/** Imports `text` in this process, as `npm run writer import` would, with the default earliest year. */
export const importText = (db: WriterDb, text: string) => importEvents(db, Readable.from([text]), log, 2020);

/** The rows `table` holds now. */
export const countRows = async (stack: TestStack, table: StatsTableName) => (await rowCounts(stack.db.adminUrl, [table]))[table];
