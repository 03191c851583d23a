// A stack in the high-availability mode (POSTGRES_HA=pg_auto_failover), and what its tests read of it:
// which node is the primary, what the monitor says of a node, where PostgREST reads.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { query } from './db.ts';
import { startTestStack, type TestStack } from './stack.ts';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Asks `probe` every `everyMs` until it answers (a failure counts as not yet); throws after `timeoutMs`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs: number, everyMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** The stack in the high-availability mode, its edge holding a health answer one second; `env` adds to its settings. */
export const startHaStack = (env: Record<string, string> = {}) =>
  startTestStack({ env: { POSTGRES_HA: 'pg_auto_failover', EDGE_HEALTH_TTL_SECONDS: '1', EDGE_UPSTREAM_TIMEOUT_SECONDS: '3', ...env } });

/** Probes of the stack `current()` returns, so that they follow a test that restarts it. */
export function haProbes(current: () => TestStack) {
  const ha = () => current().ha!;
  return {
    /** The API host's origin. */
    api: () => `http://${current().cfg.bindHost}:${current().cfg.apiPort}`,
    /** The index of the node the monitor has as the primary, -1 when none. */
    primaryIndex: async () => {
      const states = await ha().states();
      return ha().ports.nodes.findIndex((port) => states.some((s) => s.port === port && ['primary', 'wait_primary', 'single'].includes(s.reported)));
    },
    /** How many sessions PostgREST (the authenticator role) holds on node `i`. */
    postgrestSessions: async (i: number) =>
      Number((await query<{ n: string }>(ha().nodeUrl(i), "select count(*) as n from pg_stat_activity where usename = 'authenticator'"))[0]!.n),
    /** What the monitor says of node `i`. */
    stateOf: async (i: number) => (await ha().states()).find((s) => s.port === ha().ports.nodes[i]),
  };
}

/** Node `i`'s machine lost: its postmaster and its keeper's process group killed, the keeper kept down until `ha.nodes[i].start()`. Returns when. */
export async function loseNode(stack: TestStack, i: number): Promise<number> {
  const ha = stack.ha!;
  const postmaster = Number(readFileSync(path.join(stack.cfg.dataDir, 'ha', `node${i + 1}`, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const keeper = ha.nodes[i]!.child!.process.pid!;
  const at = Date.now();
  process.kill(postmaster, 'SIGKILL');
  process.kill(-keeper, 'SIGKILL');
  await ha.nodes[i]!.stop();
  return at;
}
