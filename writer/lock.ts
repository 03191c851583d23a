// One writer at a time. A writer holds a session-level Postgres advisory lock, and every statement it
// makes, reads and writes alike, goes through that very session: the lock's connection is the
// writer's only connection. Why this fencing and not a lock on one connection checked from another:
// a lock checked from elsewhere can be lost between the check and the commit, while here a write can
// only commit on the session that holds the lock. Postgres ends a session by aborting its open
// transaction before it releases the session's advisory locks (ShutdownPostgres,
// https://github.com/postgres/postgres/blob/REL_15_STABLE/src/backend/utils/init/postinit.c), so by
// the time another writer can take the lock, nothing the old session had under way can commit, and the
// old writer has no other connection to write through: it must take the lock again first.
// On top of that, every transaction begins by asking pg_locks, inside the transaction, whether its
// own backend holds the lock: behind a pooler in transaction mode, where "the session" is not one
// backend, the writer then refuses to write instead of writing beside another writer. The same check
// asks whether the server is in recovery: advisory locks work on a hot standby too, where they fence
// nothing, so the writer never takes the lock there and never writes through a session that finds
// itself on one.
// https://www.postgresql.org/docs/15/explicit-locking.html#ADVISORY-LOCKS
//
// The lock is a lease. The lock's session carries idle_session_timeout, so a holder that stops
// making progress (stopped, paused, its machine frozen) has its session ended by the server, and with
// it the lock, without a word from the holder; a holder that runs renews the lease with a cheap
// statement while its work moves on (runLoop), or on a timer while a one-shot command runs. Once
// ended, the session is gone for good: this process reaches the database again only by taking the
// lock afresh (acquireWriterLock or tryWriterLock), which fails while another writer holds it.
// https://www.postgresql.org/docs/15/runtime-config-client.html#GUC-IDLE-SESSION-TIMEOUT
import { Kysely, PostgresDialect, sql, type PostgresPool } from 'kysely';
import pg from 'pg';
import { connectDatabaseAt, type SessionTimeouts } from '../db-client/pg-connect.ts';
import type { StatsTables, WriterDb } from './db.ts';
import type { Logger } from './log.ts';

/**
 * The lock's key, two int4 keys: pg_locks shows them as classid and objid with objsubid = 2
 * (https://www.postgresql.org/docs/15/view-pg-locks.html). 0x53544154 spells "STAT"; 1 is the writer.
 */
export const WRITER_LOCK_KEY = [0x53544154, 1] as const;

/** The lock session's application_name is this and the writer's name, so pg_stat_activity shows which writer holds it. */
export const APPLICATION_NAME_PREFIX = 'stats-writer ';

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
 * The lease: how long the lock's session may sit idle before the server ends it. A stalled holder
 * is idle after at most statement_timeout (a statement it left running ends by then), so a standby
 * takes over within LEASE_MS + statement_timeout + POLL_MS of the stall, about 21 s, under the 30 s
 * the service promises; a live holder renews five times per lease, so a late renewal (a long
 * transaction ahead of it in the session's queue, a garbage-collection pause) still lands in time.
 */
export const LEASE_MS = 10_000;
export const RENEW_EVERY_MS = 2_000;

/**
 * The lock's session: statements and transactions of the writer are short upserts and reads (tens of
 * milliseconds), so 10 s is far beyond any of them yet keeps the lease's bound; a transaction idle
 * that long has a stalled writer behind it.
 */
export const LOCK_TIMEOUTS: SessionTimeouts = { statementMs: 10_000, idleInTransactionMs: 10_000, idleSessionMs: LEASE_MS };

const LOCK_ROW = `l.locktype = 'advisory' and l.classid = ${WRITER_LOCK_KEY[0]} and l.objid = ${WRITER_LOCK_KEY[1]} and l.objsubid = 2 and l.granted`;

/** The application_name of the session holding the writer lock in this database, if any. */
const HOLDER_SQL = `select a.application_name from pg_locks l join pg_stat_activity a on a.pid = l.pid
  where ${LOCK_ROW} and l.database = (select oid from pg_database where datname = current_database())`;

/** Whether the backend running this statement holds the writer lock, and whether its server is a standby. */
const HELD_HERE_SQL = `select exists (select from pg_locks l where ${LOCK_ROW} and l.pid = pg_backend_pid()) as held, pg_is_in_recovery() as recovery`;

/**
 * Takes the lock unless the server is in recovery, in one statement: CASE evaluates the volatile
 * lock function only in its branch, so a standby is never asked for the lock at all.
 */
const TAKE_SQL = 'select pg_is_in_recovery() as recovery, case when pg_is_in_recovery() then false else pg_try_advisory_lock($1, $2) end as ok';

const ON_STANDBY = 'the database is a standby (in recovery), where the writer lock fences nothing';

/** Thrown by every use of a writer session whose lock is gone. */
export class LockLost extends Error {
  constructor(why = 'the writer lock was lost (its connection ended)') {
    super(`${why}: this writer writes nothing until it holds the lock again`);
  }
}

const nameOf = (applicationName: unknown): string | null =>
  typeof applicationName === 'string' && applicationName.startsWith(APPLICATION_NAME_PREFIX) ? applicationName.slice(APPLICATION_NAME_PREFIX.length) : null;

/** The name of the writer holding the lock now; null when none does (or the holder is not a writer of ours). */
export async function activeWriter(db: WriterDb): Promise<string | null> {
  const { rows } = await sql<{ application_name: string }>`${sql.raw(HOLDER_SQL)}`.execute(db);
  return nameOf(rows[0]?.application_name);
}

/**
 * SQLSTATEs of the server ending the session: admin_shutdown, crash_shutdown, cannot_connect_now,
 * database_dropped, idle_session_timeout, and idle_in_transaction_session_timeout.
 * https://www.postgresql.org/docs/15/errcodes-appendix.html
 */
const SESSION_ENDED = new Set(['57P01', '57P02', '57P03', '57P04', '57P05', '25P03']);

/** Whether an error says the session itself is gone: a connection error, or the server ending it. */
function sessionGone(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (code.startsWith('08') || SESSION_ENDED.has(code))) return true;
  return /Connection terminated|not queryable|ECONNRESET|EPIPE/.test((error as Error).message ?? '');
}

/** A session that holds the writer lock, and the only way this writer reaches the database. */
export class WriterSession {
  /** Kysely over the lock's own session, one user at a time. */
  readonly db: WriterDb;
  /** Aborts when the session ends, however it ends. */
  readonly lost: AbortSignal;
  /** The server the session is on, host:port as the database URL names it. */
  readonly server: string;
  #client: pg.Client;
  #ended = new AbortController();
  #why: string | undefined;
  #turn: Promise<void> = Promise.resolve();

  constructor(client: pg.Client, server = 'the configured server') {
    this.#client = client;
    this.server = server;
    this.lost = this.#ended.signal;
    // 'error' on an idle session is the server ending it (pg_terminate_backend, a restart, the lease
    // running out) or the network dropping it; 'end' follows. Either way the lock is gone with it.
    client.on('error', (error) => this.#end(`its connection ended: ${error.message}`));
    client.on('end', () => this.#end('its connection ended'));
    const pool: PostgresPool = { connect: () => this.#checkout(), end: async () => {} };
    this.db = new Kysely<StatsTables>({ dialect: new PostgresDialect({ pool }) });
  }

  /** Why the lock was lost, once it was. */
  get lostBecause(): string | undefined {
    return this.#why;
  }

  /** Marks the session over (the first reason given is the one kept). */
  #end(why: string) {
    this.#why ??= why;
    this.#ended.abort();
  }

  #lockLost(): LockLost {
    return new LockLost(`the writer lock was lost (${this.#why ?? 'its connection ended'})`);
  }

  /** Like a pool of one connection: a transaction never shares the session with another statement. */
  async #checkout() {
    if (this.lost.aborted) throw this.#lockLost();
    const previous = this.#turn;
    let done!: () => void;
    this.#turn = new Promise<void>((resolve) => { done = resolve; });
    await previous;
    if (this.lost.aborted) {
      done();
      throw this.#lockLost();
    }
    let released = false;
    const client = {
      query: (text: string, values: readonly unknown[]) => this.#query(text, values),
      release: () => {
        if (released) return;
        released = true;
        done();
      },
    };
    return client as unknown as Awaited<ReturnType<PostgresPool['connect']>>;
  }

  async #query(text: string, values: readonly unknown[]) {
    if (this.lost.aborted) throw this.#lockLost();
    try {
      const result = await this.#client.query(text, [...values]);
      if (/^\s*(begin|start transaction)\b/i.test(text)) await this.#assertHeldHere();
      return result;
    } catch (error) {
      throw this.#asLockLost(error);
    }
  }

  /** What an error of the session is to its user: LockLost when the session is gone (ending it here), else itself. */
  #asLockLost(error: unknown): unknown {
    if (error instanceof LockLost) return error;
    if (this.lost.aborted || sessionGone(error)) {
      this.#end(`its connection ended: ${(error as Error).message}`);
      return this.#lockLost();
    }
    return error;
  }

  /**
   * Asked inside every transaction and at every renewal: the lock is held by this very backend, on a
   * primary. Otherwise the session is ended, and what runs in it writes nothing.
   */
  async #assertHeldHere() {
    const { rows } = await this.#client.query<{ held: boolean; recovery: boolean }>(HELD_HERE_SQL);
    const why = rows[0]?.recovery ? ON_STANDBY
      : rows[0]?.held ? undefined
      : 'a transaction ran on a backend that does not hold the writer lock (is WRITER_DATABASE_URL a pooler in transaction mode? the writer needs a direct or session-mode connection)';
    if (!why) return;
    await this.#client.query('rollback').catch(() => {});
    this.#end(why);
    await this.#client.end().catch(() => {});
    throw new LockLost(why);
  }

  /**
   * Renews the lease: a statement through the session (after whatever is ahead of it), which resets
   * the server's idle_session_timeout and checks that the lock is still held here, on a primary.
   */
  async renew(): Promise<void> {
    const client = await this.#checkout();
    try {
      await this.#assertHeldHere();
    } catch (error) {
      throw this.#asLockLost(error);
    } finally {
      client.release();
    }
  }

  /** Renews the lease every `everyMs` until the session ends or the returned function is called (for one-shot commands). */
  renewEvery(everyMs: number): () => void {
    const timer = setInterval(() => {
      void this.renew().catch(() => {});
    }, everyMs);
    const stop = () => clearInterval(timer);
    this.lost.addEventListener('abort', stop, { once: true });
    return stop;
  }

  /** Gives the lock up at once, for `why`: what still runs in the session fails with LockLost. */
  async lapse(why: string): Promise<void> {
    this.#end(why);
    await this.#client.end().catch(() => {});
  }

  /** Ends the session, which releases the lock; nothing can be written through it afterwards. */
  async release(): Promise<void> {
    this.#end('this writer released it');
    await this.#client.end().catch(() => {});
  }
}

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
  return { heldBy: nameOf(holder.rows[0]?.application_name) };
}

/** What a writer says when WRITER_DATABASE_URL leads it to a standby. */
export const STANDBY_ADVICE = `${ON_STANDBY}: this writer takes no lock and writes nothing there; point WRITER_DATABASE_URL at the primary, or list every node with target_session_attrs=read-write`;

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
