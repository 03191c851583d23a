// Our own nginx: templates under site/nginx rendered into a private prefix under the data
// directory, run in the foreground with -p/-c. It never touches the system's nginx service.
import { execFileSync } from 'node:child_process';
import { accessSync, chownSync, constants, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { ROOT_DIR, type Config, type TlsConfig } from '../config/config.ts';
import { executableOf, idsOf, startChild, waitUntil, type Child, type Log } from './processes.ts';
import { renderSite } from './site.ts';

export const NGINX_DIR = path.join(ROOT_DIR, 'site', 'nginx');

/** Substitutes ${NAME} for the names given; anything else (nginx's own $vars, ${regex_groups}) stays. */
export function renderTemplate(text: string, vars: Record<string, string>): string {
  return text.replace(/\$\{([A-Z][A-Z0-9_]*)\}/g, (whole, name: string) => vars[name] ?? whole);
}

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

/** Debian's libnginx-mod-http-brotli-filter and -static; brotli is used when both are installed. */
const BROTLI_MODULES = ['ngx_http_brotli_filter_module.so', 'ngx_http_brotli_static_module.so'];
const MODULE_DIR = '/usr/lib/nginx/modules';

export function findBrotliModules(): string[] {
  const paths = BROTLI_MODULES.map((name) => path.join(MODULE_DIR, name));
  return paths.every((p) => existsSync(p)) ? paths : [];
}

/** The prefix our nginx runs in: its rendered configuration, documents, cache and sockets. */
export const nginxPrefix = (cfg: Pick<Config, 'dataDir'>) => path.join(cfg.dataDir, 'nginx');

/** The longest path a unix socket may have (sun_path holds 108 bytes with the closing NUL: unix(7)). */
const SOCKET_PATH_MAX = 107;

/**
 * Where the node's own processes (the edge, its warming pass, the stack's readiness check) reach each
 * gateway: its loopback port (SITE_PORT, API_PORT), or with HTTPS a unix socket in nginx's prefix,
 * so that nginx opens no port but HTTPS_PORT and HTTP_PORT. The same form serves nginx's `listen`
 * (after `http://`) and the edge (edge/gateway.ts).
 */
export function gatewayAddresses(cfg: Pick<Config, 'dataDir' | 'bindHost' | 'sitePort' | 'apiPort' | 'tls'>): { site: string; api: string } {
  if (!cfg.tls) return { site: `http://${cfg.bindHost}:${cfg.sitePort}`, api: `http://${cfg.bindHost}:${cfg.apiPort}` };
  const socket = (host: string) => {
    const file = path.join(nginxPrefix(cfg), `${host}.sock`);
    if (Buffer.byteLength(file) > SOCKET_PATH_MAX) throw new Error(`The data directory ${cfg.dataDir} is too deep for the gateways' sockets (${file} is over ${SOCKET_PATH_MAX} bytes): set DATA_DIR to a shorter path.`);
    return `unix:${file}`;
  };
  return { site: socket('site'), api: socket('api') };
}

/** The socket file of a gateway address, or undefined for a port. */
const socketOf = (address: string) => (address.startsWith('unix:') ? address.slice('unix:'.length) : undefined);

/** An address of gatewayAddresses as nginx's `listen` takes it. */
const listenAt = (address: string) => address.replace(/^http:\/\//, '');

/** Template variables, shared with docker-compose's gateway service. */
export function nginxVars(cfg: Config, prefix: string): Record<string, string> {
  const gateways = gatewayAddresses(cfg);
  return {
    NGINX_PREFIX: prefix,
    NGINX_WORKERS: String(cfg.nginxWorkers),
    NGINX_MIME_TYPES: '/etc/nginx/mime.types',
    NGINX_CACHE_DIR: path.join(prefix, 'cache'),
    API_LISTEN: listenAt(gateways.api),
    SITE_LISTEN: listenAt(gateways.site),
    SITE_ROOT: path.join(prefix, 'html'),
    // Written by the renderer beside the documents, as in docker-compose (site/render/locations.ts).
    SITE_LOCATIONS: path.join(prefix, 'html', '_nginx', 'site-locations.conf'),
    API_LOCATIONS: path.join(prefix, 'html', '_nginx', 'api-locations.conf'),
    POSTGREST_UPSTREAM: `${cfg.bindHost}:${cfg.postgrestPort}`,
    API_MICROCACHE_SECONDS: String(Math.max(cfg.apiMicrocacheSeconds, 1)),
    API_PROXY_CACHE: cfg.apiMicrocacheSeconds > 0 ? 'api_micro' : 'off',
    ANON_KEY: cfg.ANON_KEY,
    PUBLIC_API_URL: cfg.apiUrl,
    PUBLIC_SITE_URL: cfg.siteUrl,
    ...siteHostVars(cfg),
    ...(cfg.tls ? tlsVars(cfg.tls, prefix) : {}),
  };
}

/** Whether this machine has IPv6 (an interface address listed by the kernel): nginx then listens on it too. */
const hasIpv6 = (): boolean => existsSync('/proc/net/if_inet6') && readFileSync('/proc/net/if_inet6', 'utf8').trim() !== '';

/** `listen` lines for `port` on every address, IPv6 included where the machine has it. */
function listenEverywhere(port: number, params: string): string {
  const suffix = params ? ` ${params}` : '';
  return [`    listen ${port}${suffix};`, ...(hasIpv6() ? [`    listen [::]:${port}${suffix};`] : [])].join('\n');
}

/** Where the ACME client and nginx meet: the certificates, the challenges' webroot, the rendered TLS parts. */
export function tlsPaths(dataDir: string) {
  const dir = path.join(dataDir, 'tls');
  return {
    dir,
    /** certbot's --config-dir, --work-dir and --logs-dir. */
    certbotConfig: path.join(dir, 'certbot'),
    certbotWork: path.join(dir, 'certbot-work'),
    certbotLogs: path.join(dir, 'certbot-logs'),
    /** HTTP-01 answers are files under <webroot>/.well-known/acme-challenge/. */
    webroot: path.join(dir, 'webroot'),
  };
}

function tlsVars(tls: TlsConfig, prefix: string): Record<string, string> {
  return {
    HTTP_LISTEN: listenEverywhere(tls.httpPort, ''),
    ACME_WEBROOT: tlsPaths(path.dirname(prefix)).webroot,
  };
}

/** The TLS parts nginx includes once a certificate exists (site/nginx/tls/serving), into `<prefix>/tls`. */
export interface ServedCertificate {
  certFile: string;
  keyFile: string;
}

/**
 * Writes (or, with no certificate, removes) what makes nginx serve HTTPS: the listener with its
 * default that refuses other names, each host's name and certificate, HSTS; and `healthFilter`, the
 * health record's TLS part. The caller reloads nginx.
 */
export function writeTlsServing(cfg: Config, certificate: ServedCertificate | undefined, healthFilter: string): void {
  const tls = cfg.tls!;
  const prefix = nginxPrefix(cfg);
  const dir = path.join(prefix, 'tls');
  mkdirSync(dir, { recursive: true });
  const files: Record<string, string> = { 'health.conf': healthFilter };
  if (certificate) {
    const read = (name: string) => readFileSync(path.join(NGINX_DIR, 'tls', 'serving', `${name}.conf.template`), 'utf8');
    const listen = listenEverywhere(tls.httpsPort, 'ssl http2');
    files['https.conf'] = renderTemplate(read('https'), { HTTPS_LISTEN_DEFAULT: listenEverywhere(tls.httpsPort, 'ssl http2 default_server') });
    for (const [host, name] of [['site', tls.siteHost], ['api', tls.apiHost]] as const) {
      files[`${host}-server.conf`] = renderTemplate(read('host'), { HTTPS_LISTEN: listen, HOST_NAME: name, CERT_FILE: certificate.certFile, KEY_FILE: certificate.keyFile });
    }
    files['hsts.conf'] = read('hsts');
  }
  for (const file of readdirSync(dir)) if (!(file in files)) rmSync(path.join(dir, file));
  for (const [file, text] of Object.entries(files)) writeFileSync(path.join(dir, file), text, { mode: 0o644 });
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

/** The site host's own settings (site.conf.template): the edge upstream, its microcache and limits. */
function siteHostVars(cfg: Config): Record<string, string> {
  return {
    EDGE_UPSTREAM: `${cfg.bindHost}:${cfg.edgePort}`,
    SITE_MICROCACHE_SECONDS: String(cfg.siteMicrocacheSeconds),
    SITE_RATE_LIMIT: cfg.siteRateLimit,
    SITE_RATE_BURST: String(cfg.siteRateBurst),
    // 1 = loopback is never limited; a single value so compose's envsubst can set it too.
    SITE_RATE_EXEMPT_LOOPBACK: cfg.siteRateLimitLoopback ? '0' : '1',
  };
}

/**
 * Renders the configuration into `prefix` (wiping the previous rendering and cache), with the
 * documents and the locations generated for both hosts.
 */
export async function renderNginx(cfg: Config, prefix: string): Promise<string> {
  rmSync(prefix, { recursive: true, force: true });
  for (const dir of ['conf.d', 'snippets', 'deploy', 'cache', 'tmp', 'html']) mkdirSync(path.join(prefix, dir), { recursive: true });
  const vars = nginxVars(cfg, prefix);
  writeFileSync(path.join(prefix, 'nginx.conf'), renderTemplate(readFileSync(path.join(NGINX_DIR, 'nginx.conf.template'), 'utf8'), vars));
  const templates = readdirSync(path.join(NGINX_DIR, 'templates')).map((file) => path.join(NGINX_DIR, 'templates', file));
  // With HTTPS, the plain-HTTP listener (challenges and the redirect) and the TLS settings; the
  // certificate's parts come once it exists (writeTlsServing).
  if (cfg.tls) {
    templates.push(path.join(NGINX_DIR, 'tls', 'tls.conf.template'));
    mkdirSync(path.join(prefix, 'tls'));
  }
  for (const file of templates) {
    writeFileSync(path.join(prefix, 'conf.d', path.basename(file).replace(/\.template$/, '')), renderTemplate(readFileSync(file, 'utf8'), vars));
  }
  // site/nginx/local holds what the local stack has in place of docker-compose's deploy/ locations.
  // The brotli settings are included by a glob, so without the modules they are simply absent.
  const brotli = findBrotliModules().length ? [['brotli', 'brotli']] : [];
  if (brotli.length) mkdirSync(path.join(prefix, 'brotli'));
  for (const [from, to] of [['snippets', 'snippets'], ['local', 'deploy'], ...brotli]) {
    for (const file of readdirSync(path.join(NGINX_DIR, from!))) writeFileSync(path.join(prefix, to!, file), readFileSync(path.join(NGINX_DIR, from!, file)));
  }
  await renderSite(cfg, vars.SITE_ROOT!);
  return path.join(prefix, 'nginx.conf');
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
