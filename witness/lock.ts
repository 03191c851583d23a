// The lock that lets one witness process at a time use a state directory. It is SQLite's own file
// lock on a small database in the directory: in EXCLUSIVE locking mode a connection that has begun
// an exclusive transaction never lets go of its lock until it is closed
// (https://www.sqlite.org/pragma.html#pragma_locking_mode). On Unix that lock is a POSIX advisory
// lock on the open file (https://www.sqlite.org/lockingv3.html), which the kernel drops when the
// process ends in any way, SIGKILL included: no process id is stored or compared, so a witness
// killed outright, not yet reaped, or restarted under the same pid never locks out the next one.
// node:sqlite is built into Node (https://nodejs.org/docs/latest-v24.x/api/sqlite.html).
import { DatabaseSync } from 'node:sqlite';
import path from 'node:path';

export const LOCK_FILE = 'witness-lock.sqlite';

/** SQLite's result code for a database another connection has locked (https://www.sqlite.org/rescode.html#busy). */
const SQLITE_BUSY = 5;

/** The state directory cannot be used: another witness holds it, or it cannot be locked at all. */
export class StateDirError extends Error {}

export interface DirLock {
  /** Lets the next witness take the directory at once (the end of the process does too). */
  release(): void;
}

/** Takes the directory's lock, or throws StateDirError at once when another process holds it. */
export function lockDir(dir: string): DirLock {
  const file = path.join(dir, LOCK_FILE);
  // timeout 0: a held lock is refused straight away, never waited for.
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(file, { timeout: 0 });
  } catch (error) {
    throw new StateDirError(`cannot lock the state directory ${dir} with ${file}: ${(error as Error).message}`);
  }
  try {
    // The journal kept in memory leaves no journal file beside the lock; nothing is ever stored.
    db.exec('PRAGMA journal_mode = MEMORY');
    db.exec('PRAGMA locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('COMMIT');
  } catch (error) {
    db.close();
    if ((error as { errcode?: number }).errcode === SQLITE_BUSY) {
      throw new StateDirError(`another witness is running with the state directory ${dir} (it holds the lock on ${file}); stop it first, or give this one another --state`);
    }
    throw new StateDirError(`cannot lock the state directory ${dir} with ${file}: ${(error as Error).message}`);
  }
  return { release: () => db.close() };
}
