// Child processes of the local stack: start, wait until ready, stop without leaving anything behind.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export type Log = (line: string) => void;

export interface Child {
  name: string;
  process: ChildProcess;
  /** Resolves once the process has exited. */
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

/** Spawns a long-running child; its output goes to `log`, prefixed with its name. */
export function startChild(name: string, command: string, args: string[], options: SpawnOptions & { log: Log }): Child {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  const forward = (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n')) if (line.trim()) options.log(`[${name}] ${line}`);
  };
  child.stdout?.on('data', forward);
  child.stderr?.on('data', forward);
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.once('error', (error) => {
      options.log(`[${name}] ${error.message}`);
      resolve(null);
    });
  });
  return {
    name,
    process: child,
    exited,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const done = await Promise.race([exited.then(() => true), sleep(5000).then(() => false)]);
      if (!done) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}

/** Fails with a sentence saying what to do when something already listens on the port. */
export async function assertPortFree(host: string, port: number, what: string, variable: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const server = net.createServer();
    server.once('error', () =>
      reject(new Error(`Port ${port} (${what}) is already in use: stop whatever holds it or set ${variable} to a free port in .env.`)));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve()));
  });
}

/** An unused TCP port on the host (for tests and benchmarks). */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen({ host, port: 0 }, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Polls `check` (each try bounded to a second) until it returns true; fails after `timeoutMs`, or at
 * once if the child exits. A child that never became ready is stopped, so a failed start leaves
 * nothing running.
 */
export async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number, child?: Child): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void child?.exited.then(() => { exited = true; });
  while (Date.now() < deadline) {
    if (exited) throw new Error(`${what} exited during start-up; its output is above.`);
    if (await Promise.race([check().catch(() => false), sleep(1000).then(() => false)])) return;
    await sleep(50);
  }
  await child?.stop();
  throw new Error(`${what} did not become ready within ${timeoutMs / 1000} s.`);
}

