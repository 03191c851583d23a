// Our own nginx, run from the prefix its configuration is rendered into (nginx-config.ts): found,
// checked, started in the foreground with -p/-c and reloaded. It never touches the system's nginx service.
import { execFileSync } from 'node:child_process';
import { accessSync, chownSync, constants, existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Config } from '../config/config.ts';
import { findBrotliModules, gatewayAddresses, nginxPrefix, renderNginx } from './nginx-config.ts';
import { executableOf, idsOf, startChild, waitUntil, type Child, type Log } from './processes.ts';

/** The nginx binary: `named` (NGINX_BIN) when given, otherwise the first nginx on PATH or in the usual places. */
export function findNginx(named?: string): string {
  if (named) {
    if (!existsSync(named)) throw new Error(`NGINX_BIN names ${named}, which does not exist: point it at an nginx binary, or unset it to use the one on PATH.`);
    try {
      accessSync(named, constants.X_OK);
    } catch {
      throw new Error(`NGINX_BIN names ${named}, which is not executable: point it at an nginx binary, or unset it to use the one on PATH.`);
    }
    return named;
  }
  for (const dir of [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/usr/local/sbin', '/usr/local/nginx/sbin']) {
    const candidate = path.join(dir, 'nginx');
    if (dir && existsSync(candidate)) return candidate;
  }
  throw new Error('nginx is not installed: install it (Debian/Ubuntu: `apt-get install -y nginx`) and start again.');
}

/**
 * Asks the running nginx of this data directory to load its configuration again: new workers take
 * the new certificate while the old ones finish what they serve (SIGHUP,
 * https://nginx.org/en/docs/control.html#reconfiguration), so no request is refused or cut.
 */
export function reloadNginx(cfg: Config): void {
  const pid = runningNginx(cfg);
  if (pid === undefined) throw new Error(`nginx is not running from ${cfg.dataDir}: start the service with \`npm start\`.`);
  process.kill(pid, 'SIGHUP');
}

/** The master of this data directory's nginx, if it runs (its pid file names a live nginx: never a reused process id). */
export function runningNginx(cfg: Config): number | undefined {
  const pidFile = path.join(nginxPrefix(cfg), 'nginx.pid');
  const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').trim()) : NaN;
  return Number.isInteger(pid) && path.basename(executableOf(pid) ?? '') === 'nginx' ? pid : undefined;
}

/** The user nginx (and, with HTTPS, the ACME client) runs as when the stack runs as root. */
export const NGINX_USER = 'nobody';

/** Hands `dir` and everything under it to `ids`. */
export function chownTree(dir: string, { uid, gid }: { uid: number; gid: number }): void {
  chownSync(dir, uid, gid);
  if (statSync(dir).isDirectory()) for (const entry of readdirSync(dir)) chownTree(path.join(dir, entry), { uid, gid });
}

/** As root, nginx runs as `nobody`, which then owns its prefix; otherwise as the current user. */
function unprivilegedIds(prefix: string): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const ids = idsOf(NGINX_USER);
  chownTree(prefix, ids);
  return ids;
}

/** The lowest port an unprivileged process may bind (Linux: net.ipv4.ip_unprivileged_port_start, 1024 by default). */
function unprivilegedPortStart(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_unprivileged_port_start', 'utf8').trim());
  } catch {
    return 1024;
  }
}

/** CAP_NET_BIND_SERVICE (capability 10) in this process's ambient set, which its children keep across exec (capabilities(7)). */
function hasAmbientBindCapability(): boolean {
  const line = readFileSync('/proc/self/status', 'utf8').match(/^CapAmb:\s*([0-9a-f]+)$/m);
  return line ? (BigInt(`0x${line[1]}`) & (1n << 10n)) !== 0n : false;
}

/**
 * How an unprivileged nginx binds HTTPS_PORT and HTTP_PORT below the unprivileged range (443, 80):
 * with the one capability CAP_NET_BIND_SERVICE and nothing else. Run as root, the stack starts
 * nginx through util-linux's setpriv as `nobody` with that capability ambient (so it survives the
 * exec); run as another user, that user must hold it ambient already (systemd's
 * AmbientCapabilities=CAP_NET_BIND_SERVICE), or the start stops with a sentence saying so.
 * https://man7.org/linux/man-pages/man7/capabilities.7.html, https://man7.org/linux/man-pages/man1/setpriv.1.html
 */
function bindWrapper(cfg: Config, ids: { uid?: number; gid?: number }): string[] {
  if (!cfg.tls) return [];
  const low = [cfg.tls.httpsPort, cfg.tls.httpPort].filter((port) => port < unprivilegedPortStart());
  if (low.length === 0) return [];
  if (ids.uid !== undefined) {
    return ['setpriv', `--reuid=${ids.uid}`, `--regid=${ids.gid}`, '--clear-groups', '--inh-caps=+net_bind_service', '--ambient-caps=+net_bind_service', '--'];
  }
  if (hasAmbientBindCapability()) return [];
  throw new Error(`nginx cannot listen on port${low.length > 1 ? 's' : ''} ${low.join(' and ')} (HTTPS_PORT, HTTP_PORT) as this user: run the stack as root, or with the capability CAP_NET_BIND_SERVICE (systemd: AmbientCapabilities=CAP_NET_BIND_SERVICE), or forward ports 443 and 80 to unprivileged ones set in HTTPS_PORT and HTTP_PORT.`);
}

/** A rendered and checked nginx: what starting it (again, after a crash) needs. */
export interface PreparedNginx {
  binary: string;
  args: string[];
  ids: { uid?: number; gid?: number };
}

/**
 * Renders the configuration and the documents into the prefix and checks them with nginx -t; once per
 * stack. `addParts` writes what is rendered elsewhere (the TLS parts of the certificate served now).
 */
export async function prepareNginx(cfg: Config, addParts?: () => void): Promise<PreparedNginx> {
  const binary = findNginx(cfg.nginxBin);
  const prefix = nginxPrefix(cfg);
  const conf = await renderNginx(cfg, prefix);
  addParts?.();
  const ids = unprivilegedIds(prefix);
  // Brotli's modules, where installed, are loaded before the configuration.
  const modules = findBrotliModules().map((m) => `load_module ${m};`).join(' ');
  const args = ['-p', prefix, '-c', conf, '-e', 'stderr', ...(modules ? ['-g', modules] : [])];
  // nginx -t binds the listeners too. setpriv starts as root and becomes the user itself.
  const [wrapper, ...wrapperArgs] = bindWrapper(cfg, ids);
  const prepared = wrapper ? { binary: wrapper, args: [...wrapperArgs, binary, ...args], ids: {} } : { binary, args, ids };
  const testArgs = wrapper ? [...wrapperArgs, binary, '-t', '-q', ...args] : ['-t', '-q', ...args];
  try {
    execFileSync(prepared.binary, testArgs, { stdio: ['ignore', 'ignore', 'pipe'], ...prepared.ids });
  } catch (error) {
    throw new Error(`The rendered nginx configuration is invalid: ${(error as { stderr?: Buffer }).stderr?.toString().trim()}`);
  }
  return prepared;
}

/** The socket file of a gateway address, or undefined for a port. */
const socketOf = (address: string) => (address.startsWith('unix:') ? address.slice('unix:'.length) : undefined);

/** The status a gateway answers for GET `pathname`, over its port or its socket. */
export function gatewayStatus(address: string, pathname: string): Promise<number> {
  const socketPath = socketOf(address);
  const at = socketPath ? { socketPath } : { host: new URL(address).hostname, port: new URL(address).port };
  return new Promise((resolve, reject) => {
    http.get({ ...at, path: pathname, timeout: 5000 }, (res) => { res.resume(); resolve(res.statusCode ?? 0); })
      .on('timeout', function (this: http.ClientRequest) { this.destroy(new Error('no answer within 5 s')); })
      .on('error', reject);
  });
}

export async function startNginx(cfg: Config, log: Log, prepared: PreparedNginx): Promise<Child> {
  const gateways = gatewayAddresses(cfg);
  // A socket left by an nginx that was killed would refuse the new one's bind; nginx removes its
  // own when it stops, so one found here is no live nginx's.
  for (const address of Object.values(gateways)) {
    const socket = socketOf(address);
    if (socket) rmSync(socket, { force: true });
  }
  const child = startChild('nginx', prepared.binary, prepared.args, { ...prepared.ids, env: { PATH: process.env.PATH ?? '', TZ: 'UTC' }, log });
  await waitUntil('nginx', async () => (await gatewayStatus(gateways.api, '/')) === 404, 10_000, child);
  return child;
}
