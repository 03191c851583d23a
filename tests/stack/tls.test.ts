// HTTPS by itself, offline, on a stack whose certificate pebble issued (tests/support/https-stack.ts):
// the certificate and its chain, the ACME challenges and the redirect, the protocols, ciphers and groups,
// HTTP/2, HSTS, the documents' URLs, signatures and clients over https, renewal and reuse on restart.
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import http2 from 'node:http2';
import path from 'node:path';
import tls from 'node:tls';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createClient } from '@supabase/supabase-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_HOST_DOCUMENTS, SITE_DOCUMENTS } from '../../contract/documents.ts';
import { API_PATHS, SITE_PATHS } from '../../contract/paths.ts';
import { configFromEnv } from '../../config/config.ts';
import type { Env } from '../../config/settings.ts';
import { tlsPaths } from '../../stack/nginx-config.ts';
import { startStack, type Stack } from '../../stack/stack.ts';
import type { Pebble } from '../support/acme.ts';
import { API_HOST, SITE_HOST, startHttpsStack, type HttpsStack } from '../support/https-stack.ts';
import { verifies, type DirectoryKey } from '../support/signatures.ts';

/**
 * Mozilla's "intermediate" guideline 6.0 (https://ssl-config.mozilla.org/guidelines/6.0.json): the
 * protocols, the TLS 1.2 ciphers in OpenSSL's names and the TLS 1.3 suites in IANA's, as sslscan
 * prints them, and the key-exchange groups (X25519MLKEM768 needs OpenSSL 3.5).
 */
const GUIDELINE = {
  protocols: ['TLSv1.2', 'TLSv1.3'],
  ciphers: [
    'ECDHE-ECDSA-AES128-GCM-SHA256', 'ECDHE-RSA-AES128-GCM-SHA256', 'ECDHE-ECDSA-AES256-GCM-SHA384',
    'ECDHE-RSA-AES256-GCM-SHA384', 'ECDHE-ECDSA-CHACHA20-POLY1305', 'ECDHE-RSA-CHACHA20-POLY1305',
    'TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256',
  ],
  groups: ['x25519', 'secp256r1', 'secp384r1'],
};

const logs: string[] = [];
let https: HttpsStack;
// The started stack's parts, under the names the tests use; the restart test replaces `stack`.
let pebble: Pebble;
let stack: Stack;
let env: Env;
let root: string;
let siteUrl: string;
let apiUrl: string;
let httpsPort: number;
let httpPort: number;
const httpsFetch: typeof fetch = (input, init) => https.fetch(input, init);
const handshake = (host: string, options?: tls.ConnectionOptions) => https.handshake(host, options);
const plainGet = (host: string, pathAndQuery: string) => https.plainGet(host, pathAndQuery);
const tlsCommand = (...args: string[]) => https.tlsCommand(...args);

beforeAll(async () => {
  https = await startHttpsStack((line) => logs.push(line));
  ({ pebble, stack, env, root, siteUrl, apiUrl, httpsPort, httpPort } = https);
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  await https?.close();
});

describe('HTTPS with a certificate from the ACME server', () => {
  it('obtains one certificate naming both hosts, whose chain verifies against pebble\'s root', async () => {
    for (const host of [SITE_HOST, API_HOST]) {
      const { authorized, error, cert } = await handshake(host);
      expect(authorized, String(error)).toBe(true);
      expect((cert.subjectaltname ?? '').split(', ').sort()).toEqual([`DNS:${API_HOST}`, `DNS:${SITE_HOST}`]);
      // The chain sent: the leaf and pebble's intermediate, which the root signed.
      expect(cert.issuerCertificate.subject.CN).toMatch(/^Pebble Intermediate CA/);
    }
  });

  it('serves the ACME challenges from the webroot on plain HTTP (404 for an unknown token) and redirects everything else', async () => {
    const token = 'test-token_0123456789';
    const file = path.join(tlsPaths(stack.cfg.dataDir).webroot, '.well-known', 'acme-challenge', token);
    writeFileSync(file, 'key-authorization', { mode: 0o644 });
    try {
      expect(await plainGet(SITE_HOST, `/.well-known/acme-challenge/${token}`)).toMatchObject({ status: 200, body: 'key-authorization' });
    } finally {
      rmSync(file);
    }
    expect((await plainGet(SITE_HOST, '/.well-known/acme-challenge/unknown')).status).toBe(404);
    expect(await plainGet(SITE_HOST, '/api/history?from=2026-01-01&to=2026-02-01')).toMatchObject({ status: 301, location: `${siteUrl}/api/history?from=2026-01-01&to=2026-02-01` });
    expect(await plainGet(API_HOST, '/rest/v1/rpc/landing_stats')).toMatchObject({ status: 301, location: `${apiUrl}/rest/v1/rpc/landing_stats` });
    expect(await plainGet(`${API_HOST}:${httpPort}`, '/')).toMatchObject({ status: 301, location: `${apiUrl}/` });
  });

  it('speaks HTTP/2', async () => {
    const session = http2.connect(siteUrl, { createConnection: () => tls.connect({ host: '127.0.0.1', port: httpsPort, servername: SITE_HOST, ca: root, ALPNProtocols: ['h2'] }) });
    try {
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const request = session.request({ ':path': '/api/stats' });
        let status = 0;
        let body = '';
        request.on('response', (headers) => { status = Number(headers[':status']); });
        request.on('data', (chunk: Buffer) => { body += chunk.toString(); });
        request.on('end', () => resolve({ status, body }));
        request.on('error', reject);
        request.end();
      });
      expect(session.alpnProtocol).toBe('h2');
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body).data_source).toBe('demo');
    } finally {
      session.close();
    }
  });

  it('refuses TLS 1.1 and 1.0 and takes TLS 1.2 and 1.3', async () => {
    // OpenSSL's client at security level 0 offers the old protocols; the refusal is the server's alert.
    const sClient = (flag: string) => spawnSync('openssl', ['s_client', '-connect', `127.0.0.1:${httpsPort}`, '-servername', SITE_HOST, flag, '-cipher', 'DEFAULT@SECLEVEL=0'], { input: '', encoding: 'utf8', timeout: 20_000 });
    for (const flag of ['-tls1_1', '-tls1']) {
      const result = sClient(flag);
      expect(result.status, flag).not.toBe(0);
      expect(result.stdout + result.stderr, flag).toMatch(/alert protocol version/);
    }
    expect((await handshake(SITE_HOST, { minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2' })).protocol).toBe('TLSv1.2');
    expect((await handshake(SITE_HOST, { minVersion: 'TLSv1.3' })).protocol).toBe('TLSv1.3');
  });

  it('offers no protocol, cipher or group outside Mozilla\'s intermediate guideline (sslscan)', () => {
    for (const host of [SITE_HOST, API_HOST]) {
      const scan = spawnSync('sslscan', ['--no-colour', `--sni-name=${host}`, `127.0.0.1:${httpsPort}`], { encoding: 'utf8', timeout: 120_000 });
      expect(scan.status, scan.stderr).toBe(0);
      const enabled = [...scan.stdout.matchAll(/^(SSLv\d|TLSv1\.\d)\s+enabled$/gm)].map((m) => m[1]!);
      const accepted = [...scan.stdout.matchAll(/^(?:Preferred|Accepted)\s+(\S+)\s+\d+ bits\s+(\S+)/gm)].map((m): [string, string] => [m[1]!, m[2]!]);
      const groups = [...scan.stdout.matchAll(/^(TLSv1\.\d)\s+\d+ bits\s+(\S+)/gm)].map((m) => m[2]!);
      console.log(`sslscan ${host}: protocols ${enabled.join(', ')}; ciphers ${accepted.map(([p, c]) => `${p} ${c}`).join(', ')}; groups ${[...new Set(groups)].join(', ')}`);
      expect(enabled.sort()).toEqual(GUIDELINE.protocols);
      expect(accepted.length).toBeGreaterThan(0);
      expect(accepted.filter(([protocol, cipher]) => !GUIDELINE.protocols.includes(protocol) || !GUIDELINE.ciphers.includes(cipher))).toEqual([]);
      expect(groups.length).toBeGreaterThan(0);
      expect(groups.filter((group) => !GUIDELINE.groups.includes(group))).toEqual([]);
    }
  }, 300_000);

  it('sends Strict-Transport-Security of two years on both hosts, errors and preflights included', async () => {
    const key = { apikey: stack.cfg.ANON_KEY };
    const requests: [string, RequestInit?][] = [
      [`${siteUrl}/`], [`${siteUrl}/api/stats`], [`${siteUrl}/api/health`], [`${siteUrl}${SITE_PATHS.LLMS_TXT}`], [`${siteUrl}/no-such-page`],
      [`${siteUrl}/mcp`, { method: 'OPTIONS', headers: { origin: 'https://example.org', 'access-control-request-method': 'POST' } }],
      [`${apiUrl}${API_PATHS.REST_BASE}/rpc/landing_stats`, { headers: key }], [`${apiUrl}${API_PATHS.REST_BASE}/rpc/landing_health`, { headers: key }],
      [`${apiUrl}${API_PATHS.REST_BASE}/rpc/landing_stats`], [`${apiUrl}/nothing-here`], [`${apiUrl}${API_PATHS.PRM}`],
    ];
    for (const [url, init] of requests) {
      const res = await httpsFetch(url, init);
      expect(res.headers.get('strict-transport-security'), `${init?.method ?? 'GET'} ${url} (${res.status})`).toBe('max-age=63072000');
      await res.arrayBuffer();
    }
  });

  it('reports the served certificate\'s expiry in the health of both hosts', async () => {
    const { cert } = await handshake(API_HOST);
    const notAfter = new Date(cert.valid_to).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const api = await (await httpsFetch(`${apiUrl}${API_PATHS.REST_BASE}/rpc/landing_health`, { headers: { apikey: stack.cfg.ANON_KEY } })).json() as { status: string; data: { tls: unknown; fresh: boolean } };
    const site = await (await httpsFetch(`${siteUrl}/api/health`)).json() as { data: { tls: unknown; fresh: boolean } };
    for (const record of [api, site]) expect(record.data.tls).toEqual({ expires_at: notAfter, obtaining: false, error: null });
    // The record is otherwise the database's.
    expect(typeof api.data.fresh).toBe('boolean');
  });

  it('publishes only https URLs of the public hosts in every document', async () => {
    // XML namespaces and JSON Schema dialects are names, never fetched: the only http:// URLs a document may hold.
    const namespaces = /^http:\/\/(www\.w3\.org|www\.sitemaps\.org|json-schema\.org)\//;
    const code = new Set<string>([SITE_PATHS.REDOC_BUNDLE, SITE_PATHS.API_DOCS_SCRIPT, SITE_PATHS.LOG_VERIFIER]);
    const pending = [...SITE_DOCUMENTS.filter((d) => !code.has(d.path)).map((d) => `${siteUrl}${d.path}`), `${siteUrl}/`, `${siteUrl}/index.md`,
      ...API_HOST_DOCUMENTS.map((d) => `${apiUrl}${d.path}`)];
    const seen = new Set<string>();
    const ours: string[] = [];
    while (pending.length) {
      const url = pending.shift()!;
      if (seen.has(url)) continue;
      seen.add(url);
      const res = await httpsFetch(url, { headers: { accept: url.endsWith('/index.md') ? 'text/markdown' : '*/*' } });
      expect(res.status, url).toBe(200);
      const text = await res.text();
      for (const [match] of text.matchAll(/\bhttps?:\/\/[^\s"'<>)\]`\\]+/g)) {
        // Prose puts punctuation after a URL.
        const found = match.replace(/[.,;:]+$/, '');
        if (namespaces.test(found)) continue;
        expect(URL.canParse(found), `${found} in ${url}`).toBe(true);
        const target = new URL(found);
        expect(target.protocol, `${found} in ${url}`).toBe('https:');
        expect(target.hostname, `${found} in ${url}`).not.toMatch(/^(localhost|127\.|\[|\d+\.\d+\.\d+\.\d+$)/);
        if (target.hostname === SITE_HOST || target.hostname === API_HOST) {
          expect(target.port, `${found} in ${url}`).toBe(String(httpsPort));
          ours.push(found);
          // The skills and other documents of the site the documents link to are documents too.
          if (target.hostname === SITE_HOST && /\.(md|json|txt)$/.test(target.pathname) && !target.pathname.startsWith('/api/')) pending.push(`${target.origin}${target.pathname}`);
        }
      }
    }
    expect(ours.length).toBeGreaterThan(20);
  }, 120_000);

  it('signs the answers for the public authority', async () => {
    const directory = await (await httpsFetch(`${siteUrl}${SITE_PATHS.SIG_DIRECTORY}`)).json() as { keys: DirectoryKey[] };
    for (const url of [`${siteUrl}/api/stats`, `${apiUrl}${API_PATHS.REST_BASE}/rpc/landing_stats`]) {
      const res = await httpsFetch(url, { headers: { apikey: stack.cfg.ANON_KEY, 'accept-encoding': 'identity' } });
      const headers = Object.fromEntries(res.headers);
      const answer = { url, status: res.status, headers, body: Buffer.from(await res.arrayBuffer()) };
      expect(headers['signature-input']).toMatch(/"@authority";req/);
      expect(await verifies(answer, directory.keys), url).toBe(true);
      // …and not for any other authority, such as the one without the port.
      expect(await verifies({ ...answer, url: url.replace(`:${httpsPort}`, '') }, directory.keys)).toBe(false);
    }
  });

  it('answers supabase-js and the MCP SDK client over https', async () => {
    const supabase = createClient(apiUrl, stack.cfg.ANON_KEY, { global: { fetch: httpsFetch } });
    const stats = await supabase.rpc('landing_stats');
    expect(stats.error).toBeNull();
    expect((stats.data as { data_source: string }).data_source).toBe('demo');
    const health = await supabase.rpc('landing_health', {}, { get: true });
    expect(health.error).toBeNull();
    expect((health.data as { data: { tls: { obtaining: boolean } } }).data.tls.obtaining).toBe(false);

    const client = new Client({ name: 'tls-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${siteUrl}/mcp`), { fetch: httpsFetch }));
    try {
      const result = await client.callTool({ name: 'get_stats', arguments: {} });
      expect(result.isError).toBeFalsy();
      expect(JSON.stringify(result.structuredContent)).toContain('"data_source":"demo"');
    } finally {
      await client.close();
    }
  });

  it('renews on command with the configuration npm start reads, and reloads nginx without a failed request', async () => {
    const before = (await handshake(SITE_HOST)).cert.serialNumber;
    const ordersBefore = pebble.orders();
    const urls = [`${siteUrl}/api/stats`, `${apiUrl}${API_PATHS.REST_BASE}/rpc/landing_stats`, `${siteUrl}${SITE_PATHS.LLMS_TXT}`, `${siteUrl}/`];
    const failures: string[] = [];
    const served: number[] = [];
    let renewed = false;
    let afterRenewal = 0;
    // Four clients asking without pause, on kept-alive connections, all through the renewal and after it.
    const clients = urls.map(async (url) => {
      for (let i = 0; !renewed || afterRenewal < 200; i++) {
        try {
          const res = await httpsFetch(url, { headers: { apikey: stack.cfg.ANON_KEY } });
          await res.arrayBuffer();
          if (res.status !== 200) failures.push(`${url}: HTTP ${res.status}`);
          served.push(res.status);
          if (renewed) afterRenewal += 1;
        } catch (error) {
          failures.push(`${url}: ${(error as Error).message} (${String((error as { cause?: unknown }).cause)})`);
        }
      }
    });
    const output = await tlsCommand('renew', '--force').finally(() => { renewed = true; });
    await Promise.all(clients);
    const after = (await handshake(SITE_HOST)).cert.serialNumber;
    expect(output).toMatch(/serving the certificate for api\.stats\.example\.test and stats\.example\.test/);
    expect(after).not.toBe(before);
    expect(pebble.orders()).toBe(ordersBefore + 1);
    expect(failures).toEqual([]);
    expect(served.length).toBeGreaterThan(200);
    expect((await handshake(API_HOST)).cert.serialNumber).toBe(after);
  }, 180_000);

  it('reuses its certificate on a restart with the same hosts and ACME server: no new order', async () => {
    const serial = (await handshake(SITE_HOST)).cert.serialNumber;
    const orders = pebble.orders();
    await stack.stop();
    stack = await startStack(configFromEnv(env), { log: (line) => logs.push(line), seedDemo: false });
    // Served from the start, with the certificate it had.
    expect(stack.tls!.status.certificate?.serial).toBe(serial);
    expect((await handshake(SITE_HOST)).cert.serialNumber).toBe(serial);
    // A renewal that is not due asks the ACME server nothing either.
    expect(await tlsCommand('renew')).toContain(`serial ${serial}`);
    expect(await tlsCommand('status')).toMatch(new RegExp(`serial ${serial}, expires .*, renews after `));
    expect(pebble.orders()).toBe(orders);
    expect((await httpsFetch(`${siteUrl}/api/stats`)).status).toBe(200);
  }, 180_000);
});
