// The cached records' nginx locations, generated from the rows of contract/paths.ts: one exact
// location per row, filled and keyed as its row says, so that a new record asks nothing more of
// the gateways than its row (the configuration with one more row on each host passes nginx -t).
// Against the shared stack: the API host's 404 names every operation the rows and the health
// record make up, each record's own name reaches its 400, and the site refuses the edge's route
// for the API host.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { API_PATHS, CACHED_RECORDS, EDGE_PATHS, recordName, type CachedRecord } from '../../contract/paths.ts';
import { configFromEnv } from '../../config/config.ts';
import { completeSecrets } from '../../stack/secrets.ts';
import { findBrotliModules, renderNginx } from '../../stack/nginx-config.ts';
import { findNginx } from '../../stack/nginx.ts';
import { apiLocations, LOCATION_FILES, siteLocations } from '../../site/render/locations.ts';

const { apiUrl, siteUrl, anonKey } = inject('stack');

/** The body of the exact location of `urlPath` in a generated file. */
function locationOf(text: string, urlPath: string): string[] {
  const blocks = text.split(/^location /m).filter((b) => b.startsWith(`= ${urlPath} {`));
  expect(blocks, urlPath).toHaveLength(1);
  return blocks[0]!.split('\n').slice(1).map((l) => l.trim()).filter((l) => l && l !== '}');
}

describe('the generated record locations', () => {
  it('give every row one exact location, filled and keyed as the row says', () => {
    const files = { api: apiLocations(), site: siteLocations() };
    for (const record of CACHED_RECORDS) {
      const name = recordName(record);
      const body = locationOf(files[record.host], record.path);
      if (record.host === 'api') {
        expect(body).toEqual([
          `set $record_rpc ${name};`,
          'include snippets/api-record.conf;',
          `proxy_pass http://edge${EDGE_PATHS.API_HOST_RPC}$record_rpc;`,
          `proxy_cache_key "${name}|$no_arguments_body|$cached_encoding";`,
        ]);
      } else {
        expect(body).toEqual([
          'include snippets/site-record.conf;',
          'proxy_pass http://edge;',
          `proxy_cache_key "${name}|${record.query ? '$args' : ''}|$cached_encoding";`,
        ]);
      }
    }
  });

  it('refuse a row the API host cannot serve: its records take no arguments', () => {
    expect(() => apiLocations([{ host: 'api', path: '/rest/v1/rpc/landing_ranged', query: true }])).toThrow(/take no arguments/);
    expect(() => siteLocations([{ host: 'site', path: '/api/a b', query: false }])).toThrow(/a-z, 0-9/);
  });

  it('with one more row on each host, make a configuration nginx accepts', async () => {
    const extra: CachedRecord[] = [...CACHED_RECORDS, { host: 'api', path: '/rest/v1/rpc/landing_extra', query: false }, { host: 'site', path: '/api/extra', query: true }];
    const dataDir = mkdtempSync(path.join(tmpdir(), 'record-locations-'));
    try {
      const cfg = configFromEnv({ ...(await completeSecrets({})), DATA_DIR: dataDir });
      const prefix = path.join(dataDir, 'nginx');
      const conf = await renderNginx(cfg, prefix);
      const root = path.join(prefix, 'html');
      // The renderer wrote the rows as they are; the same files with one more row each.
      expect(readFileSync(path.join(root, LOCATION_FILES.api), 'utf8')).toBe(apiLocations());
      writeFileSync(path.join(root, LOCATION_FILES.api), apiLocations(extra));
      writeFileSync(path.join(root, LOCATION_FILES.site), siteLocations(extra));
      expect(apiLocations(extra)).toContain('GET|POST /rest/v1/rpc/landing_log, GET|POST /rest/v1/rpc/landing_extra and GET');
      const modules = findBrotliModules().map((m) => `load_module ${m};`).join(' ');
      const result = execFileSync('sh', ['-c', '"$@" 2>&1; echo "exit=$?"', 'nginx-t', findNginx(), '-t', '-p', prefix, '-c', conf, '-e', 'stderr', ...(modules ? ['-g', modules] : [])], { encoding: 'utf8' });
      expect(result).toMatch(/test is successful/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('the record locations served', () => {
  it('answer an unknown API path with a 404 that names every operation', async () => {
    const res = await fetch(`${apiUrl}/rest/v1/rpc/landing_nope`, { headers: { apikey: anonKey } });
    expect(res.status).toBe(404);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(await res.json()).toEqual({
      message: `Not found: the API host serves GET|POST ${API_PATHS.STATS}, GET|POST ${API_PATHS.HISTORY}, GET|POST ${API_PATHS.LOG} and GET ${API_PATHS.HEALTH}`,
    });
  });

  it('name each API record in its refusal of arguments', async () => {
    for (const record of CACHED_RECORDS.filter((r) => r.host === 'api')) {
      const res = await fetch(apiUrl + record.path, { method: 'POST', headers: { apikey: anonKey, 'content-type': 'application/json' }, body: '[]' });
      expect(res.status, record.path).toBe(400);
      expect(await res.json()).toEqual({ message: `${recordName(record)} takes no arguments: send no body or {}` });
    }
  });

  it('keep the edge\'s route for the API host off the site host', async () => {
    const res = await fetch(`${siteUrl}${EDGE_PATHS.API_HOST_RPC}${recordName(CACHED_RECORDS.find((r) => r.host === 'api')!)}`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ message: 'Not found' });
  });
});
