// What `npm run writer -- import` says of what it wrote, as a new user meets it. A witness policy that
// lists no witness (`quorum none`) signs and records its rounds with no witness, and the import exits
// 0. On a database that fails over by itself with no standby to hold the commit (this stack's server
// made to look like a pg_auto_failover node, whose replication role it is given), the import is stored
// but neither signed nor acknowledged: it says "written on one node, waiting for a standby", never that
// nothing was written, and exits 3; health and `status` say the same, and the next write once the
// commit is held signs it.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, todayUtc } from '../../contract/dates.ts';
import { noteVerifierKey } from '../../contract/log-key.ts';
import { logOrigin } from '../../contract/paths.ts';
import { EXIT_ONE_NODE, ONE_NODE } from '../../writer/replication.ts';
import { query } from '../support/db.ts';
import { lines, startImportStack, stopImportStack, type ImportStack } from '../support/import-stack.ts';
import { cliEnv, runCli } from '../support/writer.ts';

let world: ImportStack;
let policy: string;

beforeAll(async () => {
  world = await startImportStack();
  const vkey = await noteVerifierKey(logOrigin(world.stack.cfg, false), Buffer.from(world.stack.cfg.LOG_PUBLIC_KEY, 'base64url'));
  policy = path.join(world.dir, 'unwitnessed.policy');
  writeFileSync(policy, `log ${vkey}\nquorum none\n`);
});
afterAll(() => stopImportStack(world ?? {}));

/** Imports one final night through the CLI under the policy with no witness. */
async function importNight(daysAgo: number, usd: number) {
  const night = addDays(todayUtc(), -daysAgo);
  const file = path.join(world.dir, `night-${daysAgo}.ndjson`);
  writeFileSync(file, lines({ type: 'payout', date: night, usd }));
  const run = await runCli(['import', file], cliEnv(world.stack, { LOG_POLICY: policy }));
  return { night, run, said: run.stdout + run.stderr };
}

const admin = () => world.stack.db.adminUrl;
const logSizes = async () => (await query<{ entries: number; signed: number }>(admin(),
  'select (select count(*) from stats.log_entry)::int as entries, coalesce((select max(size) from stats.log_checkpoint), 0)::int as signed'))[0]!;
const healthLog = async () => (await query<{ h: { status: string; log: Record<string, unknown> } }>(admin(), 'select stats.health_at(now()) as h'))[0]!.h;

describe('import under a witness policy with no witness', () => {
  it('is written, signed and witnessed by nobody, and exits 0', async () => {
    const { night, run, said } = await importNight(10, 41.25);
    expect(await query(admin(), 'select usd::float8 as usd from stats.payout where date = $1', [night])).toEqual([{ usd: 41.25 }]);
    expect(said).not.toMatch(/nothing was written|failed/);
    expect(said).toMatch(/import committed/);
    expect(run.code).toBe(0);
    const { entries, signed } = await logSizes();
    expect(entries).toBeGreaterThan(0);
    expect(signed).toBe(entries);
    // The round asked nobody and met the quorum of none; health reads it as fresh.
    expect(await query(admin(), 'select witnesses, cosigned, quorum_met from stats.log_witness_round order by at desc limit 1'))
      .toEqual([{ witnesses: 0, cosigned: [], quorum_met: true }]);
    expect((await healthLog()).log).toMatchObject({ witnessed: true, witnesses: 0, cosigned: 0, halted: null, waiting: null });
  });
});

describe('import on a failover group running on one node', () => {
  beforeAll(() => query(admin(), 'create role pgautofailover_replicator'));
  afterAll(() => query(admin(), 'drop role if exists pgautofailover_replicator'));

  it(`stores the night, signs nothing, says "${ONE_NODE}" and exits ${EXIT_ONE_NODE}`, async () => {
    const before = await logSizes();
    const { night, run, said } = await importNight(9, 17.5);
    expect(await query(admin(), 'select usd::float8 as usd from stats.payout where date = $1', [night])).toEqual([{ usd: 17.5 }]);
    expect(said).toMatch(new RegExp(`the import was ${ONE_NODE}`));
    expect(said).not.toMatch(/nothing was written|import committed/);
    expect(run.code).toBe(EXIT_ONE_NODE);
    // Appended with the night, in its transaction, and named by no checkpoint.
    const after = await logSizes();
    expect(after.entries).toBeGreaterThan(before.entries);
    expect(after.signed).toBe(before.signed);
    const health = await healthLog();
    expect(health.log.waiting).toBe(ONE_NODE);
    expect(health.status).toBe('degraded');
    const status = await runCli(['status'], cliEnv(world.stack));
    expect(JSON.parse(status.stdout).log).toEqual({ entries: after.entries, signed: before.signed, waiting: ONE_NODE });
    // `sign` signs nothing either, and says why.
    const sign = await runCli(['sign'], cliEnv(world.stack, { LOG_POLICY: policy }));
    expect(sign.stdout + sign.stderr).toMatch(new RegExp(`new entries are ${ONE_NODE}`));
    expect(sign.code).toBe(EXIT_ONE_NODE);
    expect((await logSizes()).signed).toBe(before.signed);
  });

  it('signs what waited once the commit is held', async () => {
    await query(admin(), 'drop role pgautofailover_replicator');
    const sign = await runCli(['sign'], cliEnv(world.stack, { LOG_POLICY: policy }));
    expect(sign.code).toBe(0);
    const { entries, signed } = await logSizes();
    expect(signed).toBe(entries);
    expect((await healthLog()).log.waiting).toBeNull();
  });
});
