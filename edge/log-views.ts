// The log as a serving process sees it: the holder's snapshot (edge/log-holder.ts), each log's
// record checked against the contract and prepared once per version it is held at.
import type { LogRecord } from '../contract/records.ts';
import { LogRecordSchema } from '../contract/records.ts';
import type { LogKind, LogSource } from './log-holder.ts';
import { prepare, type Prepared } from './prepared.ts';
import { UpstreamError } from './upstream.ts';

export interface LogViews {
  inUse: LogKind;
  logs: Partial<Record<LogKind, Prepared<LogRecord>>>;
}

export interface LogReader {
  /** The logs as the holder holds them now. */
  now(): Promise<LogViews>;
  /** The log in use; throws UpstreamError while it cannot be read. */
  inUse(): Promise<Prepared<LogRecord>>;
  ensure: LogSource['ensure'];
  ensureAudit: LogSource['ensureAudit'];
}

export function createLogReader(source: LogSource): LogReader {
  const prepared = new Map<string, Promise<Prepared<LogRecord>>>();
  const parse = (version: string, body: string) => {
    let made = prepared.get(version);
    if (!made) {
      made = (async () => {
        const checked = LogRecordSchema.safeParse(JSON.parse(body));
        if (!checked.success) throw new UpstreamError(`landing_log returned an unexpected shape: ${checked.error.message}`);
        return prepare(checked.data);
      })();
      made.catch(() => prepared.delete(version));
      prepared.set(version, made);
    }
    return made;
  };
  const now = async (): Promise<LogViews> => {
    const snapshot = await source.snapshot().catch((error: Error) => { throw new UpstreamError(`the log cannot be read: ${error.message}`); });
    const logs: LogViews['logs'] = {};
    for (const [kind, held] of Object.entries(snapshot.logs) as [LogKind, NonNullable<(typeof snapshot.logs)[LogKind]>][]) logs[kind] = await parse(held.version, held.body);
    // Only the versions held now are kept (at most one real and one demo).
    const held = new Set(Object.values(snapshot.logs).map((l) => l.version));
    for (const version of prepared.keys()) if (!held.has(version)) prepared.delete(version);
    return { inUse: snapshot.inUse, logs };
  };
  return {
    now,
    async inUse() {
      const views = await now();
      const log = views.logs[views.inUse];
      if (!log) throw new UpstreamError('the log in use was never read');
      return log;
    },
    ensure: (origin, size, asked) => source.ensure(origin, size, asked),
    ensureAudit: (publishedAt) => source.ensureAudit(publishedAt),
  };
}
