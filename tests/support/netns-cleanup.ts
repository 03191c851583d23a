// What outlives one test's network: the lock that gives a prefix to one run at a time, and the
// reaping of namespaces (and what runs in them) that a run left behind, now or from a process that outlives it.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

const lockDirOf = (prefix: string) => `/run/lock/${prefix}network`;

/** The namespaces whose names start with `prefix`. */
function namespacesOf(prefix: string): string[] {
  let listed = '';
  try {
    listed = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  } catch {
    return [];
  }
  return listed.split('\n').map((line) => line.split(' ')[0]!).filter((name) => name && name.startsWith(prefix));
}

/**
 * Kills every process inside the namespaces named with `prefix` and deletes the namespaces, with
 * their interfaces and nftables state. Synchronous, so it also runs from an exit handler.
 */
export function reapNetworks(prefix: string): string[] {
  const found = namespacesOf(prefix);
  for (let round = 0; round < 20; round++) {
    let left = 0;
    for (const ns of found) {
      let pids: string[] = [];
      try {
        pids = execFileSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' }).split('\n').filter(Boolean);
      } catch {
        continue;
      }
      left += pids.length;
      for (const pid of pids) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          // gone already
        }
      }
    }
    if (left === 0) break;
    execFileSync('sleep', ['0.1']);
  }
  for (const ns of found) {
    try {
      execFileSync('ip', ['netns', 'delete', ns], { stdio: 'ignore' });
    } catch {
      // deleted meanwhile
    }
  }
  return found;
}

/**
 * One network at a time per prefix on this machine: a lock directory holding the owner's process
 * id. A lock whose owner is gone is taken over (its namespaces are then leftovers, reaped by the new
 * owner).
 */
export async function lock(prefix: string, timeoutMs: number): Promise<() => void> {
  const dir = lockDirOf(prefix);
  mkdirSync('/run/lock', { recursive: true });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      mkdirSync(dir);
      writeFileSync(`${dir}/pid`, String(process.pid));
      return () => rmSync(dir, { recursive: true, force: true });
    } catch {
      let owner = Number.NaN;
      try {
        owner = Number(readFileSync(`${dir}/pid`, 'utf8'));
      } catch {
        // being written or removed: ask again
      }
      let alive = false;
      try {
        if (Number.isInteger(owner)) alive = process.kill(owner, 0);
      } catch {
        alive = false;
      }
      if (Number.isInteger(owner) && !alive) rmSync(dir, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`another test (process ${owner}) holds the network ${prefix}* for longer than ${timeoutMs / 1000} s`);
      else await sleep(1000);
    }
  }
}

/**
 * A process that outlives this one to clean up after it: when this process is gone without having
 * dismissed it (killed outright, crashed), it kills what runs in the namespaces, deletes them, and
 * removes `paths`.
 */
export function startReaper(prefix: string, paths: string[]): { pid: number; dismiss(): void } {
  const lockDir = lockDirOf(prefix);
  const script = `
    while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done
    # A later run that took the lock over owns the namespaces now.
    if [ -e '${lockDir}/pid' ] && [ "$(cat '${lockDir}/pid')" != ${process.pid} ]; then exit 0; fi
    for i in 1 2 3 4 5 6 7 8 9 10; do
      left=0
      for ns in $(ip netns list | cut -d' ' -f1 | grep '^${prefix}'); do
        for pid in $(ip netns pids "$ns"); do kill -9 "$pid" 2>/dev/null; left=1; done
      done
      [ "$left" = 0 ] && break
      sleep 0.2
    done
    for ns in $(ip netns list | cut -d' ' -f1 | grep '^${prefix}'); do ip netns delete "$ns"; done
    rm -rf ${paths.map((p) => `'${p}'`).join(' ')} '${lockDir}'
  `;
  const child = spawn('bash', ['-c', script], { detached: true, stdio: 'ignore' });
  child.unref();
  return {
    pid: child.pid!,
    dismiss() {
      try {
        process.kill(child.pid!, 'SIGKILL');
      } catch {
        // gone already
      }
    },
  };
}
