// The session that holds the writer lock: the writer's only way to the database, which refuses to
// run anything once the lock is gone, and checks in every transaction that it still holds it.
import { Kysely, PostgresDialect, type PostgresPool } from 'kysely';
import pg from 'pg';
import type { StatsTables, WriterDb } from './db.ts';
import { LOCK_ROW, LockLost, ON_STANDBY } from './lock.ts';

/** Whether the backend running this statement holds the writer lock, and whether its server is a standby. */
const HELD_HERE_SQL = `select exists (select from pg_locks l where ${LOCK_ROW} and l.pid = pg_backend_pid()) as held, pg_is_in_recovery() as recovery`;

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
