// What a hostile or careless client sends, as raw bytes where an HTTP client would tidy it up:
// malformed request lines, body variants that would dodge the cache, and
// JSON-RPC params that upset the SDKs. Every answer is JSON with CORS, and internals stay internal.
import net from 'node:net';
import { describe, expect, inject, it } from 'vitest';
import { withClient } from './support/db.ts';

const { apiUrl, siteUrl, anonKey, adminUrl } = inject('stack');
const STATS = `${apiUrl}/rest/v1/rpc/landing_stats`;

interface RawAnswer { status: number; headers: Map<string, string[]>; body: string }

/** Sends `head` (the request line and headers, CRLF-separated, without the blank line) and `body` as written. */
async function raw(baseUrl: string, head: string, body = ''): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  const socket = net.connect(Number(port), hostname);
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', () => resolve());
    socket.on('error', reject);
    socket.setTimeout(10_000, () => reject(new Error('no answer within 10 s')));
    socket.write(`${head}\r\nConnection: close\r\n\r\n${body}`);
  });
  socket.destroy();
  const text = Buffer.concat(chunks).toString('latin1');
  const [top = '', ...rest] = text.split('\r\n\r\n');
  const [statusLine = '', ...lines] = top.split('\r\n');
  const headers = new Map<string, string[]>();
  for (const line of lines) {
    const [name = '', ...value] = line.split(':');
    headers.set(name.toLowerCase(), [...(headers.get(name.toLowerCase()) ?? []), value.join(':').trim()]);
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') };
}

describe('malformed request lines', () => {
  const cases: [string, string, number][] = [
    ['an invalid percent escape', 'GET /%zz HTTP/1.1', 400],
    ['an encoded NUL', 'GET /rest/v1/rpc/landing_health%00 HTTP/1.1', 400],
    ['a lowercase method', 'get / HTTP/1.1', 400],
    ['CONNECT', 'CONNECT example.com:443 HTTP/1.1', 400],
    ['.. past the root', 'GET /../../etc/passwd HTTP/1.1', 400],
    ['encoded .. past the root', 'GET /%2e%2e/%2e%2e/etc/passwd HTTP/1.1', 400],
    ['no request line at all', 'GARBAGE', 400],
    ['a URL over the header limit', `GET /${'a'.repeat(40_000)} HTTP/1.1`, 414],
    ['an unknown HTTP version', 'GET / HTTP/9.9', 505],
  ];
  for (const [host, base] of [['API host', apiUrl], ['site host', siteUrl]] as const) {
    it.each(cases)(`${host}: %s is a JSON error with CORS`, async (_name, line, status) => {
      const res = await raw(base, `${line}\r\nHost: localhost`);
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')?.[0]).toMatch(/^application\/json/);
      expect(res.headers.get('access-control-allow-origin')).toEqual(['*']);
      expect(JSON.parse(res.body)).toHaveProperty('message');
    });
  }
});

describe('the landing_stats cache', () => {
  /** Transactions the database has finished, once its statistics are flushed (they lag by up to a second). */
  const transactions = async () => withClient(adminUrl, async (c) => {
    await c.query('select pg_stat_force_next_flush()');
    await new Promise((r) => setTimeout(r, 1100));
    return Number((await c.query(`select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()`)).rows[0].n);
  });
  const post = (body: string) => fetch(STATS, { method: 'POST', body, headers: { apikey: anonKey, 'content-type': 'application/json' } });

  it('serves every spelling of the one call from one entry', async () => {
    const first = await post('{}');
    expect(first.status).toBe(200);
    const record = await first.json();
    for (const body of ['', '{ }', '{  }', '\n{\n}\n', '\t{}\t', ' ']) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(res.headers.get('x-cache-status'), JSON.stringify(body)).toMatch(/HIT|UPDATING|STALE/);
      expect(await res.json()).toEqual(record);
    }
  });

  it('answers any other body with a JSON 400 that never reaches Postgres', async () => {
    const before = await transactions();
    const bodies = ['[]', '[{}]', '[{},{}]', 'null', '""', '{"since":"2020-01-01"}', '{}{}', 'x'];
    for (let i = 0; i < 20; i++) bodies.push(`[${Array(i + 1).fill('{}').join(',')}]`);
    for (const body of bodies) {
      const res = await post(body);
      expect(res.status, body).toBe(400);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect((await res.json()).message).toMatch(/takes no arguments/);
    }
    const after = await transactions();
    // Only this test's own statistics queries (and perhaps one cache refresh) ran meanwhile.
    expect(after - before).toBeLessThan(8);
  });
});

describe('JSON-RPC params the SDKs cannot take', () => {
  const rpc = async (path: string, payload: unknown) => {
    const res = await fetch(`${siteUrl}${path}`, {
      method: 'POST',
      body: typeof payload === 'string' ? payload : JSON.stringify(payload),
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    });
    return { status: res.status, body: await res.json() as { error?: { code: number; message: string } } };
  };
  const deep = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
  const message = (extra: Record<string, unknown>) => ({ kind: 'message', role: 'user', messageId: 'm1', parts: [{ kind: 'text', text: 'stats' }], ...extra });

  it.each([
    ['/a2a', 'a number as a task id', { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 5 } }, /^Invalid params: params\.id must be a string$/],
    ['/a2a', 'a number as the message taskId', { jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: message({ taskId: 5 }) } }, /^Invalid params: params\.message\.taskId must be a string$/],
    ['/a2a', 'a number as a text part', { jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: message({ parts: [{ kind: 'text', text: 5 }] }) } }, /^Invalid params: params\.message\.parts\[0\]\.text must be a string$/],
    ['/a2a', 'metadata nested 5,000 levels deep', `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":${JSON.stringify(message({})).slice(0, -1)},"metadata":${deep(5000)}}}}`, /^Invalid params: params nest more than 32 levels deep$/],
    ['/mcp', 'a number as the tool name', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 5 } }, /^Invalid params: name: .*expected string/],
    ['/mcp', 'a number as the resource uri', { jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 5 } }, /^Invalid params: uri: .*expected string/],
    ['/mcp', 'an initialize without its fields', { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 5 } }, /^Invalid params: protocolVersion: .*expected string/],
    ['/mcp', 'arguments nested 5,000 levels deep', `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_stats","arguments":${deep(5000)}}}`, /^Invalid params: params nest more than 32 levels deep$/],
  ])('%s: %s is -32602 with a short reason', async (path, _name, payload, reason) => {
    const { body } = await rpc(path, payload);
    expect(body.error?.code).toBe(-32602);
    expect(body.error?.message).toMatch(reason);
    expect(body.error!.message.length).toBeLessThan(120);
  });
});
