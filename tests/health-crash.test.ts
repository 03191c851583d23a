// Health during a crash: the postmaster killed outright while health calls run, several times, and
// every answer on both hosts is HTTP 200 with a status. At that instant PostgREST can get an error
// result without a SQLSTATE (the server went away in the middle of the call) and answers it with
// 400 (its status table's "other" row: https://docs.postgrest.org/en/v12/references/errors.html#status-codes);
// the gateway reads that as "down". And an error raised while the record is worked out is a "down"
// record from the function itself, so even PostgREST reached directly answers 200.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query } from './support/db.ts';
import { startTestStack, type TestStack } from './support/stack.ts';

const ROUNDS = 10;
/** The supervisor gives up on a part after 5 restarts in a row within a minute; a clean restart of
 * Postgres every few rounds starts its count again. */
const ROUNDS_PER_CLEAN_START = 4;
const CONCURRENT = 20;

let stack: TestStack;
beforeAll(async () => { stack = await startTestStack({ seedDemo: true }); }, 120_000);
afterAll(async () => { await stack?.destroy(); });

interface Answer { status: number; body: string }

async function get(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(url, { headers, signal: AbortSignal.timeout(15_000) });
  return { status: res.status, body: await res.text() };
}

const apiHealth = () => get(`${stack.cfg.apiUrl}/rest/v1/rpc/landing_health`, { apikey: stack.cfg.ANON_KEY });
const siteHealth = () => get(`${stack.cfg.siteUrl}/api/health`);
const statusOf = (a: Answer) => (JSON.parse(a.body) as { status: string }).status;

async function untilUp(): Promise<number> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const pid = stack.db.server?.child?.process.pid;
    const health = await apiHealth().catch(() => undefined);
    if (pid !== undefined && health?.status === 200 && statusOf(health) !== 'down') return pid;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the database did not come back within 60 s');
}

describe('health while the postmaster is killed', () => {
  it(`answers 200 with a status on both hosts to ${CONCURRENT} concurrent calls, at every instant of ${ROUNDS} crashes`, async () => {
    const unexpected: string[] = [];
    const statuses = new Map<string, number>();
    for (let round = 0; round < ROUNDS; round++) {
      if (round > 0 && round % ROUNDS_PER_CLEAN_START === 0) {
        await untilUp();
        await stack.db.server!.stop();
        await stack.db.server!.start();
      }
      const postmaster = await untilUp();
      let running = true;
      const caller = async (call: () => Promise<Answer>, host: string) => {
        while (running) {
          const answer = await call();
          let status: string | undefined;
          try {
            status = statusOf(answer);
          } catch {
            status = undefined;
          }
          if (answer.status !== 200 || !['ok', 'degraded', 'down'].includes(status ?? '')) {
            unexpected.push(`round ${round}, ${host}: HTTP ${answer.status} ${answer.body.slice(0, 200)}`);
          } else {
            statuses.set(status!, (statuses.get(status!) ?? 0) + 1);
          }
        }
      };
      const callers = [
        ...Array.from({ length: CONCURRENT }, () => caller(apiHealth, 'API host')),
        ...Array.from({ length: 4 }, () => caller(siteHealth, 'site host')),
      ];
      // Calls are under way (some of them inside Postgres) when the postmaster goes.
      await new Promise((r) => setTimeout(r, 200 + (round % 5) * 97));
      process.kill(postmaster, 'SIGKILL');
      await new Promise((r) => setTimeout(r, 3000));
      running = false;
      await Promise.all(callers);
    }
    expect(unexpected).toEqual([]);
    // The crashes happened under the calls: some answers said "down", and the others a live status.
    expect(statuses.get('down')).toBeGreaterThan(0);
    expect((statuses.get('ok') ?? 0) + (statuses.get('degraded') ?? 0)).toBeGreaterThan(0);
    await untilUp();
  }, 180_000);

  it('answers the "down" record from the function itself when working out the record raises, so PostgREST answers 200 too', async () => {
    await untilUp();
    const { def } = (await query<{ def: string }>(stack.db.adminUrl, `select pg_get_functiondef('stats.health_at(timestamptz)'::regprocedure) as def`))[0]!;
    // An error PostgREST maps to 400 (22012, division by zero), raised where the record is worked out.
    await query(stack.db.adminUrl, `create or replace function stats.health_at(p_now timestamptz) returns json
      language plpgsql stable set search_path = '' as $$ begin return pg_catalog.json_build_object('x', 1 / 0); end $$`);
    try {
      const direct = await get(`http://${stack.cfg.bindHost}:${stack.cfg.postgrestPort}/rpc/landing_health`);
      expect(direct.status).toBe(200);
      expect(JSON.parse(direct.body)).toEqual({ status: 'down', checked_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/), data: null, writer: null });
      const gateway = await apiHealth();
      expect(gateway.status).toBe(200);
      expect(statusOf(gateway)).toBe('down');
    } finally {
      await query(stack.db.adminUrl, def);
    }
    expect(statusOf(await apiHealth())).not.toBe('down');
  }, 60_000);
});
