// `npm start` as root from a checkout that other users cannot enter (as under /root, mode 0700):
// Postgres runs as `postgres` and nginx as `nobody`, so the data must live where they can reach it.
import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultDataDir } from '../../config/checkout.ts';
import { freePort } from '../../stack/processes.ts';
import { copyCheckout } from '../support/checkout.ts';

const isRoot = process.getuid?.() === 0;

async function startOnce(app: string, env: Record<string, string>): Promise<string> {
  const child = spawn(process.execPath, [path.join(app, 'stack', 'start.ts')], { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => { out += c.toString(); });
  child.stderr.on('data', (c: Buffer) => { out += c.toString(); });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const within = <T>(ms: number, what: string, promise: Promise<T>) => Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} took over ${ms / 1000} s; it said:\n${out}`)), ms)),
  ]);
  try {
    for (let i = 0; i < 1200 && !out.includes('is running') && child.exitCode === null; i++) await new Promise((r) => setTimeout(r, 100));
    expect(out, out).toContain('is running');
    const stats = await within(15_000, 'GET /api/stats', fetch(`http://127.0.0.1:${env.SITE_PORT}/api/stats`).then((r) => r.json())) as Record<string, unknown>;
    expect(stats.data_source).toBe('demo');
  } finally {
    child.kill('SIGTERM');
    const code = await within(30_000, 'stopping on SIGTERM', exited).catch((error: Error) => {
      child.kill('SIGKILL');
      throw error;
    });
    expect(code, out).toBe(0);
  }
  return out;
}

describe('a checkout in a private directory', () => {
  it('keeps the data where the unprivileged users reach it, says where, and keeps it across restarts', async () => {
    if (!isRoot) {
      // Not root: nothing drops to another user, so the data stays in the checkout.
      expect(defaultDataDir('/home/someone/app', false)).toBe('/home/someone/app/.data');
      return;
    }
    const { home, app } = copyCheckout(0o700);
    const dataDir = defaultDataDir(app, true);
    expect(dataDir).toMatch(/^\/var\/lib\/public-stats\/app-[0-9a-f]{10}$/);
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: home, NGINX_WORKERS: '1' };
    for (const name of ['API_PORT', 'SITE_PORT', 'EDGE_PORT', 'POSTGREST_PORT', 'POSTGREST_ADMIN_PORT', 'POSTGRES_PORT']) env[name] = String(await freePort());
    try {
      const first = await startOnce(app, env);
      expect(first).toContain(`data in ${dataDir}/postgres`);
      expect(first).toContain('Creating the database cluster');
      expect(existsSync(path.join(dataDir, 'postgres', 'PG_VERSION'))).toBe(true);
      const second = await startOnce(app, env);
      expect(second).toContain(`data in ${dataDir}/postgres`);
      expect(second).not.toContain('Creating the database cluster');
      expect(second).not.toContain('The database was empty');
    } finally {
      rmSync(home, { recursive: true, force: true });
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 240_000);
});
