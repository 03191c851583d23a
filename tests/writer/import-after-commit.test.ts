// What `npm run writer -- import` says when its events committed and the log's work after them failed:
// that the import was written, never that nothing was. A witness policy that lists no witness, which
// the database records no round of, makes that work fail after the commit, as a new user meets it.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, todayUtc } from '../../contract/dates.ts';
import { noteVerifierKey } from '../../contract/log-key.ts';
import { logOrigin } from '../../contract/paths.ts';
import { query } from '../support/db.ts';
import { lines, startImportStack, stopImportStack, type ImportStack } from '../support/import-stack.ts';
import { cliEnv, runCli } from '../support/writer.ts';

let world: ImportStack;

beforeAll(async () => { world = await startImportStack(); });
afterAll(() => stopImportStack(world ?? {}));

describe('import, when the log\'s work after the commit fails', () => {
  it('says the import was written, and the night is in the database', async () => {
    const { stack, dir } = world;
    const vkey = await noteVerifierKey(logOrigin(stack.cfg, false), Buffer.from(stack.cfg.LOG_PUBLIC_KEY, 'base64url'));
    const policy = path.join(dir, 'unwitnessed.policy');
    writeFileSync(policy, `log ${vkey}\nquorum none\n`);
    const night = addDays(todayUtc(), -10);
    const file = path.join(dir, 'night.ndjson');
    writeFileSync(file, lines({ type: 'payout', date: night, usd: 41.25 }));

    const run = await runCli(['import', file], cliEnv(stack, { LOG_POLICY: policy }));
    const said = run.stdout + run.stderr;
    expect(await query(stack.db.adminUrl, 'select usd::float8 as usd from stats.payout where date = $1', [night])).toEqual([{ usd: 41.25 }]);
    expect(said).not.toMatch(/nothing was written/);
    expect(said).toMatch(/the import was written, but the log's work after it failed: .*log_witness_round_witnesses_check/);
    expect(run.code).toBe(1);
  });
});
