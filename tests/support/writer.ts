// Shared pieces of the writer tests: running the CLI as a child process against a test stack, and
// reading landing_stats as it stands.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT_DIR } from '../../config/checkout.ts';
import type { Env } from '../../config/settings.ts';
import { logSignerEnv } from '../../stack/stack.ts';
import { query } from './db.ts';
import type { TestStack } from './stack.ts';

/** What `npm run writer` runs (package.json): node, its flags and the CLI. */
export const WRITER_COMMAND = (JSON.parse(readFileSync(path.join(ROOT_DIR, 'package.json'), 'utf8')) as { scripts: { writer: string } }).scripts.writer.split(' ');

/**
 * The environment `npm run writer` would see for this stack: the same variables `npm start` reads
 * (so the CLI derives the writer role's connection itself). Writer variables a developer's .env
 * might hold are blanked, so only what a test sets counts.
 */
export function cliEnv(stack: TestStack, extra: Env = {}): Env {
  const { cfg } = stack;
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    JWT_SECRET: cfg.JWT_SECRET,
    ANON_KEY: cfg.ANON_KEY,
    AUTHENTICATOR_PASSWORD: cfg.AUTHENTICATOR_PASSWORD,
    WRITER_DB_PASSWORD: cfg.WRITER_DB_PASSWORD,
    POSTGRES_PASSWORD: cfg.POSTGRES_PASSWORD,
    HTTP_SIG_PRIVATE_KEY: cfg.HTTP_SIG_PRIVATE_KEY,
    ...logSignerEnv(cfg),
    // The key the writer seals the openings of its commitments under, in the stack's database.
    OPENINGS_KEY: cfg.OPENINGS_KEY,
    BIND_HOST: cfg.bindHost,
    // Anything the writer keeps on disk goes under the stack's data directory, never the checkout's.
    DATA_DIR: cfg.dataDir,
    POSTGRES_PORT: String(cfg.postgresPort),
    DATABASE_URL: '',
    WRITER_DATABASE_URL: '',
    CLOB_API_KEY: '',
    WRITER_SOURCE: 'none',
    ...extra,
  };
}

export interface CliRun { code: number | null; stdout: string; stderr: string; lines: Record<string, unknown>[] }

export function startCli(args: string[], env: Env): { child: ChildProcess; result: Promise<CliRun>; stdout: () => string } {
  const child = spawn(process.execPath, [...WRITER_COMMAND.slice(1), ...args], { cwd: ROOT_DIR, env: env as NodeJS.ProcessEnv, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => { stdout += c.toString(); });
  child.stderr!.on('data', (c: Buffer) => { stderr += c.toString(); });
  const result = new Promise<CliRun>((resolve) => {
    child.on('close', (code) => {
      const lines = stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
      resolve({ code, stdout, stderr, lines });
    });
  });
  return { child, result, stdout: () => stdout };
}

export async function runCli(args: string[], env: Env, stdin?: string): Promise<CliRun> {
  const run = startCli(args, env);
  run.child.stdin!.end(stdin ?? '');
  return run.result;
}

/** landing_stats as computed now, read through SQL (the API host's microcache could answer from before a write). */
export async function landingStats(stack: TestStack): Promise<Record<string, any>> {
  const [row] = await query<{ stats: Record<string, any> }>(stack.db.adminUrl, 'select stats.stats_at(now()) as stats');
  return row!.stats;
}

/** landing_stats through the API host with the anon key, as a client sees it. */
export async function landingStatsViaApi(stack: TestStack): Promise<Record<string, any>> {
  const res = await fetch(`${stack.cfg.apiUrl}/rest/v1/rpc/landing_stats`, { headers: { apikey: stack.cfg.ANON_KEY } });
  if (res.status !== 200) throw new Error(`landing_stats answered ${res.status}: ${await res.text()}`);
  return res.json() as Promise<Record<string, any>>;
}

/** Waits until `probe` gives something truthy, asking every 100 ms; fails naming `what` after `timeoutMs`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A writer's `run` as a child process (named WRITER_NAME unless undefined), with its JSON log lines. */
export type WriterRun = ReturnType<typeof startCli> & { name: string; lines: () => Record<string, any>[] };

export function startWriterRun(name: string | undefined, env: Env): WriterRun {
  const run = startCli(['run'], { ...env, ...(name ? { WRITER_NAME: name } : {}) });
  run.child.stdin!.end();
  const lines = () => run.stdout().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, any>);
  return Object.assign(run, { name: name ?? '', lines });
}
