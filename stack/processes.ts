// Child processes of the local stack: start, wait until ready, stop without leaving anything behind.
// Each child leads a process group of its own, so a child's own children (nginx workers, Postgres
// backends) go with it: whenever a child exits, for whatever reason, its whole group is killed.
import { execFile, execFileSync, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync, renameSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

export type Log = (line: string) => void;

export interface Child {
  name: string;
  /** The executable, as spawned. */
  command: string;
  process: ChildProcess;
  /** Resolves once the process has exited (or could not be started). */
  exited: Promise<number | null>;
  /** Why the process could not be started at all, as a sentence saying what to do. */
  readonly startFailure: string | undefined;
  stop(): Promise<void>;
}

/** Sends `signal` to every process of the group `pgid`; a group that is gone already is fine. */
function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: nothing of the group is left
  }
}

/**
 * Spawns a long-running child in a process group of its own; its output goes to `log`, prefixed
 * with its name (only the lines `keepLine` accepts, when given).
 */
export function startChild(
  name: string,
  command: string,
  args: string[],
  options: SpawnOptions & { log: Log; keepLine?: (line: string) => boolean; stopSignal?: NodeJS.Signals },
): Child {
  const { log, keepLine, stopSignal = 'SIGTERM', ...spawnOptions } = options;
  const child = spawn(command, args, { ...spawnOptions, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const forward = (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n')) if (line.trim() && (keepLine?.(line) ?? true)) log(`[${name}] ${line}`);
  };
  child.stdout?.on('data', forward);
  child.stderr?.on('data', forward);
  let startFailure: string | undefined;
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      // What the child leaves behind (nginx workers after a killed master, Postgres backends) goes too.
      if (child.pid) signalGroup(child.pid, 'SIGKILL');
      resolve(code);
    });
    // A spawn that fails emits 'error' and no 'exit'.
    child.once('error', (error: NodeJS.ErrnoException) => {
      const why = error.code === 'ENOENT' ? 'it does not exist' : error.code === 'EACCES' ? 'permission is denied' : error.message;
      startFailure = `${name} could not be started (${command}: ${why}): reinstall the dependencies with \`npm ci\`, or check that the file is executable.`;
      log(`[${name}] ${startFailure}`);
      resolve(null);
    });
  });
  return {
    name,
    command,
    process: child,
    exited,
    get startFailure() { return startFailure; },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(stopSignal);
      const done = await Promise.race([exited.then(() => true), sleep(5000).then(() => false)]);
      if (!done) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}

/**
 * Runs a Node program to its end, on this Node, with exactly `env` (and PATH): the other parts of the
 * service are run as programs, never imported. Resolves with what it printed; rejects with what it
 * said on stderr when it fails.
 */
export async function runNode(program: string, args: string[], env: Record<string, string>, timeoutMs = 120_000): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [program, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, timeout: timeoutMs });
    return stdout;
  } catch (error) {
    const { stderr, message } = error as { stderr?: string; message: string };
    throw new Error(stderr?.trim() || message);
  }
}

/** runNode, each line the program printed going to `log`. */
export async function runNodeLogged(program: string, args: string[], env: Record<string, string>, log: Log): Promise<void> {
  for (const line of (await runNode(program, args, env)).split('\n')) if (line.trim()) log(line);
}

/** The executable of a running process, or undefined when it is gone or not ours to read. */
export function executableOf(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/exe`).replace(/ \(deleted\)$/, '');
  } catch {
    return undefined;
  }
}

/**
 * A process's state, parent and group, from /proc/<pid>/stat (they follow the command name, which may
 * hold spaces and parentheses); undefined for a process that is gone.
 */
export function procStat(pid: number): { state: string; ppid: number; pgid: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state = '', ppid, pgid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state, ppid: Number(ppid), pgid: Number(pgid) };
  } catch {
    return undefined;
  }
}

/** The process group of a live process; undefined for one that is gone or a zombie waiting to be reaped. */
function groupOf(pid: number): number | undefined {
  const stat = procStat(pid);
  return stat && stat.state !== 'Z' ? stat.pgid : undefined;
}

interface RecordedGroup { name: string; pgid: number; executable: string }

/**
 * The process groups a stack is running, kept in a file under its data directory. A stack whose
 * own process was killed outright cannot stop its children; the next start reads the file and
 * removes them before it claims the ports.
 */
export class GroupRecord {
  readonly file: string;
  private groups = new Map<string, RecordedGroup>();

  constructor(file: string) {
    this.file = file;
  }

  /** Records a running child (replacing the earlier process of the same name). */
  add(child: Child): void {
    if (!child.process.pid) return;
    this.groups.set(child.name, { name: child.name, pgid: child.process.pid, executable: executableOf(child.process.pid) ?? child.command });
    this.save();
  }

  remove(child: Child): void {
    if (this.groups.get(child.name)?.pgid !== child.process.pid) return;
    this.groups.delete(child.name);
    this.save();
  }

  /**
   * Replaces the file whole (a new file renamed over it): a start killed in the middle of a write,
   * or a reader at that moment, never finds half a list.
   */
  private save(groups: RecordedGroup[] = [...this.groups.values()]): void {
    const temporary = `${this.file}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(groups)}\n`);
    renameSync(temporary, this.file);
  }

  /**
   * Kills what an earlier run recorded and left running: every process of a recorded group, as long
   * as one of them still runs the recorded executable (so a reused process id is never touched).
   */
  async reapLeftovers(log: Log): Promise<void> {
    if (!existsSync(this.file)) return;
    let recorded: RecordedGroup[];
    try {
      recorded = JSON.parse(readFileSync(this.file, 'utf8')) as RecordedGroup[];
    } catch {
      return;
    }
    const membersOf = (pgid: number) => readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).map(Number).filter((pid) => groupOf(pid) === pgid);
    for (const group of recorded) {
      if (!membersOf(group.pgid).some((pid) => executableOf(pid) === group.executable)) continue;
      log(`Stopping ${group.name} (process group ${group.pgid}), left running by an earlier start that did not stop it.`);
      signalGroup(group.pgid, 'SIGKILL');
      for (let waited = 0; waited < 5000 && membersOf(group.pgid).length; waited += 50) await sleep(50);
    }
    this.save([]);
  }
}

/** The numeric user and group ids of a local user (children that must not run as root). */
export function idsOf(user: string): { uid: number; gid: number } {
  return {
    uid: Number(execFileSync('id', ['-u', user]).toString().trim()),
    gid: Number(execFileSync('id', ['-g', user]).toString().trim()),
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

/**
 * Linux hands outgoing connections source ports from 32768 to 60999 (ip_local_port_range), so a
 * port the OS picks for a listener (port 0) can be taken by some connection's source port before
 * the part that needs it binds it. Listener ports are drawn from below that range instead.
 */
const LISTENER_PORTS = { first: 20_000, last: 32_767 };
const handedOut = new Set<number>();

function listens(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ host, port }, () => server.close(() => resolve(true)));
  });
}

/** An unused TCP port on the host (for tests and benchmarks), handed out at most once per process. */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = LISTENER_PORTS.first + Math.floor(Math.random() * (LISTENER_PORTS.last - LISTENER_PORTS.first + 1));
    if (handedOut.has(port)) continue;
    if (await listens(host, port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`No free port between ${LISTENER_PORTS.first} and ${LISTENER_PORTS.last} on ${host}.`);
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
    if (exited) throw new Error(child?.startFailure ?? `${what} exited during start-up; its output is above.`);
    if (await Promise.race([check().catch(() => false), sleep(1000).then(() => false)])) return;
    await sleep(50);
  }
  await child?.stop();
  throw new Error(`${what} did not become ready within ${timeoutMs / 1000} s.`);
}

