// What reaches PostgREST when a client sends its credentials twice, or wrong: a recording proxy
// stands where the stack's PostgREST listened and passes every request on to a real PostgREST.
// nginx decides on the credentials it reads, and none a client sent ever goes past it. This file
// replaces a part of a stack, so it starts its own (with the API microcache off, so every call
// goes through).
import { spawnSync } from 'node:child_process';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findNginx } from '../stack/nginx.ts';
import { startPostgrest } from '../stack/postgrest.ts';
import { freePort, type Child } from '../stack/processes.ts';
import { startTestStack, type TestStack } from './support/stack.ts';

let stack: TestStack;
let postgrest: Child;
let recorder: http.Server;
/** The headers of every request that reached PostgREST, as sent (lower-cased names). */
const received: { url: string; names: string[] }[] = [];

beforeAll(async () => {
  stack = await startTestStack({ env: { API_MICROCACHE_SECONDS: '0' } });
  const { cfg } = stack;
  const behind = { ...cfg, postgrestPort: await freePort(), postgrestAdminPort: await freePort() };
  postgrest = await startPostgrest(behind, stack.db.urlFor('authenticator'), () => {});
  await stack.stopPostgrest();
  recorder = http.createServer((req, res) => {
    received.push({ url: req.url ?? '', names: req.rawHeaders.filter((_, i) => i % 2 === 0).map((name) => name.toLowerCase()) });
    const upstream = http.request({ host: cfg.bindHost, port: behind.postgrestPort, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => recorder.listen(cfg.postgrestPort, cfg.bindHost, resolve));
});

afterAll(async () => {
  await new Promise((resolve) => recorder?.close(resolve));
  await postgrest?.stop();
  await stack?.destroy();
});

/** A GET with these headers exactly as listed, repeated names included. */
function get(path: string, headers: [string, string][]): Promise<{ status: number; cors: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, stack.cfg.apiUrl);
    // A list of headers is sent as it is: Host included.
    const request = http.request(url, { headers: [['Host', url.host], ...headers].flat() }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => { body += c.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, cors: res.headers['access-control-allow-origin'] as string | undefined, body }));
    });
    request.on('error', reject);
    request.end();
  });
}

/** nginx before 1.23 reads only the first of repeated headers; later versions join them with ", ". */
function readsFirstHeaderOnly(): boolean {
  // nginx -v writes its version to stderr.
  const { stderr } = spawnSync(findNginx(), ['-v'], { encoding: 'utf8' });
  const [major, minor] = (stderr.match(/nginx\/(\d+)\.(\d+)/) ?? []).slice(1).map(Number);
  if (major === undefined || minor === undefined) throw new Error(`nginx -v printed no version: ${stderr}`);
  return major === 1 && minor < 23;
}

describe('credentials on the API host', () => {
  const key = () => stack.cfg.ANON_KEY;
  const paths = ['/rest/v1/rpc/landing_stats', '/rest/v1/rpc/landing_health'];

  it.each(paths)('%s: PostgREST receives no credential a client sent, however many it sent', async (path) => {
    const before = received.length;
    const cases: [string, [string, string][], number][] = [
      ['the key', [['apikey', key()]], 200],
      ['the key in both headers', [['apikey', key()], ['Authorization', `Bearer ${key()}`]], 200],
      ['the key, then another apikey', [['apikey', key()], ['apikey', 'wrong']], readsFirstHeaderOnly() ? 200 : 401],
      ['the key twice', [['apikey', key()], ['apikey', key()]], readsFirstHeaderOnly() ? 200 : 401],
      ['another apikey, then the key', [['apikey', 'wrong'], ['apikey', key()]], 401],
      ['a wrong key alone', [['apikey', 'wrong']], 401],
      ['a wrong bearer alone', [['Authorization', 'Bearer wrong']], 401],
      ['the key and a wrong bearer', [['apikey', key()], ['Authorization', 'Bearer wrong']], 401],
      ['two bearer headers', [['Authorization', `Bearer ${key()}`], ['Authorization', `Bearer ${key()}`]], 400],
    ];
    for (const [name, headers, status] of cases) {
      const answer = await get(path, headers);
      expect(answer.status, `${name}: ${answer.body}`).toBe(status);
      expect(JSON.parse(answer.body), name).toBeTypeOf('object');
      expect(answer.cors, name).toBe('*');
    }
    const passed = cases.filter(([, , status]) => status === 200).length;
    const reached = received.slice(before);
    // Each call that passed reached PostgREST (the edge signs the records, so they go through it).
    expect(reached.length).toBe(passed);
    for (const request of reached) {
      expect(request.url).toMatch(/^\/rpc\/landing_(stats|health)/);
      expect(request.names).not.toContain('apikey');
      expect(request.names).not.toContain('authorization');
    }
  });
});
