// `npm run NAME -- --help` for every script of package.json, as a new user tries them: each prints its
// usage on stdout, naming itself as the user types it, says nothing on stderr, exits 0 and does nothing
// else: no file written or touched, no .env, no data directory, no scratch file, no install, no
// database (DATABASE_URL names a closed port, so a command that connects fails). The commands run in a
// copy of the checkout, without its bundles, .env or data, as a fresh clone is: there any file a command
// writes or touches shows, whoever else works in the checkout meanwhile.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../config/checkout.ts';
import { freePort } from '../stack/processes.ts';
import { copyCheckout } from './support/checkout.ts';

const SCRIPTS = (JSON.parse(readFileSync(path.join(ROOT_DIR, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
const NAMES = Object.keys(SCRIPTS);

/**
 * The scripts that are a tool's own command line: their help is the tool's, which names the tool.
 * Every other script prints a first line `Usage: npm run NAME` (`npm start`, `npm test`).
 */
const TOOLS: Record<string, { command: RegExp; usage: RegExp }> = {
  test: { command: /\bvitest run$/, usage: /^Usage:\n {2}\$ vitest run\b/m },
  typecheck: { command: /^tsc\b/, usage: /^tsc: The TypeScript Compiler\b/ },
};

/** How a user types the script: npm's own commands for start and test. */
const typed = (name: string) => (name === 'start' || name === 'test' ? `npm ${name}` : `npm run ${name}`);
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** At most this many commands at once: npm and Node start slowly on a small machine. */
const AT_ONCE = 4;

interface Run { code: number | null; stdout: string; stderr: string }

function npmRun(name: string, cwd: string, env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', name, '--', '--help'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
    child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
    // A command that ignores --help and starts its work is stopped here, and fails below.
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}

/** Every file and folder under `dir` with its size and modification time; node_modules by its lock file only. */
function snapshot(dir: string): Map<string, string> {
  const seen = new Map<string, string>();
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const full = path.join(at, entry.name);
      const rel = path.relative(dir, full);
      if (rel === 'node_modules') {
        // npm ci rewrites it; the packages themselves are too many to stat on every run.
        seen.set('node_modules/.package-lock.json', String(statSync(path.join(full, '.package-lock.json')).mtimeMs));
        continue;
      }
      const stat = statSync(full);
      seen.set(rel, entry.isDirectory() ? `folder, modified ${stat.mtimeMs}` : `${stat.size} bytes, modified ${stat.mtimeMs}`);
      if (entry.isDirectory()) walk(full);
    }
  };
  walk(dir);
  return seen;
}

/** What differs between two snapshots, one line a path. */
function changes(before: Map<string, string>, after: Map<string, string>): string[] {
  const lines: string[] = [];
  for (const [rel, was] of before) if (after.get(rel) !== was) lines.push(`${rel}: ${was} → ${after.get(rel) ?? 'gone'}`);
  for (const [rel, now] of after) if (!before.has(rel)) lines.push(`${rel}: new (${now})`);
  return lines;
}

describe('every npm script answers --help', () => {
  let home: string;
  let app: string;
  let scratch: string;
  let changed: string[];
  const runs = new Map<string, Run>();

  beforeAll(async () => {
    ({ home, app } = copyCheckout());
    scratch = mkdtempSync(path.join(tmpdir(), 'help-'));
    for (const dir of ['data', 'tmp']) mkdirSync(path.join(scratch, dir));
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? home,
      ENV_FILE: path.join(scratch, 'absent.env'),
      DATA_DIR: path.join(scratch, 'data'),
      TMPDIR: path.join(scratch, 'tmp'),
      // npm turns Node's compile cache on for itself, under TMPDIR: off, so what lands there is a command's.
      NODE_DISABLE_COMPILE_CACHE: '1',
      // Nothing listens there: a command that connects fails instead of finding a database.
      DATABASE_URL: `postgres://help:help@127.0.0.1:${await freePort()}/help`,
    };
    const before = snapshot(app);
    const queue = [...NAMES];
    await Promise.all(Array.from({ length: AT_ONCE }, async () => {
      for (let name = queue.shift(); name !== undefined; name = queue.shift()) runs.set(name, await npmRun(name, app, env));
    }));
    changed = changes(before, snapshot(app));
  }, 300_000);
  afterAll(() => {
    for (const dir of [home, scratch]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it.each(NAMES)('%s: prints its usage on stdout, nothing on stderr, and exits 0', (name) => {
    const run = runs.get(name)!;
    expect(run.stderr, `${typed(name)} -- --help said on stderr`).toBe('');
    expect(run.code, run.stdout).toBe(0);
    const tool = TOOLS[name];
    if (tool) {
      // Only while the script is that tool's command line does its help count.
      expect(SCRIPTS[name]).toMatch(tool.command);
      expect(run.stdout).toMatch(tool.usage);
    } else {
      expect(run.stdout.split('\n')[0]).toMatch(new RegExp(`^Usage: ${escaped(typed(name))}(?: |$)`));
    }
  });

  it('change nothing: no file of the checkout, no .env, no data, no scratch file', () => {
    expect(changed).toEqual([]);
    expect(readdirSync(scratch).sort()).toEqual(['data', 'tmp']);
    expect(readdirSync(path.join(scratch, 'data'))).toEqual([]);
    expect(readdirSync(path.join(scratch, 'tmp'))).toEqual([]);
  });

  it('have no pre- or post- hook, which npm would run before the script sees --help', () => {
    expect(NAMES.filter((name) => /^(pre|post)./.test(name) && NAMES.includes(name.replace(/^(pre|post)/, '')))).toEqual([]);
  });
});
