// Our own nginx: templates under site/nginx rendered into a private prefix under the data
// directory, run in the foreground with -p/-c. It never touches the system's nginx service.
import { execFileSync } from 'node:child_process';
import { accessSync, chownSync, constants, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT_DIR, type Config } from './config.ts';
import { idsOf, startChild, waitUntil, type Child, type Log } from './processes.ts';
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

/** Template variables, shared with docker-compose's gateway service. */
export function nginxVars(cfg: Config, prefix: string): Record<string, string> {
  return {
    NGINX_PREFIX: prefix,
    NGINX_WORKERS: String(cfg.nginxWorkers),
    NGINX_MIME_TYPES: '/etc/nginx/mime.types',
    NGINX_CACHE_DIR: path.join(prefix, 'cache'),
    API_LISTEN: `${cfg.bindHost}:${cfg.apiPort}`,
    SITE_LISTEN: `${cfg.bindHost}:${cfg.sitePort}`,
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
  };
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
  for (const file of readdirSync(path.join(NGINX_DIR, 'templates'))) {
    const out = file.replace(/\.template$/, '');
    writeFileSync(path.join(prefix, 'conf.d', out), renderTemplate(readFileSync(path.join(NGINX_DIR, 'templates', file), 'utf8'), vars));
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

/** As root, nginx runs as `nobody`, which then owns its prefix; otherwise as the current user. */
function unprivilegedIds(prefix: string): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const { uid, gid } = idsOf('nobody');
  const walk = (p: string) => {
    chownSync(p, uid, gid);
    if (statSync(p).isDirectory()) for (const entry of readdirSync(p)) walk(path.join(p, entry));
  };
  walk(prefix);
  return { uid, gid };
}

/** A rendered and checked nginx: what starting it (again, after a crash) needs. */
export interface PreparedNginx {
  binary: string;
  args: string[];
  ids: { uid?: number; gid?: number };
}

/** Renders the configuration and the documents into the prefix and checks them with nginx -t; once per stack. */
export async function prepareNginx(cfg: Config): Promise<PreparedNginx> {
  const binary = findNginx(cfg.nginxBin);
  const prefix = path.join(cfg.dataDir, 'nginx');
  const conf = await renderNginx(cfg, prefix);
  const ids = unprivilegedIds(prefix);
  // Brotli's modules, where installed, are loaded before the configuration.
  const modules = findBrotliModules().map((m) => `load_module ${m};`).join(' ');
  const args = ['-p', prefix, '-c', conf, '-e', 'stderr', ...(modules ? ['-g', modules] : [])];
  try {
    execFileSync(binary, ['-t', '-q', ...args], { stdio: ['ignore', 'ignore', 'pipe'], ...ids });
  } catch (error) {
    throw new Error(`The rendered nginx configuration is invalid: ${(error as { stderr?: Buffer }).stderr?.toString().trim()}`);
  }
  return { binary, args, ids };
}

export async function startNginx(cfg: Config, log: Log, prepared: PreparedNginx): Promise<Child> {
  const child = startChild('nginx', prepared.binary, prepared.args, { ...prepared.ids, env: { PATH: process.env.PATH ?? '', TZ: 'UTC' }, log });
  await waitUntil('nginx', async () => (await fetch(`http://${cfg.bindHost}:${cfg.apiPort}/`)).status === 404, 10_000, child);
  return child;
}
