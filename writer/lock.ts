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
//
// This module holds the lock's key, its lease and what it says; lock-session.ts holds the session
// that holds the lock, and lock-acquire.ts asks for it.
import { sql } from 'kysely';
import type { SessionTimeouts } from '../db-client/pg-connect.ts';
import type { WriterDb } from './db.ts';

/**
 * The lock's key, two int4 keys: pg_locks shows them as classid and objid with objsubid = 2
 * (https://www.postgresql.org/docs/15/view-pg-locks.html). 0x53544154 spells "STAT"; 1 is the writer.
 */
export const WRITER_LOCK_KEY = [0x53544154, 1] as const;

/** The lock session's application_name is this and the writer's name, so pg_stat_activity shows which writer holds it. */
export const APPLICATION_NAME_PREFIX = 'stats-writer ';

/**
 * The lease: how long the lock's session may sit idle before the server ends it. A stalled holder
 * is idle after at most statement_timeout (a statement it left running ends by then), so a standby,
 * asking every second, takes over within LEASE_MS + statement_timeout + 1 s of the stall, about 21 s,
 * under the 30 s the service promises; a live holder renews five times per lease, so a late renewal
 * (a long transaction ahead of it in the session's queue, a garbage-collection pause) still lands in
 * time.
 */
export const LEASE_MS = 10_000;
export const RENEW_EVERY_MS = 2_000;

/**
 * The lock's session: statements and transactions of the writer are short upserts and reads (tens of
 * milliseconds), so 10 s is far beyond any of them yet keeps the lease's bound; a transaction idle
 * that long has a stalled writer behind it.
 */
export const LOCK_TIMEOUTS: SessionTimeouts = { statementMs: 10_000, idleInTransactionMs: 10_000, idleSessionMs: LEASE_MS };

/** The row of pg_locks that is the writer lock, held. */
export const LOCK_ROW = `l.locktype = 'advisory' and l.classid = ${WRITER_LOCK_KEY[0]} and l.objid = ${WRITER_LOCK_KEY[1]} and l.objsubid = 2 and l.granted`;

/** The application_name of the session holding the writer lock in this database, if any. */
export const HOLDER_SQL = `select a.application_name from pg_locks l join pg_stat_activity a on a.pid = l.pid
  where ${LOCK_ROW} and l.database = (select oid from pg_database where datname = current_database())`;

/** Why a writer neither takes the lock on a standby nor writes through a session that finds itself on one. */
export const ON_STANDBY = 'the database is a standby (in recovery), where the writer lock fences nothing';

/** What a writer says when WRITER_DATABASE_URL leads it to a standby. */
export const STANDBY_ADVICE = `${ON_STANDBY}: this writer takes no lock and writes nothing there; point WRITER_DATABASE_URL at the primary, or list every node with target_session_attrs=read-write`;

/** Thrown by every use of a writer session whose lock is gone. */
export class LockLost extends Error {
  constructor(why = 'the writer lock was lost (its connection ended)') {
    super(`${why}: this writer writes nothing until it holds the lock again`);
  }
}

/** The writer's name in a lock session's application_name; null when the session is not a writer of ours. */
export const writerNameOf = (applicationName: unknown): string | null =>
  typeof applicationName === 'string' && applicationName.startsWith(APPLICATION_NAME_PREFIX) ? applicationName.slice(APPLICATION_NAME_PREFIX.length) : null;

/** The name of the writer holding the lock now; null when none does (or the holder is not a writer of ours). */
export async function activeWriter(db: WriterDb): Promise<string | null> {
  const { rows } = await sql<{ application_name: string }>`${sql.raw(HOLDER_SQL)}`.execute(db);
  return writerNameOf(rows[0]?.application_name);
}
