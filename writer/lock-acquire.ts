// Asking for the writer lock: once for a one-shot command, or again and again as a standby until the
// lock is free, giving up on a connection whose server stays silent.
import pg from 'pg';
import { connectDatabaseAt } from '../db-client/pg-connect.ts';
import { APPLICATION_NAME_PREFIX, HOLDER_SQL, LOCK_TIMEOUTS, STANDBY_ADVICE, WRITER_LOCK_KEY, writerNameOf } from './lock.ts';
import { WriterSession } from './lock-session.ts';
import type { Logger } from './log.ts';

/** How often a standby asks for the lock. Taking over costs at most this much after the lock is free. */
const POLL_MS = 1000;

/**
 * How long one ask for the lock may go unanswered before the connection is given up and made anew.
 * A standby asks on the connection it keeps; when the network to that server drops packets without a
 * word (a partition), the ask would otherwise wait for TCP to give up, many minutes, and the standby
 * would never reach the server promoted meanwhile. A healthy server answers in milliseconds.
 */
export const ATTEMPT_TIMEOUT_MS = 5_000;

/**
 * How long a writer that lost the lock waits before it asks again. Its own connection just failed,
 * so a standby (asking every POLL_MS) takes over first; with no standby, the writer resumes itself.
 */
export const LOST_LOCK_BACKOFF_MS = 5 * POLL_MS;

/**
 * Takes the lock unless the server is in recovery, in one statement: CASE evaluates the volatile
 * lock function only in its branch, so a standby is never asked for the lock at all.
 */
const TAKE_SQL = 'select pg_is_in_recovery() as recovery, case when pg_is_in_recovery() then false else pg_try_advisory_lock($1, $2) end as ok';

const connect = (url: string, name: string): Promise<{ client: pg.Client; server: string }> =>
  connectDatabaseAt(url, { applicationName: `${APPLICATION_NAME_PREFIX}${name}`, timeouts: LOCK_TIMEOUTS });

/** Why the lock was not taken: another writer holds it (named, when it is one of ours), or the server is a standby. */
export type LockRefused = { heldBy: string | null } | { standby: true };

/** Ends a client without waiting for a server that may never answer (node-postgres closes the socket of a client with a query under way). */
const endNow = (client: pg.Client) => Promise.race([client.end().catch(() => {}), new Promise<void>((resolve) => setTimeout(resolve, 1000))]);

/** One attempt on an open client, given ATTEMPT_TIMEOUT_MS: the session when the lock was free, else why not. */
async function attempt(connected: { client: pg.Client; server: string }): Promise<WriterSession | LockRefused> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      void endNow(connected.client);
      reject(new Error(`${connected.server} did not answer within ${ATTEMPT_TIMEOUT_MS / 1000} s`));
    }, ATTEMPT_TIMEOUT_MS);
  });
  try {
    return await Promise.race([ask(connected), late]);
  } finally {
    clearTimeout(timer);
  }
}

async function ask({ client, server }: { client: pg.Client; server: string }): Promise<WriterSession | LockRefused> {
  const { rows } = await client.query<{ ok: boolean; recovery: boolean }>(TAKE_SQL, [...WRITER_LOCK_KEY]);
  if (rows[0]?.recovery) return { standby: true };
  if (rows[0]?.ok) return new WriterSession(client, server);
  const holder = await client.query<{ application_name: string }>(HOLDER_SQL);
  return { heldBy: writerNameOf(holder.rows[0]?.application_name) };
}

/** Takes the lock if it is free, without waiting (for one-shot commands). */
export async function tryWriterLock(url: string, name: string): Promise<WriterSession | LockRefused> {
  const connected = await connect(url, name);
  try {
    const result = await attempt(connected);
    if (!(result instanceof WriterSession)) await endNow(connected.client);
    return result;
  } catch (error) {
    await endNow(connected.client);
    throw error;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(() => { signal.removeEventListener('abort', stop); resolve(); }, ms);
    const stop = () => { clearTimeout(timer); resolve(); };
    signal.addEventListener('abort', stop, { once: true });
  });
}

/**
 * Takes the writer lock, waiting as a standby while another writer holds it: it says so at once, then
 * every `logEveryMs` while it waits, and asks again every second (the first time after
 * `firstAskAfterMs`). Resolves with the session, or with undefined when `signal` aborts first. A
 * database that cannot be reached is waited out the same way.
 */
export async function acquireWriterLock(url: string, name: string, log: Logger,
  opts: { signal: AbortSignal; logEveryMs: number; firstAskAfterMs?: number }): Promise<WriterSession | undefined> {
  const started = Date.now();
  if (opts.firstAskAfterMs) await sleep(opts.firstAskAfterMs, opts.signal);
  let client: { client: pg.Client; server: string } | undefined;
  let said: { at: number; what: 'waiting' | 'unreachable' | 'standby' } | undefined;
  const sayNowAndThen = (what: 'waiting' | 'unreachable' | 'standby', first: () => void, again: () => void) => {
    const now = Date.now();
    if (said?.what !== what) first();
    else if (now - said.at >= opts.logEveryMs) again();
    else return;
    said = { at: now, what };
  };
  try {
    while (!opts.signal.aborted) {
      try {
        client ??= await connect(url, name);
        const result = await attempt(client);
        if (result instanceof WriterSession) {
          client = undefined;
          log.info('holding the writer lock: this writer writes', { writer: name, server: result.server, waited_seconds: Math.round((Date.now() - started) / 1000) });
          return result;
        }
        if ('standby' in result) {
          // The next attempt connects afresh, so a multi-host URL finds the primary wherever it is now.
          await endNow(client.client);
          client = undefined;
          const fields = { writer: name, waiting_seconds: Math.round((Date.now() - started) / 1000) };
          sayNowAndThen('standby',
            () => log.warn(`${STANDBY_ADVICE}; asking again`, fields),
            () => log.warn(`still on a standby: ${STANDBY_ADVICE}`, fields));
          await sleep(POLL_MS, opts.signal);
          continue;
        }
        const fields = { writer: name, active: result.heldBy, waiting_seconds: Math.round((Date.now() - started) / 1000) };
        sayNowAndThen('waiting',
          () => log.info('another writer holds the writer lock: waiting as standby', fields),
          () => log.info('still waiting as standby', fields));
      } catch (error) {
        if (client) await endNow(client.client);
        client = undefined;
        const fields = { writer: name, error: (error as Error).message };
        sayNowAndThen('unreachable',
          () => log.warn('cannot ask for the writer lock; trying again', fields),
          () => log.warn('still cannot ask for the writer lock; trying again', fields));
      }
      await sleep(POLL_MS, opts.signal);
    }
    return undefined;
  } finally {
    if (client) await endNow(client.client);
  }
}
