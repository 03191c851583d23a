// Start-up stops with one sentence saying what to do (issue 2 §8), and leaves nothing behind.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { migrate } from '../scripts/lib/database.ts';
import { freePort } from '../scripts/lib/processes.ts';
import { withClient } from './support/db.ts';
import { startTestStack } from './support/stack.ts';

const cleanups: (() => void | Promise<void>)[] = [];
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
    process.env.NGINX_BIN = '/nonexistent/nginx';
    cleanups.push(() => { delete process.env.NGINX_BIN; });
    await expect(startTestStack()).rejects.toThrow(/^NGINX_BIN names \/nonexistent\/nginx, which does not exist: point it at an nginx binary/);
  });

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
      /^A migration failed \(relation "no_such_table" does not exist\); nothing of it was applied\. Fix the SQL under sql\/migrations and start again\.$/);
    const left = await withClient(probeUrl, (c) => c.query(`select to_regclass('stats.half_done') as t`));
    expect(left.rows[0].t).toBeNull();
  });
});
