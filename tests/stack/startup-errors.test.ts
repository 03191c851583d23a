// Start-up and the command lines stop with one sentence saying what to do, never a stack trace, and
// leave nothing behind.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { migrate } from '../../stack/migrations.ts';
import { ROOT_DIR } from '../../config/checkout.ts';
import { freePort, startChild, waitUntil } from '../../stack/processes.ts';
import { withClient } from '../support/db.ts';
import { startTestStack } from '../support/stack.ts';

const cleanups: (() => void | Promise<void>)[] = [];

/** A file that exists but cannot be executed, even by root (no execute bit at all). */
function notExecutable(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'not-executable-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'nginx');
  writeFileSync(file, 'not a program\n', { mode: 0o644 });
  return file;
}
afterEach(async () => { for (const c of cleanups.splice(0)) await c(); });

describe('start-up errors', () => {
  it('names a port already in use and the variable that moves it', async () => {
    const port = await freePort();
    const blocker = net.createServer().listen(port, '127.0.0.1');
    cleanups.push(() => { blocker.close(); });
    await new Promise((r) => blocker.once('listening', r));
    await expect(startTestStack({ env: { API_PORT: String(port) } })).rejects.toThrow(
      new RegExp(`^Port ${port} \\(API host\\) is already in use: stop whatever holds it or set API_PORT to a free port in \\.env\\.`));
  });

  it('says how to install nginx when there is none', async () => {
    await expect(startTestStack({ env: { NGINX_BIN: '/nonexistent/nginx' } })).rejects.toThrow(/^NGINX_BIN names \/nonexistent\/nginx, which does not exist: point it at an nginx binary/);
  });

  it('names a binary that cannot be run, and what to do', async () => {
    const file = notExecutable();
    const child = startChild('probe', file, [], { log: () => {} });
    await expect(waitUntil('probe', async () => false, 5000, child)).rejects.toThrow(
      new RegExp(`^probe could not be started \\(${file}: permission is denied\\): reinstall the dependencies with \`npm ci\`, or check that the file is executable\\.$`));
    await expect(startTestStack({ env: { NGINX_BIN: file } })).rejects.toThrow(new RegExp(`^NGINX_BIN names ${file}, which is not executable: point it at an nginx binary`));
  });

  it('npm start and the writer say what failed in one line, without a stack trace', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'one-line-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    chmodSync(dir, 0o755);
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, ENV_FILE: path.join(dir, 'env'), DATA_DIR: dir, NGINX_BIN: notExecutable(), WRITER_SOURCE: 'none' };
    const start = spawnSync(process.execPath, [path.join(ROOT_DIR, 'stack', 'start.ts')], { cwd: ROOT_DIR, env, encoding: 'utf8', timeout: 60_000 });
    expect(start.status).toBe(1);
    expect(start.stderr.trim()).toMatch(new RegExp(`^Start-up failed: NGINX_BIN names ${env.NGINX_BIN}, which is not executable: .*\\.$`));
    const importMissing = spawnSync(process.execPath, [path.join(ROOT_DIR, 'writer', 'cli.ts'), 'import', path.join(dir, 'missing.ndjson')],
      { cwd: ROOT_DIR, env, encoding: 'utf8', timeout: 30_000 });
    expect(importMissing.status).toBe(1);
    const lines = (importMissing.stdout + importMissing.stderr).trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!).msg).toBe(`import: cannot read ${path.join(dir, 'missing.ndjson')} (there is no such file): give the path of an NDJSON file, or - to read standard input.`);
    for (const out of [start.stdout, start.stderr, importMissing.stderr]) expect(out).not.toMatch(/^\s+at /m);
  }, 60_000);

  it('reports a failed migration in one sentence and applies none of it', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'bad-migrations-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, '1900000000000_broken.sql'), '-- Up Migration\ncreate table stats.half_done (a int);\nselect * from no_such_table;\n');
    const { adminUrl } = inject('stack');
    // Run against a scratch database so the shared one keeps its migration history.
    await withClient(adminUrl, (c) => c.query('create database migration_probe'));
    cleanups.push(() => withClient(adminUrl, (c) => c.query('drop database migration_probe')).then(() => undefined));
    const probeUrl = adminUrl.replace(/\/postgres$/, '/migration_probe');
    await withClient(probeUrl, (c) => c.query('create schema stats'));
    await expect(migrate(probeUrl, () => {}, dir)).rejects.toThrow(
      /^A migration failed \(relation "no_such_table" does not exist\); nothing of it was applied\. Fix the SQL under supabase\/migrations and start again\.$/);
    const left = await withClient(probeUrl, (c) => c.query(`select to_regclass('stats.half_done') as t`));
    expect(left.rows[0].t).toBeNull();
  });
});
