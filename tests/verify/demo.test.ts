// The verifier on a site that still shows demo data: the demo log under /log/demo/, signed by the
// log's key under the demo origin, is checked like the real one, and when real data arrive the state
// file's demo checkpoint gives way to the real log, still under the key first trusted.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, todayUtc } from '../../contract/dates.ts';
import { noteVerifierKey } from '../../contract/log-key.ts';
import { logOrigin, SITE_PATHS } from '../../contract/paths.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { cliEnv, runCli } from '../support/writer.ts';
import { verify } from '../support/verifier.ts';

let stack: TestStack;
let dir: string;
const today = todayUtc();

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'verify-demo-'));
  stack = await startTestStack({ seedDemo: true });
}, 120_000);
afterAll(async () => {
  await stack?.destroy();
  rmSync(dir, { recursive: true, force: true });
});

describe('verify on demo data', () => {
  it('checks the demo log under /log/demo/, then the real log once real data replace it, with the key it first trusted', async () => {
    const state = path.join(dir, 'state.json');
    const key = (demo: boolean) => noteVerifierKey(logOrigin(stack.cfg, demo), Buffer.from(stack.cfg.LOG_PUBLIC_KEY, 'base64url'));
    const demo = await verify('--site', stack.cfg.siteUrl, '--state', state);
    expect(demo.code, demo.stderr).toBe(0);
    expect(demo.stdout).toContain(`log ${logOrigin(stack.cfg, true)} (demo data): checkpoint of `);
    expect(demo.stdout).toContain(`signed by the log key ${await key(true)} (from the site, trusted on first use)`);
    expect(demo.stdout).toContain('the demo log is not witnessed');
    // The key recorded is the log's own, named by the real origin.
    expect(JSON.parse(readFileSync(state, 'utf8'))).toMatchObject({ vkey: await key(false), origin: logOrigin(stack.cfg, true) });

    const events = Array.from({ length: 6 }, (_, i) => ({ type: 'payout', date: addDays(today, -6 + i), usd: 10 + i + 0.5 }));
    const imported = await runCli(['import', '-'], cliEnv(stack), events.map((e) => JSON.stringify(e)).join('\n') + '\n');
    expect(imported.code, imported.stderr).toBe(0);
    // The site's caches answer with the demo figures for up to a minute and a half (max-age and
    // stale-while-revalidate), each encoding on its own: wait for the one the verifier asks for.
    const source = async (path: string) => ((await (await fetch(stack.cfg.siteUrl + path, { headers: { 'accept-encoding': 'identity' } })).json()) as { data_source: string }).data_source;
    for (let i = 0; i < 120 && ((await source(SITE_PATHS.SITE_HISTORY)) === 'demo' || (await source(SITE_PATHS.SITE_STATS)) === 'demo'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    const real = await verify('--site', stack.cfg.siteUrl, '--state', state);
    expect(real.code, real.stderr).toBe(0);
    expect(real.stdout).toContain(`log ${logOrigin(stack.cfg, false)}: checkpoint of 4 entries signed by the log key ${await key(false)} (from the state file ${state})`);
    expect(real.stdout).toMatch(/the demo log seen on \S+ gave way to the real log/);
    expect(JSON.parse(readFileSync(state, 'utf8'))).toMatchObject({ vkey: await key(false), origin: logOrigin(stack.cfg, false), size: 4 });
  }, 240_000);
});
