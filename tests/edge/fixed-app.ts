// The edge app on fixed records (tests/support/records.ts) instead of the API host and PostgREST:
// its own createFigures over them, and its own log holder reading the fixed log.
import type { LogRecord } from '../../contract/records.ts';
import { createApp, type AppOptions } from '../../edge/app.ts';
import type { EdgeConfig } from '../../edge/config.ts';
import { createFigures } from '../../edge/figures.ts';
import { LogHolder } from '../../edge/log-holder.ts';
import { createLogReader } from '../../edge/log-views.ts';
import type { Upstream } from '../../edge/upstream.ts';

/** The records an app reads: the API host's three, and the log. */
export type FixedRecords = Upstream & { log(): Promise<LogRecord> };

/** A holder of `log`, whose state in the database never seems to move: it reads the log when first asked, and when an answer names more. */
export const fixedLogHolder = (log: () => Promise<LogRecord>) =>
  new LogHolder({ log: async () => JSON.stringify(await log()), logState: async () => 'unchanged' });

export function appOf(cfg: EdgeConfig, records: FixedRecords, options: Omit<AppOptions, 'figures' | 'logSource'> = {}) {
  const logSource = fixedLogHolder(() => records.log());
  return createApp(cfg, { ...options, figures: createFigures(cfg, records, createLogReader(logSource)), logSource });
}
