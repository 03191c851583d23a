// A private stack with forty nights of records, a streaming replica of its database and a node
// (PostgREST, edge, nginx) over the replica; and how the replica tests write on the primary and read.
import { expect } from 'vitest';
import { addDays, todayUtc } from '../../contract/dates.ts';
import { API_PATHS } from '../../contract/paths.ts';
import { query } from './db.ts';
import { startTestNode, startTestReplica, startTestStack, type TestNode, type TestReplica, type TestStack } from './stack.ts';
import { cliEnv, runCli } from './writer.ts';

export const today = todayUtc();

const justNow = () => new Date(Date.now() - 1000).toISOString();
/** What keeps health "ok": a fresh accrual and a writer heartbeat. */
export const signsOfLife = () => [{ type: 'accrual', at: justNow(), usd: 3.5, markets: 4 }, { type: 'heartbeat', at: justNow() }];

export const one = async <T>(url: string, sql: string, values: unknown[] = []) => (await query<{ v: T }>(url, sql, values))[0]!.v;

export type Health = { status: string; checked_at: string; data: { replica_lag_seconds: number | null; replica_streaming: boolean | null } | null };
export const apiOf = (cfg: TestNode['cfg']) => `http://${cfg.bindHost}:${cfg.apiPort}`;
export const siteOf = (cfg: TestNode['cfg']) => `http://${cfg.bindHost}:${cfg.sitePort}`;

/** Writing on and reading from the stack `current()` returns, with its keys. */
export function replicaTools(current: () => TestStack) {
  return {
    /** Writes through the real writer CLI (`npm run writer -- import -`), on the primary. */
    importEvents: async (events: object[]) => {
      const result = await runCli(['import', '-'], cliEnv(current()), events.map((e) => JSON.stringify(e)).join('\n') + '\n');
      expect(result.code, result.stderr).toBe(0);
    },
    healthVia: async (apiOrigin: string): Promise<Health> =>
      (await fetch(apiOrigin + API_PATHS.HEALTH, { headers: { apikey: current().cfg.ANON_KEY } })).json() as Promise<Health>,
  };
}

/** Starts the stack, imports its records, then copies its database into a replica and starts a node over it. */
export async function startReplicaSetup(): Promise<{ stack: TestStack; replica: TestReplica; node: TestNode }> {
  const stack = await startTestStack();
  let replica: TestReplica | undefined;
  try {
    const events: object[] = [];
    for (let i = 40; i >= 1; i--) {
      const date = addDays(today, -i);
      events.push({ type: 'payout', date, usd: 30 + (i % 7) + 0.5 });
      if (i % 2) events.push({ type: 'trading_cost', date, usd: (i % 5) - 2 });
      events.push({ type: 'capital', at: `${date}T12:00:00Z`, cash_usd: 4000 + i, inventory_usd: 120.25, positions: 3 });
    }
    await replicaTools(() => stack).importEvents([...events, ...signsOfLife()]);
    replica = await startTestReplica(stack);
    const node = await startTestNode(stack, { authenticatorUrl: replica.urlFor('authenticator'), replica: true });
    return { stack, replica, node };
  } catch (error) {
    // Nothing of a start that failed outlives it.
    await stopReplicaSetup({ stack, replica });
    throw error;
  }
}

/** Stops what startReplicaSetup started, the node first and the primary last. */
export async function stopReplicaSetup({ stack, replica, node }: Partial<{ stack: TestStack; replica: TestReplica; node: TestNode }>): Promise<void> {
  await node?.destroy();
  await replica?.destroy();
  await stack?.destroy();
}
