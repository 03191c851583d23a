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
// backend, the writer then refuses to write instead of writing beside another writer.
// https://www.postgresql.org/docs/15/explicit-locking.html#ADVISORY-LOCKS
import { Kysely, PostgresDialect, sql, type PostgresPool } from 'kysely';
import pg from 'pg';
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
 * How long a writer that lost the lock waits before it asks again. Its own connection just failed,
 * so a standby (asking every POLL_MS) takes over first; with no standby, the writer resumes itself.
 */
export const LOST_LOCK_BACKOFF_MS = 5 * POLL_MS;

const LOCK_ROW = `l.locktype = 'advisory' and l.classid = ${WRITER_LOCK_KEY[0]} and l.objid = ${WRITER_LOCK_KEY[1]} and l.objsubid = 2 and l.granted`;

/** The application_name of the session holding the writer lock in this database, if any. */
const HOLDER_SQL = `select a.application_name from pg_locks l join pg_stat_activity a on a.pid = l.pid
  where ${LOCK_ROW} and l.database = (select oid from pg_database where datname = current_database())`;

/** Whether the backend running this statement holds the writer lock. */
const HELD_HERE_SQL = `select exists (select from pg_locks l where ${LOCK_ROW} and l.pid = pg_backend_pid()) as held`;

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

/** Whether an error says the session itself is gone: a connection error, or the server ending it. */
function sessionGone(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03')) return true;
  return /Connection terminated|not queryable|ECONNRESET|EPIPE/.test((error as Error).message ?? '');
}

/** A session that holds the writer lock, and the only way this writer reaches the database. */
export class WriterSession {
  /** Kysely over the lock's own session, one user at a time. */
  readonly db: WriterDb;
  /** Aborts when the session ends, however it ends. */
  readonly lost: AbortSignal;
  #client: pg.Client;
  #ended = new AbortController();
  #turn: Promise<void> = Promise.resolve();

  constructor(client: pg.Client) {
    this.#client = client;
    this.lost = this.#ended.signal;
    // 'error' on an idle session is the server ending it (pg_terminate_backend, a restart) or the
    // network dropping it; 'end' follows. Either way the lock is gone with the session.
    client.on('error', () => this.#ended.abort());
    client.on('end', () => this.#ended.abort());
    const pool: PostgresPool = { connect: () => this.#checkout(), end: async () => {} };
    this.db = new Kysely<StatsTables>({ dialect: new PostgresDialect({ pool }) });
  }

  /** Like a pool of one connection: a transaction never shares the session with another statement. */
  async #checkout() {
    if (this.lost.aborted) throw new LockLost();
    const previous = this.#turn;
    let done!: () => void;
    this.#turn = new Promise<void>((resolve) => { done = resolve; });
    await previous;
    if (this.lost.aborted) {
      done();
      throw new LockLost();
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
    if (this.lost.aborted) throw new LockLost();
    try {
      const result = await this.#client.query(text, [...values]);
      if (/^\s*(begin|start transaction)\b/i.test(text)) await this.#assertHeldHere();
      return result;
    } catch (error) {
      if (error instanceof LockLost) throw error;
      if (this.lost.aborted || sessionGone(error)) {
        this.#ended.abort();
        throw new LockLost();
      }
      throw error;
    }
  }

  async #assertHeldHere() {
    const { rows } = await this.#client.query<{ held: boolean }>(HELD_HERE_SQL);
    if (rows[0]?.held) return;
    await this.#client.query('rollback').catch(() => {});
    this.#ended.abort();
    await this.#client.end().catch(() => {});
    throw new LockLost('a transaction ran on a backend that does not hold the writer lock (is WRITER_DATABASE_URL a pooler in transaction mode? the writer needs a direct or session-mode connection)');
  }

  /** Ends the session, which releases the lock; nothing can be written through it afterwards. */
  async release(): Promise<void> {
    this.#ended.abort();
    await this.#client.end().catch(() => {});
  }
}

async function connect(url: string, name: string): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: url,
    application_name: `${APPLICATION_NAME_PREFIX}${name}`,
    connectionTimeoutMillis: 10_000,
    // This side notices a dead server too, instead of waiting on a silent socket.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  // Until a session owns it, an error on an idle client only means "reconnect", which the caller does.
  client.on('error', () => {});
  try {
    await client.connect();
    // The server's side: a writer whose machine vanishes (no FIN ever comes) loses its session, and so
    // the lock, within about 25 s, rather than the operating system's two hours. Ignored on Unix
    // sockets. https://www.postgresql.org/docs/15/runtime-config-connection.html#GUC-TCP-KEEPALIVES-IDLE
    await client.query('set tcp_keepalives_idle = 10; set tcp_keepalives_interval = 5; set tcp_keepalives_count = 3; set tcp_user_timeout = 25000');
  } catch (error) {
    await client.end().catch(() => {});
    throw error;
  }
  return client;
}

/** One attempt on an open client: the session when the lock was free, else the holder's name. */
async function attempt(client: pg.Client): Promise<WriterSession | { heldBy: string | null }> {
  const { rows } = await client.query<{ ok: boolean }>('select pg_try_advisory_lock($1, $2) as ok', [...WRITER_LOCK_KEY]);
  if (rows[0]?.ok) return new WriterSession(client);
  const holder = await client.query<{ application_name: string }>(HOLDER_SQL);
  return { heldBy: nameOf(holder.rows[0]?.application_name) };
}

/** Takes the lock if it is free, without waiting (for one-shot commands). */
export async function tryWriterLock(url: string, name: string): Promise<WriterSession | { heldBy: string | null }> {
  const client = await connect(url, name);
  try {
    const result = await attempt(client);
    if (!(result instanceof WriterSession)) await client.end().catch(() => {});
    return result;
  } catch (error) {
    await client.end().catch(() => {});
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
  let client: pg.Client | undefined;
  let said: { at: number; what: 'waiting' | 'unreachable' } | undefined;
  const sayNowAndThen = (what: 'waiting' | 'unreachable', first: () => void, again: () => void) => {
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
          log.info('holding the writer lock: this writer writes', { writer: name, waited_seconds: Math.round((Date.now() - started) / 1000) });
          return result;
        }
        const fields = { writer: name, active: result.heldBy, waiting_seconds: Math.round((Date.now() - started) / 1000) };
        sayNowAndThen('waiting',
          () => log.info('another writer holds the writer lock: waiting as standby', fields),
          () => log.info('still waiting as standby', fields));
      } catch (error) {
        await client?.end().catch(() => {});
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
    await client?.end().catch(() => {});
  }
}
