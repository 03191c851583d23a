// Started at boot, for real: systemd itself (this machine's, booted by systemd-nspawn as process 1 of
// a container with a volatile root over the host's /usr and /etc, sharing this machine's network)
// runs `npm run service -- install` once, as an operator would on a fresh server with two names and a
// certificate of their own; the service then serves both names over HTTPS on port 443 and redirects
// on port 80, as its own unprivileged user under every hardening setting of the unit, with no other
// public port. The container is halted, which stops the stack cleanly, and booted again: with no
// command at all, the service comes back by itself, with its data.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import type { HistoryRecord } from '../../contract/records.ts';
import { ROOT_DIR } from '../../config/checkout.ts';
import { freePort } from '../../stack/processes.ts';
import { copyCheckout } from '../support/checkout.ts';
import { dial, uidOf } from '../support/stack.ts';

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

const SITE_HOST = 'stats.example.test';
const API_HOST = 'api.stats.example.test';

interface Answer { status: number; location?: string; body: string }

/** GET `pathname` of `host` on this machine's port 443 (trusting `ca`) or, with `plain`, its port 80; status 0 while nothing answers. */
function ask(host: string, pathname: string, ca: string, plain = false, headers: Record<string, string> = {}): Promise<Answer> {
  const options = { host: '127.0.0.1', servername: host, ca, path: pathname, headers: { host, ...headers }, timeout: 2000 };
  return new Promise((resolve) => {
    const request = (plain ? http.get : https.get)(plain ? { ...options, port: 80 } : { ...options, port: 443 }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => { body += chunk.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, location: res.headers.location, body }));
    });
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', () => resolve({ status: 0, body: '' }));
  });
}

/** Waits (at most `seconds`) until the site answers /api/stats over HTTPS; says what the console showed if it never does. */
async function serving(ca: string, container: ReturnType<typeof boot>, seconds: number): Promise<void> {
  for (const deadline = Date.now() + seconds * 1000; Date.now() < deadline; await sleep(500)) {
    if (container.child.exitCode !== null) throw new Error(`the container stopped (${container.child.exitCode}):\n${container.console()}`);
    if ((await ask(SITE_HOST, '/api/stats', ca)).status === 200) return;
  }
  throw new Error(`https://${SITE_HOST}/api/stats did not answer within ${seconds} s; the console:\n${container.console()}\nthe install:\n${readIf(path.join(app, 'install.log'))}`);
}


const readIf = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8') : '(none)');

/** The user id `name` has in the container's /etc/passwd (the overlay's upper layer holds what useradd wrote). */
const uidIn = (name: string) => Number(new RegExp(`^${name}:[^:]*:(\\d+):`, 'm').exec(readFileSync(path.join(etc, 'passwd'), 'utf8'))?.[1]);
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
  it('installs with `npm run service -- install`, serves both names over HTTPS as its own user, stops cleanly at shutdown and comes back at the next boot by itself', async () => {
    // Ports 443 and 80 of this machine: the container shares its network.
    expect([await dial(443), await dial(80)], 'ports 443 and 80 must be free for this test').toEqual(['ECONNREFUSED', 'ECONNREFUSED']);
    const ports = ['SITE_PORT', 'API_PORT', 'EDGE_PORT', 'POSTGREST_PORT', 'POSTGREST_ADMIN_PORT', 'POSTGRES_PORT'];
    const chosen = Object.fromEntries(await Promise.all(ports.map(async (name) => [name, await freePort()] as const)));
    // The operator's certificate for both names, readable by the service's user.
    const tls = path.join(app, 'own-tls');
    mkdirSync(tls);
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem',
      '-days', '30', '-subj', `/CN=${SITE_HOST}`, '-addext', `subjectAltName=DNS:${SITE_HOST},DNS:${API_HOST}`], { cwd: tls, stdio: 'ignore' });
    chmodSync(path.join(tls, 'key.pem'), 0o644);
    const ca = readFileSync(path.join(tls, 'cert.pem'), 'utf8');
    writeFileSync(path.join(app, '.env'), [
      `SITE_URL=https://${SITE_HOST}`, `API_URL=https://${API_HOST}`,
      `TLS_CERT_FILE=${CHECKOUT}/own-tls/cert.pem`, `TLS_KEY_FILE=${CHECKOUT}/own-tls/key.pem`,
      ...Object.entries(chosen).map(([name, port]) => `${name}=${port}`), '',
    ].join('\n'));
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
    await serving(ca, first, 300);
    expect(readIf(path.join(app, 'install.log'))).toContain('Enabled and started public-stats.service');
    expect(readlinkSync(path.join(units, 'multi-user.target.wants', 'public-stats.service'))).toBe('/etc/systemd/system/public-stats.service');
    // The unit gives its user the one capability ports below 1024 take, and nothing more.
    const unit = readFileSync(path.join(units, 'public-stats.service'), 'utf8');
    expect(unit).toMatch(/^AmbientCapabilities=CAP_NET_BIND_SERVICE$/m);
    expect(unit).toMatch(/^CapabilityBoundingSet=CAP_NET_BIND_SERVICE$/m);
    const user = uidIn('public-stats');
    expect(user).toBeGreaterThan(0);
    const firstMaster = nginxMaster();
    expect(uidOf(firstMaster)).toBe(user);
    // Both names over HTTPS; port 80 redirects; nginx opens no other port.
    const api = await ask(API_HOST, '/rest/v1/rpc/landing_health', ca, false, { apikey: readEnv('ANON_KEY') });
    expect(api.status).toBe(200);
    expect(await ask(SITE_HOST, '/api/stats?x=1', ca, true)).toMatchObject({ status: 301, location: `https://${SITE_HOST}/api/stats?x=1` });
    expect([await dial(chosen.SITE_PORT!), await dial(chosen.API_PORT!)]).toEqual(['ECONNREFUSED', 'ECONNREFUSED']);
    const before = JSON.parse((await ask(SITE_HOST, '/api/history', ca)).body) as Pick<HistoryRecord, 'since_date' | 'nights'>;
    expect(before.nights.length).toBeGreaterThan(0);

    // A shutdown stops the stack first: its database is shut down cleanly (no postmaster.pid left).
    expect(await halt(first.child)).toBe(0);
    expect(first.console()).toMatch(/Stopped .*public-stats/);
    expect(existsSync(path.join(app, '.data', 'postgres', 'postmaster.pid'))).toBe(false);
    expect((await ask(SITE_HOST, '/api/stats', ca)).status).toBe(0);

    // The next boot runs no command of the operator's: only what the install enabled.
    rmSync(operator);
    const second = boot();
    await serving(ca, second, 300);
    const secondMaster = nginxMaster();
    expect(secondMaster).not.toBe(firstMaster);
    expect(uidOf(secondMaster)).toBe(user);
    const after = JSON.parse((await ask(SITE_HOST, '/api/history', ca)).body) as Pick<HistoryRecord, 'since_date' | 'nights'>;
    expect(after.since_date).toBe(before.since_date);
    expect(after.nights.length).toBeGreaterThanOrEqual(before.nights.length);
    expect(await halt(second.child)).toBe(0);
  }, 900_000);
});

/** A setting of the checkout's .env (the install generated the secrets into it). */
function readEnv(name: string): string {
  return new RegExp(`^${name}=(.*)$`, 'm').exec(readFileSync(path.join(app, '.env'), 'utf8'))?.[1] ?? '';
}
