// A stack serving HTTPS offline: Debian's pebble stands in for Let's Encrypt, pebble-challtestsrv is the
// DNS it validates through (the two test names resolve to 127.0.0.1), Debian's certbot obtains the
// certificate, and the real nginx serves it; with clients that trust pebble's root alone.
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { LookupFunction } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { promisify } from 'node:util';
import { Agent, fetch as undiciFetch } from 'undici';
import { ROOT_DIR } from '../../config/checkout.ts';
import { configFromEnv } from '../../config/config.ts';
import type { Env } from '../../config/settings.ts';
import { completeSecrets } from '../../stack/secrets.ts';
import { freePort } from '../../stack/processes.ts';
import { startStack, type Stack } from '../../stack/stack.ts';
import { startPebble, type Pebble } from './acme.ts';

export const SITE_HOST = 'stats.example.test';
export const API_HOST = 'api.stats.example.test';

export interface Handshake { authorized: boolean; error?: Error; cert: tls.DetailedPeerCertificate; protocol: string | null }

export interface HttpsStack {
  pebble: Pebble;
  /** The stack as first started: a test that restarts it holds the new one itself. */
  stack: Stack;
  env: Env;
  /** Pebble's root certificate, the only one the clients trust. */
  root: string;
  siteUrl: string;
  apiUrl: string;
  httpsPort: number;
  httpPort: number;
  /** fetch over https to the test names, trusting pebble's root only. */
  fetch: typeof fetch;
  /** The certificate a TLS handshake with `host` gets, checked against pebble's root alone. */
  handshake(host: string, options?: tls.ConnectionOptions): Promise<Handshake>;
  /** A plain-HTTP request to the HTTP_PORT listener, naming `host`. */
  plainGet(host: string, pathAndQuery: string): Promise<{ status: number; location?: string; body: string }>;
  /** `npm run tls -- <args>` with the stack's configuration, as an operator runs it beside `npm start`. */
  tlsCommand(...args: string[]): Promise<string>;
  /** Closes the clients, stops pebble and removes the data directory; stopping the stack is the caller's. */
  close(): Promise<void>;
}

/** The test names at 127.0.0.1, everything else as the system resolves it. */
const lookup: LookupFunction = (hostname, options, callback) => {
  if (hostname !== SITE_HOST && hostname !== API_HOST) throw new Error(`unexpected host ${hostname}`);
  if (options.all) (callback as (error: null, addresses: { address: string; family: number }[]) => void)(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
};

/** Starts pebble and a stack whose two public URLs are https:// test names, and waits for its first certificate. */
export async function startHttpsStack(log: (line: string) => void): Promise<HttpsStack> {
  const [httpsPort, httpPort] = [await freePort(), await freePort()];
  const siteUrl = `https://${SITE_HOST}:${httpsPort}`;
  const apiUrl = `https://${API_HOST}:${httpsPort}`;
  const pebble = await startPebble([SITE_HOST, API_HOST], httpPort);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'public-stats-tls-'));
  let stack: Stack | undefined;
  try {
    // nginx's and certbot's user (nobody, when the tests run as root) passes through it to the webroot.
    chmodSync(dataDir, 0o755);
    const env: Env = {
      ...(await completeSecrets({})),
      DATA_DIR: dataDir,
      NGINX_WORKERS: '1',
      EDGE_WORKERS: '1',
      EDGE_WARM_SECONDS: '0',
      SITE_URL: siteUrl,
      API_URL: apiUrl,
      HTTPS_PORT: String(httpsPort),
      HTTP_PORT: String(httpPort),
      ACME_DIRECTORY_URL: pebble.directoryUrl,
      ACME_CA_BUNDLE: pebble.caBundle,
    };
    for (const name of ['API_PORT', 'SITE_PORT', 'EDGE_PORT', 'POSTGREST_PORT', 'POSTGREST_ADMIN_PORT', 'POSTGRES_PORT']) env[name] = String(await freePort());
    const started = Date.now();
    stack = await startStack(configFromEnv(env), { log, seedDemo: true });
    await stack.tls!.served;
    // A figure for the report, not an assertion: from `npm start`'s first step to a served certificate.
    console.log(`tls: first certificate served ${((Date.now() - started) / 1000).toFixed(1)} s after the start began`);
    const root = await pebble.root();
    const dispatcher = new Agent({ connect: { ca: root, lookup } });
    const cliEnv = { PATH: process.env.PATH ?? '', ENV_FILE: '/dev/null', ...Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined)) };
    return {
      pebble, stack, env, root, siteUrl, apiUrl, httpsPort, httpPort,
      fetch: ((input: string | URL, init?: RequestInit) => undiciFetch(input, { ...(init as object), dispatcher })) as unknown as typeof fetch,
      handshake: (host, options = {}) => new Promise((resolve, reject) => {
        const socket = tls.connect({ host: '127.0.0.1', port: httpsPort, servername: host, ca: root, rejectUnauthorized: false, ...options }, () => {
          resolve({ authorized: socket.authorized, error: socket.authorizationError, cert: socket.getPeerCertificate(true), protocol: socket.getProtocol() });
          socket.end();
        });
        socket.once('error', reject);
      }),
      plainGet: (host, pathAndQuery) => new Promise((resolve, reject) => {
        http.get({ host: '127.0.0.1', port: httpPort, path: pathAndQuery, headers: { host } }, (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => { body += chunk.toString(); });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, location: res.headers.location, body }));
        }).once('error', reject);
      }),
      tlsCommand: async (...args) => {
        const { stdout } = await promisify(execFile)(process.execPath, [path.join(ROOT_DIR, 'stack', 'tls.ts'), ...args], { env: cliEnv, timeout: 120_000 });
        return stdout;
      },
      close: async () => {
        await dispatcher.close();
        await pebble.stop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    // Nothing of a start that failed outlives it.
    await stack?.stop();
    await pebble.stop();
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
}
