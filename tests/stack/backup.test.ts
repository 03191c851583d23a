// Backup then restore into an empty database round-trips: identical landing_stats and landing_health.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dump, restore, vaultBackupOf } from '../../stack/backup.ts';
import { withClient } from '../support/db.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

let stack: TestStack;
let dir: string;
beforeAll(async () => {
  stack = await startTestStack({ seedDemo: true });
  dir = mkdtempSync(path.join(tmpdir(), 'backup-'));
});
afterAll(async () => {
  await stack?.destroy();
  rmSync(dir, { recursive: true, force: true });
});

const figures = (url: string, at: string) => withClient(url, async (c) =>
  (await c.query('select stats.stats_at($1) as s, stats.health_at($1) as h, (select count(*)::int from stats.payout_correction) as corrections, (select row_to_json(s) from stats.settings s) as settings', [at])).rows[0]);

describe('backup and restore', () => {
  it('restores into an empty database with identical figures, corrections and settings', async () => {
    const source = stack.db.adminUrl;
    await withClient(source, async (c) => {
      // a correction and a non-default setting, so the audit trail and settings travel too
      await c.query(`update stats.payout set usd = usd + 1 where date = (select max(date) from stats.payout)`);
      await c.query(`update stats.settings set window_days = 10, since_date = (select min(date) + 3 from stats.payout)`);
      await c.query('create database restored');
    });
    const at = new Date().toISOString();
    const file = path.join(dir, 'stats.dump');
    dump(source, file);
    const target = source.replace(/\/postgres$/, '/restored');
    await restore(target, file);
    const [before, after] = [await figures(source, at), await figures(target, at)];
    expect(before.s.daily.length).toBeGreaterThan(0);
    expect(before.corrections).toBe(1);
    expect(after).toEqual(before);
    // The history snapshot is not in the dump; the restore rebuilds it from the restored rows.
    const history = (url: string) => withClient(url, async (c) => (await c.query('select stats.history_at(now()) as h')).rows[0].h);
    const [sourceHistory, restoredHistory] = [await history(source), await history(target)];
    expect(sourceHistory.nights.length).toBeGreaterThan(0);
    expect(restoredHistory.nights).toEqual(sourceHistory.nights);
    expect(await withClient(target, async (c) => (await c.query('select count(*)::int as n from stats.history_snapshot')).rows[0].n)).toBe(1);
    // The transparency log travels whole: the same entries at the same indexes.
    const log = (url: string) => withClient(url, async (c) => (await c.query('select idx, entry, is_demo from stats.log_entry order by idx')).rows);
    expect((await log(source)).length).toBeGreaterThan(0);
    expect(await log(target)).toEqual(await log(source));
  });

  it('puts the openings an older backup carried beside its dump back under the data directory, readable by its owner only', async () => {
    const source = stack.db.adminUrl;
    await withClient(source, (c) => c.query('create database restored_vault'));
    const file = path.join(dir, 'older.dump');
    dump(source, file);
    // The openings are rows of the dump now: no file beside it. An older backup's looked like this.
    expect(existsSync(vaultBackupOf(file))).toBe(false);
    const lines = { 'wallets.jsonl': '{"wallet":"0x00000000000000000000000000000000000000aa"}\n', 'nights.jsonl': '{"date":"2026-03-01"}\n{"date":"2026-03-02"}\n' };
    writeFileSync(vaultBackupOf(file), JSON.stringify(lines), { mode: 0o600 });
    const restoredVault = path.join(dir, 'restored-vault');
    await restore(source.replace(/\/postgres$/, '/restored_vault'), file, restoredVault);
    for (const [name, text] of Object.entries(lines)) {
      expect(readFileSync(path.join(restoredVault, name), 'utf8')).toBe(text);
      expect(statSync(path.join(restoredVault, name)).mode & 0o777).toBe(0o600);
    }
    expect(statSync(restoredVault).mode & 0o777).toBe(0o700);
    // A refused restore (the target holds data now) leaves the openings as they are.
    writeFileSync(path.join(restoredVault, 'nights.jsonl'), '{"date":"2026-03-03"}\n', { mode: 0o600 });
    await expect(restore(source.replace(/\/postgres$/, '/restored_vault'), file, restoredVault)).rejects.toThrow(/holds/);
    expect(readFileSync(path.join(restoredVault, 'nights.jsonl'), 'utf8')).toBe('{"date":"2026-03-03"}\n');
  });

  it('refuses to restore over data, and changes nothing there', async () => {
    const file = path.join(dir, 'stats.dump');
    const target = stack.db.adminUrl.replace(/\/postgres$/, '/restored');
    const at = new Date().toISOString();
    const before = await figures(target, at);
    await expect(restore(target, file)).rejects.toThrow(/^A restore needs a database without data, and this one holds \d+ payout/);
    expect(await figures(target, at)).toEqual(before);
  });

  it('keeps an existing backup when a dump fails, and never shows the password', () => {
    const file = path.join(dir, 'keep.dump');
    writeFileSync(file, 'previous good backup');
    const wrong = new URL(stack.db.adminUrl);
    wrong.password = 'not-the-password-4711';
    let message = '';
    try { dump(wrong.toString(), file); } catch (error) { message = (error as Error).message; }
    expect(message).toMatch(/^pg_dump failed: .*password authentication failed/);
    expect(message).not.toContain('not-the-password-4711');
    expect(readFileSync(file, 'utf8')).toBe('previous good backup');
  });
});
