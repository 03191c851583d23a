// The demo source, the CLI's help and status, and `npm start` running the writer beside the stack.
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, todayUtc } from '../../contract/dates.ts';
import { DEMO_TABLES } from '../../contract/tables.ts';
import { ROOT_DIR } from '../../config/checkout.ts';
import { freePort } from '../../stack/processes.ts';
import { EVENT_TYPES } from '../../writer/events.ts';
import { query, totalRows } from '../support/db.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { cliEnv, landingStats, runCli } from '../support/writer.ts';

let stack: TestStack;
const today = todayUtc();
const demoRows = async () => ({
  demo: await totalRows(stack.db.adminUrl, DEMO_TABLES, 'is_demo'),
  real: await totalRows(stack.db.adminUrl, DEMO_TABLES, 'not is_demo'),
});

beforeAll(async () => {
  stack = await startTestStack({ seedDemo: true });
});
afterAll(async () => {
  await stack?.destroy();
});

describe('the demo source', () => {
  it('seeds an empty database with a marked, plausible history', async () => {
    const stats = await landingStats(stack);
    expect(stats.data_source).toBe('demo');
    expect(stats.daily).toHaveLength(16);
    expect(stats.daily.at(-1).date).toBe(today);
    expect(stats.last_night_usd).toBeGreaterThan(0);
    expect(stats.capital.positions).toBeGreaterThan(0);
    expect(stats.returns.trading_costs_usd).toBeGreaterThan(0);
    expect((await demoRows()).real).toBe(0);
    const [health] = await query<{ h: any }>(stack.db.adminUrl, 'select stats.health_at(now()) as h');
    expect(health!.h.writer.alive).toBe(true);
  });

  it('keeps the service alive with `once`, writing demo rows only and changing no settled night', async () => {
    const before = await query(stack.db.adminUrl, 'select date, usd::text, updated_at from stats.payout order by date');
    const accruals = Number((await query<{ n: number }>(stack.db.adminUrl, 'select count(*) as n from stats.accrual'))[0]!.n);
    const run = await runCli(['once'], cliEnv(stack, { WRITER_SOURCE: 'demo' }));
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(await query(stack.db.adminUrl, 'select date, usd::text, updated_at from stats.payout order by date')).toEqual(before);
    expect(Number((await query<{ n: number }>(stack.db.adminUrl, 'select count(*) as n from stats.accrual'))[0]!.n)).toBe(accruals + 1);
    expect((await demoRows()).real).toBe(0);
    expect((await landingStats(stack)).data_source).toBe('demo');
  });

  it('reports what the database holds with `status`', async () => {
    const run = await runCli(['status'], cliEnv(stack));
    expect(run.code, run.stderr).toBe(0);
    const status = JSON.parse(run.stdout);
    expect(status.data_source).toBe('demo'); // as landing_stats reports it
    expect(Object.keys(status.tables).sort()).toEqual([...EVENT_TYPES].sort()); // a line for each kind of event
    expect(status.tables.payout).toMatchObject({ rows: 45, demo_rows: 45, latest: today });
    expect(status.tables.heartbeat.rows).toBeGreaterThanOrEqual(2);
    expect(status.corrections).toBe(0);
  });

  it('stops, and says so, once real data exists; it writes nothing more', async () => {
    const imported = await runCli(['import', '-'], cliEnv(stack), JSON.stringify({ type: 'payout', date: addDays(today, -1), usd: 12 }) + '\n');
    expect(imported.code, imported.stdout).toBe(0);
    expect(await demoRows()).toEqual({ demo: 0, real: 1 });

    const once = await runCli(['once'], cliEnv(stack, { WRITER_SOURCE: 'demo' }));
    expect(once.code).toBe(1);
    expect(once.stdout).toMatch(/holds real data, so the demo source writes nothing/);
    const run = await runCli(['run'], cliEnv(stack, { WRITER_SOURCE: 'demo' }));
    expect(run.code).toBe(0);
    expect(run.lines.map((l) => l.msg)).toContain('real data is present: the demo source stops here');
    expect(await demoRows()).toEqual({ demo: 0, real: 1 });
    expect((await landingStats(stack)).data_source).toBe('import');
  });
});

describe('the CLI', () => {
  it('explains every command with --help', async () => {
    const commands = ['run', 'once', 'import', 'backfill', 'status'];
    const runs = await Promise.all(commands.map((command) => runCli([command, '--help'], {})));
    runs.forEach((run, i) => {
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(`Usage: npm run writer -- ${commands[i]}`);
    });
  });

  it('rejects an unknown command and a backfill without --since with usage', async () => {
    const [unknown, noSince] = await Promise.all([runCli(['frobnicate'], {}), runCli(['backfill'], {})]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/Unknown command "frobnicate"[\s\S]*Commands:/);
    expect(noSince.code).toBe(2);
    expect(noSince.stderr).toContain('backfill needs --since YYYY-MM-DD.');
  });
});

describe('npm start', () => {
  it('runs the demo writer beside the stack and leaves no process behind on SIGTERM', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'writer-start-'));
    chmodSync(dir, 0o755);
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ENV_FILE: path.join(dir, 'env'), DATA_DIR: dir, NGINX_WORKERS: '1' };
    for (const name of ['API_PORT', 'SITE_PORT', 'EDGE_PORT', 'POSTGREST_PORT', 'POSTGREST_ADMIN_PORT', 'POSTGRES_PORT']) env[name] = String(await freePort());
    const child = spawn(process.execPath, [path.join(ROOT_DIR, 'stack', 'start.ts')], { cwd: ROOT_DIR, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => { out += c.toString(); });
    child.stderr.on('data', (c: Buffer) => { out += c.toString(); });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      for (let i = 0; i < 600 && !/\[writer\].*cycle done/.test(out); i++) {
        if (child.exitCode !== null) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(out, out).toMatch(/writer\s+source demo/);
      expect(out).toMatch(/\[writer\].*cycle done/);
      // Before any real data, on a loopback SITE_URL with no LOG_ORIGIN: the banner says the log's name is not fixed yet, and how to choose it.
      expect(out.replace(/\s+/g, ' ')).toContain(`The transparency log's name is not fixed yet: its first real checkpoint will fix it as 127.0.0.1:${env.SITE_PORT}/log, ` +
        `made from SITE_URL http://127.0.0.1:${env.SITE_PORT}, and the log keeps it for good, also after the site moves. To name the log after the address it will have, set LOG_ORIGIN in .env`);
      const anonKey = /anon key\s+(\S+)/.exec(out)![1]!;
      const res = await fetch(`http://127.0.0.1:${env.API_PORT}/rest/v1/rpc/landing_stats`, { headers: { apikey: anonKey } });
      const stats = await res.json() as Record<string, any>;
      expect(stats.data_source).toBe('demo');
      expect(stats.daily).toHaveLength(16);
      const health = await (await fetch(`http://127.0.0.1:${env.API_PORT}/rest/v1/rpc/landing_health`, { headers: { apikey: anonKey } })).json() as Record<string, any>;
      expect(health.writer.alive).toBe(true);
    } finally {
      child.kill('SIGTERM');
      expect(await exited, out).toBe(0);
      // Nothing the start launched (Postgres under DATA_DIR, PostgREST, nginx with its prefix there) is left.
      const left = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' }).split('\n').filter((l) => l.includes(dir));
      rmSync(dir, { recursive: true, force: true });
      expect(left).toEqual([]);
    }
  }, 90_000);
});
