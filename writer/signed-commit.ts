// The commit every write ends with: the transaction appends the nights that turned final to the
// transparency log, and once its COMMIT has returned, the log's new entries are signed.
import { sql, type Transaction } from 'kysely';
import type { StatsTables, WriterDb } from './db.ts';
import type { LogSigner, SignedCheckpoint } from './log-signer.ts';

let logSigner: LogSigner | undefined;

/** The signer every write of this process signs the log with; none: entries are appended, not signed. */
export function signLogWith(signer: LogSigner | undefined): void {
  logSigner = signer;
}

/**
 * Runs the write's transaction, then signs what it appended to the log once its commit has returned.
 *
 * A checkpoint commits to entries only once they are on the synchronous standby. The write appends
 * its entries and asks the signer whether it would sign the tree (so a tree it refuses is taken back
 * with them), but stores no checkpoint. Only when the COMMIT has returned, which with synchronous
 * replication means the standby has the entries, does a transaction of its own sign exactly those
 * entries (signAcknowledged). A commit that never returns (its primary cut off from the standby, then
 * crashed and restarted, which makes the commit visible there though no standby has it) leaves
 * entries no checkpoint names, which nothing serves. A checkpoint whose own commit never returns names
 * only entries every node that can be promoted holds: any checkpoint of that size, signed on either
 * side of a partition, has the same root. So no two checkpoints of one size ever differ.
 */
export async function committing<T>(db: WriterDb, fn: (trx: Transaction<StatsTables>) => Promise<T>): Promise<T> {
  let toSign: number | undefined;
  const result = await inTransaction(db, async (trx) => {
    const value = await fn(trx);
    toSign = await appendFinalNights(trx);
    // The COMMIT waits for the synchronous standby with no statement timeout: a wait the timeout
    // cancelled would leave the transaction committed on the primary alone (Postgres only warns),
    // readable there though the standby may never get it. It ends when the standby answers or the
    // failover manager makes the primary asynchronous or demotes it.
    // https://www.postgresql.org/docs/15/warm-standby.html#SYNCHRONOUS-REPLICATION-HA
    await sql`set local statement_timeout = 0`.execute(trx);
    return value;
  });
  if (toSign !== undefined) await signAcknowledged(db, toSign);
  return result;
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
 * Signs the log's first `acknowledged` entries, which a commit that has returned held: on a primary
 * with a synchronous standby they are on the standby. The transaction takes the log's lock first (by
 * appending: nights that turned final meanwhile are appended too, and no other appender or signer runs
 * until it ends), and gets a transaction id, so its own COMMIT waits for the standby as well. When the
 * log holds more entries than were acknowledged (another write appended since), none is signed now:
 * this transaction's returned commit acknowledges what it saw, and the next round signs that. A failure
 * here leaves the entries to the next write, whose commit signs them the same way: the write itself has
 * committed.
 */
async function signAcknowledged(db: WriterDb, acknowledged: number): Promise<void> {
  let size = acknowledged;
  for (let round = 0; round < 3 && logSigner; round++) {
    const signer = logSigner;
    let signed: SignedCheckpoint | undefined;
    let seen: number | undefined;
    try {
      await db.transaction().execute(async (trx) => {
        await sql`select stats.log_append(clock_timestamp())`.execute(trx);
        await sql`select pg_current_xact_id()`.execute(trx);
        const held = Number((await trx.selectFrom('stats.log_entry').select(sql<string | null>`max(idx) + 1`.as('size')).executeTakeFirstOrThrow()).size ?? 0);
        if (held === size) {
          const signing = await signer.sign(trx);
          if ('refused' in signing) await signer.halt(trx, signing.refused);
          else if ('signed' in signing) signed = signing.signed;
        } else seen = held;
        await sql`set local statement_timeout = 0`.execute(trx);
      });
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
 * the transaction gets a transaction id (so its COMMIT, waiting for the standby, acknowledges every
 * entry it saw), and the log's size is returned for signAcknowledged.
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
  await sql`select pg_current_xact_id()`.execute(trx);
  return signing.signed.size;
}

/**
 * Appends the nights that have turned final and signs what the log holds unsigned (entries appended
 * while no signer was set), as the end of every write does, in a transaction of its own.
 */
export async function appendAndSign(db: WriterDb): Promise<void> {
  await committing(db, async () => undefined);
}
