// The commit every write ends with: the transaction appends the nights that turned final to the
// transparency log, and once its COMMIT has returned and a standby that can take over holds it
// (replication.ts), the log's new entries are signed.
import { sql, type Transaction } from 'kysely';
import type { StatsTables, WriterDb } from './db.ts';
import { LockLost } from './lock.ts';
import type { LogSigner, SignedCheckpoint } from './log-signer.ts';
import { heldOnTwoNodes, WrittenOnOneNode } from './replication.ts';

let logSigner: LogSigner | undefined;

/** The signer every write of this process signs the log with; none: entries are appended, not signed. */
export function signLogWith(signer: LogSigner | undefined): void {
  logSigner = signer;
}

/**
 * Runs the write's transaction on a session of its own, then signs what it appended to the log once
 * its commit is held on two nodes. When it is not (a failover group running on its primary alone), it
 * signs nothing and throws WrittenOnOneNode after the commit: the write is stored, and the first write
 * whose commit a standby holds signs it.
 *
 * A checkpoint commits only to entries a standby that can take over holds. The write appends its
 * entries and asks the signer whether it would sign the tree (so a tree it refuses is taken back with
 * them), but stores no checkpoint. Once its COMMIT has returned, the same session checks that a
 * standby has flushed the WAL beyond it (heldOnTwoNodes); only then does a transaction of its own sign
 * exactly those entries (signAcknowledged). Entries no standby holds are named by no checkpoint, which
 * nothing serves: those of a primary that ran alone, or of one cut off whose waiting commit became
 * visible when it crashed and restarted. A checkpoint whose own commit is lost to a failover names
 * only entries the promoted standby holds: any checkpoint of that size, signed on either side, has
 * the same root. So no two checkpoints of one size ever differ.
 */
export async function committing<T>(db: WriterDb, fn: (trx: Transaction<StatsTables>) => Promise<T>): Promise<T> {
  return db.connection().execute(async (session) => {
    let toSign: number | undefined;
    const result = await inTransaction(session, async (trx) => {
      const value = await fn(trx);
      toSign = await appendFinalNights(trx);
      // The COMMIT waits for the synchronous standby with no statement timeout: a wait the timeout
      // cancelled would leave the transaction committed on the primary alone (Postgres only warns). It
      // ends when the standby answers or the failover manager makes the primary asynchronous or demotes it.
      // https://www.postgresql.org/docs/15/warm-standby.html#SYNCHRONOUS-REPLICATION-HA
      await sql`set local statement_timeout = 0`.execute(trx);
      return value;
    });
    // Committed: a session that fails now leaves a write no standby is known to hold.
    const held = await heldOnTwoNodes(session).catch((error: unknown) => {
      if (error instanceof LockLost) throw error;
      return false;
    });
    if (!held) throw new WrittenOnOneNode();
    if (toSign !== undefined) await signAcknowledged(session, toSign);
    return result;
  });
}

/**
 * db.transaction().execute(fn), except that the error thrown is the one that ended the transaction:
 * with its connection gone (a server gone silent, a reset), Kysely's own throws the ROLLBACK's error,
 * "not queryable", instead of why.
 * https://kysely.dev/docs/recipes/controlled-transactions
 */
async function inTransaction<T>(db: WriterDb, fn: (trx: Transaction<StatsTables>) => Promise<T>): Promise<T> {
  const trx = await db.startTransaction().execute();
  try {
    const value = await fn(trx);
    await trx.commit().execute();
    return value;
  } catch (error) {
    // After a failed COMMIT too: the rollback gives the connection back, whatever it answers.
    if (!trx.isCommitted) await trx.rollback().execute().catch(() => {});
    throw error;
  }
}

/**
 * Signs the log's first `acknowledged` entries, which a standby that can take over holds, on the
 * session that confirmed it. The transaction takes the log's lock first (by appending: nights that
 * turned final meanwhile are appended too, and no other appender or signer runs until it ends). When
 * the log holds more entries than were acknowledged (another write appended since), none is signed
 * now: once a standby holds what this transaction saw, the next round signs that. A failure here
 * leaves the entries to the next write, whose commit signs them the same way: the write itself has
 * committed.
 */
async function signAcknowledged(session: WriterDb, acknowledged: number): Promise<void> {
  let size = acknowledged;
  for (let round = 0; round < 3 && logSigner; round++) {
    const signer = logSigner;
    let signed: SignedCheckpoint | undefined;
    let seen: number | undefined;
    try {
      await session.transaction().execute(async (trx) => {
        await sql`select stats.log_append(clock_timestamp())`.execute(trx);
        const held = Number((await trx.selectFrom('stats.log_entry').select(sql<string | null>`max(idx) + 1`.as('size')).executeTakeFirstOrThrow()).size ?? 0);
        if (held === size) {
          const signing = await signer.sign(trx);
          if ('refused' in signing) await signer.halt(trx, signing.refused);
          else if ('signed' in signing) signed = signing.signed;
        } else seen = held;
        await sql`set local statement_timeout = 0`.execute(trx);
      });
      if (seen !== undefined && !(await heldOnTwoNodes(session))) return;
    } catch {
      return;
    }
    if (signed) signer.committed(signed);
    if (seen === undefined) return;
    size = seen;
  }
}

/**
 * Every write ends by appending the nights that have turned final (or changed since they were logged)
 * to the transparency log, in the same transaction, so the log never lags a committed write by more
 * than the signing that follows its commit (committing), and no entry is served unsigned. The wall
 * clock, not the transaction's start, so the rows this transaction wrote count. The signer is asked
 * here whether it would sign the tree: when it refuses, the entries are taken back and the log halts
 * (the figures themselves are still written); when it would, the checkpoint it made is taken back too,
 * and the log's size is returned for signAcknowledged, which signs it once a standby holds the commit.
 */
async function appendFinalNights(trx: Transaction<StatsTables>): Promise<number | undefined> {
  await sql`savepoint log_append`.execute(trx);
  await sql`select stats.log_append(clock_timestamp())`.execute(trx);
  if (!logSigner) return undefined;
  await sql`savepoint log_sign`.execute(trx);
  const signing = await logSigner.sign(trx);
  if ('refused' in signing) {
    await sql`rollback to savepoint log_append`.execute(trx);
    await logSigner.halt(trx, signing.refused);
    return undefined;
  }
  if (!('signed' in signing)) return undefined;
  await sql`rollback to savepoint log_sign`.execute(trx);
  return signing.signed.size;
}

/**
 * Appends the nights that have turned final and signs what the log holds unsigned (entries appended
 * while no signer was set, or while no standby held them), as the end of every write does, in a
 * transaction of its own. False when its commit is written on one node: nothing is signed then.
 */
export async function appendAndSign(db: WriterDb): Promise<boolean> {
  try {
    await committing(db, async () => undefined);
    return true;
  } catch (error) {
    if (error instanceof WrittenOnOneNode) return false;
    throw error;
  }
}
