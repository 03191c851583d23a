// What the witness remembers of each log: the latest checkpoint it cosigned, one file per origin in
// the state directory (named by the SHA-256 of the origin, so any origin makes a safe file name).
// A new state is written to a temporary file, flushed, and renamed over the old one, and the
// directory is flushed too, so a crash leaves the old state or the new one, never a mix. One
// witness process owns a state directory at a time (see lock.ts).
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { base64 } from '../contract/log-key.ts';
import { decodeBase64 } from '../contract/tlog/vkey.ts';
import { lockDir, type DirLock } from './lock.ts';

export interface LogState {
  origin: string;
  size: number;
  root: Uint8Array<ArrayBuffer>;
  /** The signed checkpoint as it was submitted. */
  checkpoint: string;
  /** When it was cosigned, in POSIX seconds. */
  cosignedAt: number;
}

export class StateStore {
  readonly dir: string;
  private readonly lock: DirLock;
  private readonly states = new Map<string, LogState | undefined>();
  private readonly queues = new Map<string, Promise<unknown>>();

  private constructor(dir: string, lock: DirLock) {
    this.dir = dir;
    this.lock = lock;
  }

  /** Opens (creating) the directory and takes its lock; throws StateDirError when another witness holds it. */
  static open(dir: string): StateStore {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return new StateStore(dir, lockDir(dir));
  }

  /** Lets the next witness take the directory. */
  close(): void {
    this.lock.release();
  }

  private fileOf(origin: string): string {
    return path.join(this.dir, `${createHash('sha256').update(origin).digest('hex')}.json`);
  }

  /** The latest cosigned checkpoint of a log, or undefined before the first. */
  read(origin: string): LogState | undefined {
    if (this.states.has(origin)) return this.states.get(origin);
    let text: string;
    try {
      text = readFileSync(this.fileOf(origin), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      this.states.set(origin, undefined);
      return undefined;
    }
    const saved = JSON.parse(text) as { origin: string; size: number; root: string; checkpoint: string; cosigned_at: number };
    const root = decodeBase64(saved.root);
    if (saved.origin !== origin || !Number.isSafeInteger(saved.size) || !root) throw new Error(`${this.fileOf(origin)} is not the state of ${origin}`);
    const state = { origin, size: saved.size, root, checkpoint: saved.checkpoint, cosignedAt: saved.cosigned_at };
    this.states.set(origin, state);
    return state;
  }

  /** Saves a log's new state durably before it returns. */
  write(state: LogState): void {
    const file = this.fileOf(state.origin);
    const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    const text = `${JSON.stringify({ origin: state.origin, size: state.size, root: base64(state.root), checkpoint: state.checkpoint, cosigned_at: state.cosignedAt }, null, 2)}\n`;
    try {
      const fd = openSync(temporary, 'wx', 0o600);
      try {
        writeFileSync(fd, text);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(temporary, file);
      const dirFd = openSync(this.dir, 'r');
      try {
        fsyncSync(dirFd);
      } finally {
        closeSync(dirFd);
      }
    } catch (error) {
      // Whether the rename happened is not known here: the next request reads the file again.
      this.states.delete(state.origin);
      rmSync(temporary, { force: true });
      throw error;
    }
    this.states.set(state.origin, state);
  }

  /** Runs `task` after every earlier task for the same origin has finished: one check-and-update at a time per log. */
  exclusive<T>(origin: string, task: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(origin) ?? Promise.resolve();
    const next = previous.then(task, task);
    const settled = next.then(() => undefined, () => undefined);
    this.queues.set(origin, settled);
    void settled.then(() => { if (this.queues.get(origin) === settled) this.queues.delete(origin); });
    return next;
  }
}
