// Started at boot, for real: systemd itself (this machine's, booted by systemd-nspawn as process 1 of
// a container with a volatile root over the host's /usr and /etc) runs `npm run service -- install`
// once, as an operator would on a fresh server; the service then serves, as its own unprivileged
// user under every hardening setting of the unit. The container is halted, which stops the stack
// cleanly, and booted again: with no command at all, the service comes back by itself, with its data.
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import type { HistoryRecord } from '../../contract/records.ts';
import { ROOT_DIR } from '../../scripts/lib/config.ts';
import { freePort } from '../../scripts/lib/processes.ts';
import { copyCheckout } from '../support/checkout.ts';

/** Where the checkout is inside the container, as an operator's clone would be. */
const CHECKOUT = '/srv';
const { home, app } = copyCheckout(0o755);
// npm's record of what it installed, copied rather than linked: newer than the copied lockfile, so
// the install finds the dependencies up to date.
rmSync(path.join(app, 'node_modules', '.package-lock.json'));
copyFileSync(path.join(ROOT_DIR, 'node_modules', '.package-lock.json'), path.join(app, 'node_modules', '.package-lock.json'));
const etc = path.join(home, 'etc');
const units = path.join(etc, 'systemd', 'system');
const booted: ChildProcess[] = [];
afterAll(() => {
  for (const child of booted) if (child.exitCode === null) killContainer(child);
  rmSync(home, { recursive: true, force: true });
});

/**
 * Ends a container at once: its process 1 first, which takes every process of the container with it
 * (a killed systemd-nspawn would leave its container running, handed to this machine's process 1).
 */
function killContainer(child: ChildProcess): void {
  const inits = readIf(`/proc/${child.pid}/task/${child.pid}/children`).trim().split(/\s+/).filter(Boolean);
  for (const pid of inits) process.kill(Number(pid), 'SIGKILL');
  child.kill('SIGKILL');
}

/** The container's console, without its colours. */
const consoles: string[] = [];
const plain = (text: string) => text.replace(/\x1b\[[0-9;]*m/g, '');

/** Boots the container: the machine's systemd as its process 1, sharing this machine's network. */
function boot(): { child: ChildProcess; console: () => string } {
  const child = spawn('systemd-nspawn', [
    '--directory=/', '--volatile=yes', '--machine=public-stats-boot', '--register=no', '--keep-unit', '--console=read-only',
    `--bind=${app}:${CHECKOUT}`, `--overlay=/etc:${etc}:/etc`, '--boot', '--', 'systemd.firstboot=off',
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  booted.push(child);
  const index = consoles.push('') - 1;
  for (const stream of [child.stdout!, child.stderr!]) stream.on('data', (chunk: Buffer) => { consoles[index] += plain(chunk.toString()); });
  return { child, console: () => consoles[index]! };
}

/** Halts the container as a shutdown does (SIGTERM to systemd-nspawn); its exit code. */
async function halt(child: ChildProcess): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  return exited;
}

/** The status of GET `url`, or 0 while nothing answers. */
const statusOf = (url: string, headers: Record<string, string> = {}) =>
  fetch(url, { headers, signal: AbortSignal.timeout(2000) }).then((res) => res.status, () => 0);

/** Waits (at most `seconds`) until `url` answers 200; says what the console showed if it never does. */
async function serving(url: string, container: ReturnType<typeof boot>, seconds: number): Promise<void> {
  for (const deadline = Date.now() + seconds * 1000; Date.now() < deadline; await sleep(500)) {
    if (container.child.exitCode !== null) throw new Error(`the container stopped (${container.child.exitCode}):\n${container.console()}`);
    if ((await statusOf(url)) === 200) return;
  }
  throw new Error(`${url} did not answer within ${seconds} s; the console:\n${container.console()}\nthe install:\n${readIf(path.join(app, 'install.log'))}`);
}

const readIf = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8') : '(none)');

/** The user id `name` has in the container's /etc/passwd (the overlay's upper layer holds what useradd wrote). */
const uidIn = (name: string) => Number(new RegExp(`^${name}:[^:]*:(\\d+):`, 'm').exec(readFileSync(path.join(etc, 'passwd'), 'utf8'))?.[1]);
/** The owner of a running process. */
const uidOf = (pid: number) => Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
/** The service's nginx master, as this machine numbers it (its pid file holds the container's number). */
function nginxMaster(): number {
  const masters = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).filter((pid) => {
    const cmdline = readIf(`/proc/${pid}/cmdline`).replaceAll('\0', ' ');
    return cmdline.startsWith('nginx: master process') && cmdline.includes(` -p ${CHECKOUT}/.data/nginx`);
  });
  expect(masters).toHaveLength(1);
  return Number(masters[0]);
}

describe('started at boot by systemd', () => {
  it('installs with `npm run service -- install`, serves as its own user, stops cleanly at shutdown and comes back at the next boot by itself', async () => {
    const ports = ['SITE_PORT', 'API_PORT', 'EDGE_PORT', 'POSTGREST_PORT', 'POSTGREST_ADMIN_PORT', 'POSTGRES_PORT'];
    const chosen = Object.fromEntries(await Promise.all(ports.map(async (name) => [name, await freePort()] as const)));
    writeFileSync(path.join(app, '.env'), `${Object.entries(chosen).map(([name, port]) => `${name}=${port}`).join('\n')}\n`);
    const site = `http://127.0.0.1:${chosen.SITE_PORT}`;
    // The operator's one command, run once by a unit of the test's own at the first boot; the
    // machine's own database and web server, which the stack does not use, are kept from starting.
    mkdirSync(path.join(units, 'multi-user.target.wants'), { recursive: true });
    writeFileSync(path.join(units, 'operator.service'), [
      '[Unit]', 'Description=The operator: npm run service -- install', 'After=network-online.target',
      '[Service]', 'Type=oneshot', `WorkingDirectory=${CHECKOUT}`, 'Environment=HOME=/root',
      'ExecStart=/usr/bin/npm run service -- install', `StandardOutput=file:${CHECKOUT}/install.log`, 'StandardError=inherit', '',
    ].join('\n'));
    const operator = path.join(units, 'multi-user.target.wants', 'operator.service');
    symlinkSync('../operator.service', operator);
    for (const unit of ['nginx.service', 'postgresql.service', 'postgresql@.service']) symlinkSync('/dev/null', path.join(units, unit));

    const first = boot();
    await serving(`${site}/api/stats`, first, 300);
    expect(readIf(path.join(app, 'install.log'))).toContain('Enabled and started public-stats.service');
    expect(readlinkSync(path.join(units, 'multi-user.target.wants', 'public-stats.service'))).toBe('/etc/systemd/system/public-stats.service');
    const user = uidIn('public-stats');
    expect(user).toBeGreaterThan(0);
    const firstMaster = nginxMaster();
    expect(uidOf(firstMaster)).toBe(user);
    const before = await (await fetch(`${site}/api/history`)).json() as Pick<HistoryRecord, 'since_date' | 'nights'>;
    expect(before.nights.length).toBeGreaterThan(0);

    // A shutdown stops the stack first: its database is shut down cleanly (no postmaster.pid left).
    expect(await halt(first.child)).toBe(0);
    expect(first.console()).toMatch(/Stopped .*public-stats/);
    expect(existsSync(path.join(app, '.data', 'postgres', 'postmaster.pid'))).toBe(false);
    expect(await statusOf(`${site}/api/stats`)).toBe(0);

    // The next boot runs no command of the operator's: only what the install enabled.
    rmSync(operator);
    const second = boot();
    await serving(`${site}/api/stats`, second, 300);
    const secondMaster = nginxMaster();
    expect(secondMaster).not.toBe(firstMaster);
    expect(uidOf(secondMaster)).toBe(user);
    const after = await (await fetch(`${site}/api/history`)).json() as Pick<HistoryRecord, 'since_date' | 'nights'>;
    expect(after.since_date).toBe(before.since_date);
    expect(after.nights.length).toBeGreaterThanOrEqual(before.nights.length);
    expect(await halt(second.child)).toBe(0);
  }, 900_000);
});
