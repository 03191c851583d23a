// Tests start private stacks (and replicas and further nodes beside them) with the helpers the benchmark
// uses, and read what the processes of a stack do: whether a port is listened on, who runs a process.
import { readFileSync } from 'node:fs';
import net from 'node:net';
export { startTestNode, startTestReplica, startTestStack, type TestNode, type TestReplica, type TestStack } from '../../stack/ephemeral.ts';

/** How a TCP connection to `port` on loopback ends: 'open', or the error's code (ECONNREFUSED: nothing listens). */
export function dial(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => { socket.destroy(); resolve('open'); });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

/** The user id a running process has (its /proc status). */
export const uidOf = (pid: number | string) => Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
