// docker-compose.yml's gateway: the PostgREST it reads through, the certificate the acme service
// writes for it, and its templates, rendered the way the nginx image does and accepted by nginx -t.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NGINX_DIR, renderTemplate } from '../../stack/nginx-config.ts';
import { findNginx } from '../../stack/nginx.ts';
import { compose, services } from '../support/compose.ts';
import { LOCATION_FILES, writeLocations } from '../../site/render/locations.ts';

describe('docker-compose.yml', () => {
  it('has the gateway and the edge read through one PostgREST, the primary\'s unless POSTGREST_UPSTREAM names the replica\'s', () => {
    expect(services.gateway!.environment!.POSTGREST_UPSTREAM).toBe('${POSTGREST_UPSTREAM:-rest:3000}');
    expect(services.edge!.environment!.EDGE_POSTGREST_UPSTREAM).toBe('http://${POSTGREST_UPSTREAM:-rest:3000}');
  });

  it('serves HTTPS with the certificate of the acme service: what it writes is what the gateway reads', () => {
    const gateway = services.gateway!;
    const acme = services.acme!;
    expect(gateway.ports).toEqual(expect.arrayContaining(['${HTTPS_PORT:-443}:443', '${HTTP_PORT:-80}:80']));
    // the challenges, the certificates and the TLS parts: written by acme, read by the gateway
    for (const [volume, written, read] of [['acme-webroot', '/var/www/acme', '/var/www/acme'], ['letsencrypt', '/etc/letsencrypt', '/etc/letsencrypt'], ['tls-nginx', '/etc/nginx-tls', '/etc/nginx/tls']]) {
      expect(acme.volumes).toContain(`${volume}:${written}`);
      expect(gateway.volumes).toContain(`${volume}:${read}:ro`);
      expect(compose.volumes).toHaveProperty(volume!);
    }
    expect(gateway.environment!.ACME_WEBROOT).toBe('/var/www/acme');
    expect(acme.volumes).toContain('./site/nginx/tls/serving:/templates:ro');
    expect(gateway.volumes).toContain('./site/nginx/tls/compose-gateway.sh:/docker-entrypoint.d/40-tls.sh:ro');
    expect(acme.environment).toMatchObject({ SITE_URL: '${SITE_URL}', API_URL: '${API_URL}' });
  });

  it('mounts the same nginx templates and snippets the local stack renders', () => {
    const mounts = services.gateway!.volumes!;
    expect(mounts).toContain('./site/nginx/templates:/etc/nginx/templates:ro');
    expect(mounts).toContain('./site/nginx/snippets:/etc/nginx/snippets:ro');
  });

  it("renders into a configuration nginx -t accepts, as the image's envsubst would", () => {
    const env = services.gateway!.environment!;
    // Values that come from .env are placeholders here; the upstream host names resolve to loopback
    // because nginx -t resolves upstreams and this machine has no `rest` or `edge`.
    const vars: Record<string, string> = {};
    for (const [k, v] of Object.entries(env)) {
      vars[k] = String(v)
        .replace(/\$\{ANON_KEY[^}]*\}/, 'eyJhbGciOiJIUzI1NiJ9.eyJyb2xlIjoiYW5vbiJ9.c2ln')
        .replace(/\$\{(API_URL|SITE_URL)[^}]*\}/, 'https://example.org')
        .replace(/\$\{[A-Z_]+:-([^}]*)\}/, '$1')
        .replace(/^(rest|edge|auth|gateway):/, '127.0.0.1:');
    }
    const prefix = mkdtempSync(path.join(tmpdir(), 'compose-nginx-'));
    try {
      for (const dir of ['conf.d', 'templates-out', 'cache', 'srv']) mkdirSync(path.join(prefix, dir));
      vars.SITE_ROOT = path.join(prefix, 'srv');
      vars.NGINX_CACHE_DIR = path.join(prefix, 'cache');
      // The site service writes both hosts' generated locations beside the documents, where the
      // gateway includes them from; here, into the prefix.
      expect(env.SITE_LOCATIONS).toBe(`${env.SITE_ROOT}/${LOCATION_FILES.site}`);
      expect(env.API_LOCATIONS).toBe(`${env.SITE_ROOT}/${LOCATION_FILES.api}`);
      expect(services.site!.command!.at(-1)).toBe(env.SITE_ROOT);
      writeLocations(vars.SITE_ROOT);
      vars.SITE_LOCATIONS = path.join(vars.SITE_ROOT, LOCATION_FILES.site);
      vars.API_LOCATIONS = path.join(vars.SITE_ROOT, LOCATION_FILES.api);
      for (const file of readdirSync(path.join(NGINX_DIR, 'templates'))) {
        const rendered = renderTemplate(readFileSync(path.join(NGINX_DIR, 'templates', file), 'utf8'), vars);
        const leftover = rendered.match(/\$\{[A-Z][A-Z0-9_]*\}/g);
        expect(leftover, `${file}: variables the gateway's environment does not set`).toBeNull();
        writeFileSync(path.join(prefix, 'conf.d', file.replace(/\.template$/, '')), rendered);
      }
      cpSync(path.join(NGINX_DIR, 'snippets'), path.join(prefix, 'snippets'), { recursive: true });
      cpSync(path.join(NGINX_DIR, 'deploy'), path.join(prefix, 'deploy'), { recursive: true });
      writeFileSync(path.join(prefix, 'deploy', 'api-auth.conf'), readFileSync(path.join(NGINX_DIR, 'deploy', 'api-auth.conf'), 'utf8').replace('http://auth:9999/', 'http://127.0.0.1:9999/'));
      // the image's own main file, in essence: include conf.d inside http
      writeFileSync(path.join(prefix, 'nginx.conf'), `pid ${prefix}/nginx.pid; error_log stderr; events {}
http { include /etc/nginx/mime.types; client_body_temp_path ${prefix}/cache; proxy_temp_path ${prefix}/cache;
fastcgi_temp_path ${prefix}/cache; uwsgi_temp_path ${prefix}/cache; scgi_temp_path ${prefix}/cache; include conf.d/*.conf; }`);
      // The image's own command line: no module beyond what nginx is built with.
      expect(services.gateway!.command).toBeUndefined();
      const result = execFileSync('sh', ['-c', '"$0" -t -p "$1" -c "$1/nginx.conf" -e stderr 2>&1; echo "exit=$?"', findNginx(), prefix], { encoding: 'utf8' });
      expect(result).toMatch(/test is successful/);
    } finally {
      rmSync(prefix, { recursive: true, force: true });
    }
  });
});
