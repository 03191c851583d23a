// HTTPS settings without a working ACME server: while none answers, the stack serves the plain-HTTP
// challenges and redirect, says why in its log and its health, and keeps trying; with one's own
// certificate (TLS_CERT_FILE, TLS_KEY_FILE) it serves that from the start and orders nothing.
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import tls from 'node:tls';
import { afterAll, describe, expect, it } from 'vitest';
import { API_PATHS } from '../../contract/paths.ts';
import { gatewayAt } from '../../edge/gateway.ts';
import { gatewayAddresses } from '../../stack/nginx-config.ts';
import { freePort } from '../../stack/processes.ts';
import { healthFilter } from '../../stack/tls-serving.ts';
import type { CertificateFacts } from '../../stack/tls-certificate.ts';
import { dial, startTestStack, type TestStack } from '../support/stack.ts';

const SITE_HOST = 'stats.example.test';
const API_HOST = 'api.stats.example.test';

const stacks: TestStack[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const stack of stacks) await stack.destroy();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function httpsStack(httpsPort: number, env: Record<string, string>): Promise<TestStack> {
  const stack = await startTestStack({
    env: { SITE_URL: `https://${SITE_HOST}:${httpsPort}`, API_URL: `https://${API_HOST}:${httpsPort}`, HTTPS_PORT: String(httpsPort), HTTP_PORT: String(await freePort()), ...env },
  });
  stacks.push(stack);
  return stack;
}

/** A gateway of the stack as its edge reaches it: with HTTPS, on nginx's unix socket. */
const local = (stack: TestStack, host: 'site' | 'api') => gatewayAt(gatewayAddresses(stack.cfg)[host]);

/** The API host's health as the edge reads it, on the local listener. */
async function localHealth(stack: TestStack): Promise<{ status: string; data: { tls: { expires_at: string | null; obtaining: boolean; error: string | null } } }> {
  const api = local(stack, 'api');
  const res = await api.fetch(`${api.origin}${API_PATHS.REST_BASE}/rpc/landing_health`, { headers: { apikey: stack.cfg.ANON_KEY } });
  return res.json() as never;
}


/** Waits (up to a minute) for `check` to hold: an event the stack reports, not a timing. */
async function until<T>(what: string, check: () => Promise<T | undefined> | T | undefined): Promise<T> {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(200)) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
  }
  throw new Error(`${what} did not happen within a minute`);
}

describe('HTTPS while the ACME server cannot be reached', () => {
  it('serves the challenges and the redirect, says why in the log and in health, and keeps trying', async () => {
    const httpsPort = await freePort();
    const unreachable = `https://127.0.0.1:${await freePort()}/dir`;
    // Warmed as `npm start` warms: before it says it runs, and every 2 s; under a rate limit that a
    // third request from any one address would meet, which the node's own socket is exempt from.
    const stack = await httpsStack(httpsPort, { ACME_DIRECTORY_URL: unreachable, EDGE_WARM_SECONDS: '2', SITE_RATE_LIMIT: '1r/m', SITE_RATE_BURST: '1' });
    expect(stack.tls!.status.certificate).toBeUndefined();
    // The warming pass reached both gateways on their sockets: the entries are there for the first caller.
    const [site, api] = [local(stack, 'site'), local(stack, 'api')];
    const cacheStatus = async (gateway: typeof site, pathname: string, headers: Record<string, string> = {}) =>
      (await gateway.fetch(`${gateway.origin}${pathname}`, { headers })).headers.get('x-cache-status');
    expect(await cacheStatus(site, '/api/stats')).not.toBe('MISS');
    expect(await cacheStatus(api, API_PATHS.STATS, { apikey: stack.cfg.ANON_KEY })).not.toBe('MISS');
    const said = await until('the first failed attempt', () => stack.logs.find((line) => line.includes('could not obtain a certificate')));
    expect(said).toMatch(new RegExp(`^tls: could not obtain a certificate from ${unreachable.replace(/[.]/g, '\\.')}: .+; trying again in 15 s\\.$`));
    const health = await until('health saying why', async () => {
      const record = await localHealth(stack);
      return record.data.tls.error ? record : undefined;
    });
    expect(health.status).toBe('degraded');
    expect(health.data.tls).toMatchObject({ expires_at: null, obtaining: true });
    // Plain HTTP answers meanwhile; nothing listens for HTTPS until a certificate exists.
    const redirect = await new Promise<http.IncomingMessage>((resolve, reject) => {
      http.get({ host: '127.0.0.1', port: stack.cfg.tls!.httpPort, path: '/api/stats', headers: { host: SITE_HOST } }, resolve).once('error', reject);
    });
    expect(redirect.statusCode).toBe(301);
    expect(redirect.headers.location).toBe(`https://${SITE_HOST}:${httpsPort}/api/stats`);
    const refused = await new Promise<string>((resolve) => {
      tls.connect({ host: '127.0.0.1', port: httpsPort, servername: SITE_HOST }).once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    });
    expect(refused).toBe('ECONNREFUSED');
    // The stack is still running: the edge answers through the gateways' sockets, and nginx opens
    // no port but HTTPS_PORT and HTTP_PORT.
    expect((await site.fetch(`${site.origin}/api/stats`)).status).toBe(200);
    expect(stack.logs.filter((line) => line.includes('warmed'))).toEqual([]);
    expect([await dial(stack.cfg.sitePort), await dial(stack.cfg.apiPort)]).toEqual(['ECONNREFUSED', 'ECONNREFUSED']);
  }, 120_000);
});

describe('HTTPS with one\'s own certificate', () => {
  it('serves TLS_CERT_FILE with TLS_KEY_FILE from the start and reports its expiry', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'own-cert-'));
    dirs.push(dir);
    // nginx's user (nobody, when the tests run as root) reads the key.
    chmodSync(dir, 0o755);
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem',
      '-days', '30', '-subj', `/CN=${SITE_HOST}`, '-addext', `subjectAltName=DNS:${SITE_HOST},DNS:${API_HOST}`], { cwd: dir, stdio: 'ignore' });
    chmodSync(path.join(dir, 'key.pem'), 0o644);
    const httpsPort = await freePort();
    const stack = await httpsStack(httpsPort, { TLS_CERT_FILE: path.join(dir, 'cert.pem'), TLS_KEY_FILE: path.join(dir, 'key.pem') });
    const own = new X509Certificate(readFileSync(path.join(dir, 'cert.pem')));
    expect(stack.tls!.status.certificate?.serial).toBe(own.serialNumber);
    const presented = await new Promise<tls.PeerCertificate>((resolve, reject) => {
      const socket = tls.connect({ host: '127.0.0.1', port: httpsPort, servername: API_HOST, ca: own.toString() }, () => {
        resolve(socket.getPeerCertificate());
        socket.end();
      });
      socket.once('error', reject);
    });
    expect(presented.serialNumber).toBe(own.serialNumber);
    const health = await localHealth(stack);
    expect(health.data.tls).toEqual({ expires_at: own.validToDate.toISOString().replace(/\.\d{3}Z$/, 'Z'), obtaining: false, error: null });
    // Thirty days left: more than the fourteen under which health turns degraded for HTTPS.
    expect(stack.logs.some((line) => line.includes('could not'))).toBe(false);
  }, 120_000);
});

describe('the health record\'s TLS part', () => {
  const now = new Date('2026-11-27T12:00:00Z');
  const expiring = (days: number): CertificateFacts => ({
    names: [API_HOST, SITE_HOST], notBefore: new Date('2026-11-01T00:00:00Z'), notAfter: new Date(now.getTime() + days * 86400_000), serial: '01', fingerprint: 'AA',
  });
  /** The record as nginx sends it after the filter's substitutions (the first of each, as sub_filter_once does). */
  const filtered = (record: string, filter: string) => {
    let out = record;
    for (const [, from, to] of filter.matchAll(/^sub_filter '([^']*)' '([^']*)';$/gm)) if (out.includes(from!)) out = out.replace(from!, to!);
    return JSON.parse(out) as { status: string; data: { tls: unknown; fresh: boolean } };
  };
  // The SQL record's spacing (json_build_object) and the edge's (JSON.stringify).
  const records = ['{"status" : "ok", "checked_at" : "x", "data" : {"fresh" : true}}', '{"status":"ok","checked_at":"x","data":{"fresh":true}}'];

  it('adds the expiry and keeps "ok" while more than 14 days are left', () => {
    for (const record of records) {
      expect(filtered(record, healthFilter({ certificate: expiring(15), error: undefined }, now))).toEqual({
        status: 'ok', checked_at: 'x', data: { tls: { expires_at: '2026-12-12T12:00:00Z', obtaining: false, error: null }, fresh: true },
      });
    }
  });

  it('turns "ok" to "degraded" under 14 days, and while the certificate is being obtained, saying why', () => {
    for (const record of records) {
      expect(filtered(record, healthFilter({ certificate: expiring(13), error: undefined }, now)).status).toBe('degraded');
      const obtaining = filtered(record, healthFilter({ certificate: undefined, error: "ValueError: Requesting 127.0.0.1/dir: Connection refused; it's $down" }, now));
      expect(obtaining.status).toBe('degraded');
      expect(obtaining.data.tls).toEqual({ expires_at: null, obtaining: true, error: 'ValueError: Requesting 127.0.0.1/dir: Connection refused; it s  down' });
    }
  });
});
