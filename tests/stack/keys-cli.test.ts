// `npm run keys` as a user types it: --help and a mistyped option change nothing; without an option it
// writes the missing secrets once and never overwrites them.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../config/checkout.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'keys-cli-'));
const envFile = path.join(dir, '.env');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const keys = (...args: string[]) => spawnSync(process.execPath, [path.join(ROOT_DIR, 'stack', 'keys.ts'), ...args], {
  env: { ...process.env, ENV_FILE: envFile }, encoding: 'utf8',
});

describe('npm run keys', () => {
  it('prints its help for --help and writes nothing', () => {
    const run = keys('--help');
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('--rotate-signing-key');
    expect(existsSync(envFile)).toBe(false);
  });

  it('refuses an unknown option with its usage and writes nothing', () => {
    const run = keys('--rotate-anon');
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/Unknown option '--rotate-anon'/);
    expect(run.stderr).toContain('Nothing was written.');
    expect(existsSync(envFile)).toBe(false);
  });

  it('writes the missing keys once, then leaves them', () => {
    const first = keys();
    expect(first.status).toBe(0);
    expect(first.stdout).toMatch(/^Wrote .*ANON_KEY/);
    const written = readFileSync(envFile, 'utf8');
    const second = keys();
    expect(second.stdout).toContain('already holds every key');
    expect(readFileSync(envFile, 'utf8')).toBe(written);
  });
});
