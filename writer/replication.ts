// One rule: a signature, a witness round and an acknowledgement only for what two nodes hold. On a
// database that fails over by itself (a pg_auto_failover node: stats.failover_node()), a COMMIT that
// returned may be on the primary alone: a primary whose standby is away runs asynchronously
// (wait_primary), and a standby that trails its primary by up to a WAL segment can be promoted. So
// before the writer signs a checkpoint, sends one to witnesses or reports a write done, it reads, on
// the very session that committed, the WAL position every commit it made or saw lies below, and
// checks that a standby that can take over has flushed it (stats.standby_flush_lsn()). A single
// server, or one with read replicas only, holds its commits itself: there the check always passes.
import { sql } from 'kysely';
import type { WriterDb } from './db.ts';

/** What health and the commands say while a failover group runs on one node. */
export const ONE_NODE = 'written on one node, waiting for a standby';

/** The exit status of a command whose writes are stored, but on a failover group's primary alone. */
export const EXIT_ONE_NODE = 3;

/**
 * Thrown after a write's COMMIT returned on a failover group's primary that no standby able to take
 * over has confirmed: the write is stored, on that node alone, and neither signed nor acknowledged.
 * Once a standby has caught up, the next write signs it.
 */
export class WrittenOnOneNode extends Error {
  constructor() {
    super(ONE_NODE);
  }
}

/**
 * How long a standby that streams is waited for to flush the position read: in synchronous mode the
 * commit's own record is on it before the COMMIT returns, and the position read after it lies beyond
 * only by what other sessions wrote since.
 */
const STANDBY_WAIT_MS = 2000;
const POLL_MS = 10;

interface Position { lsn: string; held: boolean | null }

/**
 * Whether every commit this session has made or seen is held by a standby that can take over (always
 * true off a failover group). Must run on the session that committed, a session of its own
 * (db.connection()): a position read on another server, after a failover, says nothing of this one.
 * The position is where the next WAL record will go (pg_current_wal_insert_lsn), which lies beyond
 * every commit record written before, whatever their synchronous_commit.
 */
export async function heldOnTwoNodes(session: WriterDb): Promise<boolean> {
  const ask = async (lsn?: string) => (await sql<Position>`select l::text as lsn, not stats.failover_node() or stats.standby_flush_lsn() >= l as held
    from (select coalesce(${lsn ?? null}::pg_lsn, pg_current_wal_insert_lsn()) as l) p`.execute(session)).rows[0]!;
  let { lsn, held } = await ask();
  // null: no standby that can take over streams, and none will within the wait.
  const until = Date.now() + STANDBY_WAIT_MS;
  while (held === false && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    ({ lsn, held } = await ask(lsn));
  }
  return held === true;
}
