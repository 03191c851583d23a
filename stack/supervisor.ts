// Keeps each part of the local stack running. A part that exits on its own is started again after a
// growing pause; while it is down, the parts still up keep answering (health says "down"). A part
// that keeps failing ends the stack through onGiveUp, so the caller exits non-zero and an outer
// supervisor (systemd, Docker, a shell loop) gets its turn.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Child, Log } from './processes.ts';

export interface RestartPolicy {
  /** Pauses before the 1st, 2nd, … restart in a row; the last one repeats. */
  delaysMs: number[];
  /** Restarts in a row (failed starts and quick crashes) after which the stack gives up. */
  maxRestarts: number;
  /** A part that ran this long before exiting counts as a fresh failure, not one in a row. */
  stableMs: number;
}

export const RESTART_POLICY: RestartPolicy = { delaysMs: [250, 1000, 2000, 4000, 8000], maxRestarts: 5, stableMs: 60_000 };

/** One part of the stack under supervision. */
export interface SupervisedPart {
  readonly name: string;
  /** The running process; undefined while it is down. */
  readonly child: Child | undefined;
  /** Stops the part on purpose: it is not restarted until start(). */
  stop(): Promise<void>;
  /** Starts a part stopped on purpose. */
  start(): Promise<void>;
}

export interface SuperviseOptions {
  log: Log;
  onGiveUp(reason: string): void;
  policy?: RestartPolicy;
}

/** Starts a part with `launch` (which resolves once it is ready) and keeps it running. */
export async function supervise(name: string, launch: () => Promise<Child>, options: SuperviseOptions): Promise<SupervisedPart> {
  const { log, onGiveUp, policy = RESTART_POLICY } = options;
  let child: Child | undefined;
  let wanted = true;
  let restartsInARow = 0;
  // Aborts the pause of a restart loop when the part is stopped on purpose.
  let pause = new AbortController();
  let restarting: Promise<void> | undefined;

  const watch = (running: Child) => {
    const startedAt = Date.now();
    void running.exited.then((code) => {
      if (child !== running) return;
      child = undefined;
      if (!wanted) return;
      if (Date.now() - startedAt >= policy.stableMs) restartsInARow = 0;
      log(`${name} exited unexpectedly (${code === null ? 'killed by a signal' : `code ${code}`}); restarting it.`);
      restarting = restart();
    });
  };

  const restart = async () => {
    while (wanted) {
      if (restartsInARow >= policy.maxRestarts) {
        log(`${name} failed ${restartsInARow} restarts in a row; giving up.`);
        onGiveUp(`${name} kept failing (${restartsInARow} restarts in a row)`);
        return;
      }
      const delay = policy.delaysMs[Math.min(restartsInARow, policy.delaysMs.length - 1)]!;
      restartsInARow += 1;
      try {
        await sleep(delay, undefined, { signal: pause.signal });
      } catch {
        return; // stopped on purpose during the pause
      }
      if (!wanted) return;
      try {
        const started = await launch();
        if (!wanted) {
          await started.stop();
          return;
        }
        child = started;
        watch(started);
        log(`${name} is running again.`);
        return;
      } catch (error) {
        log(`${name} did not start: ${(error as Error).message}`);
      }
    }
  };

  child = await launch();
  watch(child);

  return {
    name,
    get child() { return child; },
    async stop() {
      wanted = false;
      pause.abort();
      await restarting;
      restarting = undefined;
      const running = child;
      child = undefined;
      await running?.stop();
    },
    async start() {
      if (child) return;
      wanted = true;
      restartsInARow = 0;
      pause = new AbortController();
      child = await launch();
      watch(child);
    },
  };
}
