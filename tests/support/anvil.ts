// The anvil process behind the test chain (chain.ts): it leads its own process group on a free loopback
// port, killed by stop() and, should a test end without it, when the test process exits.
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

/** The binary anvil's npm platform package ships. */
const ANVIL = path.resolve(import.meta.dirname, '../../node_modules/.bin/anvil');

export interface Anvil {
  /** The anvil wrapper's pid, which is also its process group's id. */
  pid: number;
  port: number;
  /** Kills anvil's process group and waits until it is gone and its port refuses connections. Idempotent. */
  stop(): Promise<void>;
}

// Process groups of the anvils still running, killed outright if the test process exits without stop()
// or is ended by a signal (its own group, where Ctrl-C lands, does not hold anvil's).
const running = new Set<number>();
let hooked = false;
function hookExit(): void {
  if (hooked) return;
  hooked = true;
  const killAll = () => {
    for (const group of running) killGroup(group, 'SIGKILL');
  };
  process.once('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = () => {
      killAll();
      process.off(signal, onSignal);
      // Nobody else handles it: end as the signal would have without this handler.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    };
    process.on(signal, onSignal);
  }
}
function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}
/** Whether a process of the group still runs. A zombie does not: anvil, orphaned when the wrapper exits
 * first, waits as one until process 1 reaps it, which can take a second. */
function groupAlive(pgid: number): boolean {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  }
  return entries.some((pid) => {
    try {
      // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so read after the last ')'.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return Number(pgrp) === pgid && state !== 'Z' && state !== 'X';
    } catch {
      return false; // gone meanwhile
    }
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await sleep(20);
  }
  return true;
}

function portRefuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

/** Spawns anvil; resolves with its process and port once it listens. */
function spawnAnvil(genesis: bigint): Promise<{ child: ChildProcess; port: number; closed: Promise<void> }> {
  const args = ['--host', '127.0.0.1', '--port', '0', '--chain-id', '137', '--timestamp', genesis.toString()];
  // Its own process group (detached), so that stop() also reaches the binary the wrapper starts.
  // Not --quiet: the wrapper's output is read for the port anvil was given, then dropped.
  const child = spawn(process.execPath, [ANVIL, ...args], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, TARGET_TOOL: 'anvil' },
  });
  const pid = child.pid;
  if (pid === undefined) return Promise.reject(new Error('anvil did not start'));
  running.add(pid);
  // 'close' comes once every holder of the output pipes (the wrapper and anvil) has gone.
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  hookExit();
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const fail = (why: string) => {
      clearTimeout(timer);
      killGroup(pid, 'SIGKILL');
      running.delete(pid);
      reject(new Error(`anvil ${why}${err ? `: ${err.slice(-2000)}` : ''}`));
    };
    const timer = setTimeout(() => fail('did not listen within 30 s'), 30_000);
    child.once('error', (e) => fail(`could not start (${e.message})`));
    const early = (code: number | null, signal: NodeJS.Signals | null) => fail(`exited (${signal ?? code}) before listening`);
    child.once('exit', early);
    child.stderr?.on('data', (chunk: Buffer) => {
      err = (err + chunk.toString()).slice(-4000);
    });
    const onData = (chunk: Buffer) => {
      out = (out + chunk.toString()).slice(-4000);
      const listening = /Listening on 127\.0\.0\.1:(\d+)/.exec(out);
      if (!listening) return;
      clearTimeout(timer);
      child.off('exit', early);
      child.stdout?.off('data', onData);
      child.stdout?.resume(); // drained, never read
      resolve({ child, port: Number(listening[1]), closed });
    };
    child.stdout?.on('data', onData);
  });
}

/** Starts anvil with chain id 137 and its genesis block at `genesis` (Unix seconds). */
export async function startAnvil(genesis: bigint): Promise<Anvil> {
  const { child, port, closed } = await spawnAnvil(genesis);
  const pid = child.pid as number;
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      killGroup(pid, 'SIGTERM');
      const gone = await Promise.race([closed.then(() => true), sleep(5000).then(() => false)]);
      if (!gone || !(await until(() => !groupAlive(pid), 2000))) {
        killGroup(pid, 'SIGKILL');
        await until(() => !groupAlive(pid), 3000);
      }
      running.delete(pid);
      if (!(await portRefuses(port))) {
        throw new Error(`anvil's port ${port} still accepts connections after stop()`);
      }
    })();
    return stopped;
  };
  return { pid, port, stop };
}
