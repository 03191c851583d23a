// A full disk, for real: a database node's data directory on a tmpfs of its own (a small
// memory-backed filesystem with a fixed size, https://www.kernel.org/doc/html/latest/filesystems/tmpfs.html),
// and a file that fills it and keeps it full until space returns. Needs root (mount).
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readdirSync, rmSync, statfsSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';

/** Mounts a tmpfs of `sizeMb` at `dir` (made if missing), owned by `ids` with `mode`, the way Postgres wants its data directory. */
export function mountTmpfs(dir: string, sizeMb: number, ids: { uid?: number; gid?: number }, mode = 0o700): void {
  mkdirSync(dir, { recursive: true });
  const owner = ids.uid === undefined ? [] : [`uid=${ids.uid}`, `gid=${ids.gid}`];
  execFileSync('mount', ['-t', 'tmpfs', '-o', [`size=${sizeMb}m`, `mode=${mode.toString(8)}`, ...owner].join(','), 'tmpfs', dir]);
  process.once('exit', () => unmount(dir));
}

/** Unmounts `dir` if something is mounted there (lazily: a process still inside lets go later). */
export function unmount(dir: string): void {
  try {
    execFileSync('umount', ['--lazy', dir], { stdio: 'ignore' });
  } catch {
    // nothing mounted there
  }
}

/**
 * Moves the contents of `dir` (a stopped server's data directory) onto a new tmpfs of `sizeMb` mounted
 * at `dir` itself: the tmpfs is mounted beside it, the contents copied with their owners and modes,
 * the old contents removed and the tmpfs moved into place.
 */
export function moveOntoTmpfs(dir: string, sizeMb: number, ids: { uid?: number; gid?: number }): void {
  const beside = `${dir}.tmpfs`;
  mountTmpfs(beside, sizeMb, ids);
  execFileSync('cp', ['-a', `${dir}/.`, beside]);
  for (const entry of readdirSync(dir)) rmSync(path.join(dir, entry), { recursive: true, force: true });
  execFileSync('mount', ['--move', beside, dir]);
  rmSync(beside, { recursive: true, force: true });
  process.once('exit', () => unmount(dir));
}

/** Bytes free on the filesystem of `dir`. */
export const freeBytes = (dir: string) => {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
};

/**
 * Fills the filesystem of `dir` with one file and keeps it full: whatever the server frees (a WAL
 * segment removed at a checkpoint, a temporary file gone) is taken again within `everyMs`, mostly
 * before the server writes into it. release() removes the file.
 */
export function fillDisk(dir: string, everyMs = 20): { release(): void; filled: number } {
  const file = path.join(dir, 'disk-full-filler');
  const fd = openSync(file, 'a');
  const state = { filled: 0 };
  const fill = () => {
    for (const chunk of [1 << 20, 1 << 13]) {
      const bytes = Buffer.alloc(chunk);
      for (;;) {
        try {
          state.filled += writeSync(fd, bytes);
        } catch {
          break;
        }
      }
    }
  };
  fill();
  const timer = setInterval(fill, everyMs);
  let released = false;
  return {
    get filled() { return state.filled; },
    release() {
      if (released) return;
      released = true;
      clearInterval(timer);
      closeSync(fd);
      unlinkSync(file);
    },
  };
}
