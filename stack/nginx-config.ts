// Our nginx's configuration: the templates under site/nginx rendered into a private prefix under the
// data directory, with the addresses the gateways listen on and the TLS parts of a certificate.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT_DIR } from '../config/checkout.ts';
import type { Config } from '../config/config.ts';
import type { TlsConfig } from '../config/origins.ts';
import { renderSite } from './site.ts';

export const NGINX_DIR = path.join(ROOT_DIR, 'site', 'nginx');

/** Substitutes ${NAME} for the names given; anything else (nginx's own $vars, ${regex_groups}) stays. */
export function renderTemplate(text: string, vars: Record<string, string>): string {
  return text.replace(/\$\{([A-Z][A-Z0-9_]*)\}/g, (whole, name: string) => vars[name] ?? whole);
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
