// The MCP answers an edge keeps: a request asked again is answered with exactly the bytes the SDK
// makes for it (its own id in place), and never with figures older than the ones it would read.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, todayUtc } from '../../contract/dates.ts';
import { withClient } from '../support/db.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { edgeConfig, eventually, serveEdge, type Listening } from '../support/edge.ts';

let stack: TestStack;
let apiUrl: string;
let anonKey: string;
const sql = (text: string, values: unknown[]) => withClient(stack.db.adminUrl, (c) => c.query(text, values));
const ACCEPT = 'application/json, text/event-stream';

const call = (edge: Listening, message: object, headers: Record<string, string> = {}) =>
  fetch(`${edge.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers }, body: JSON.stringify(message) });

const tool = (id: string | number, name: string, args: object = {}) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

describe('the answers an MCP edge keeps', () => {
  let warm: Listening;
  beforeAll(async () => {
    // Demo data: every figure and a history of nights.
    stack = await startTestStack({ seedDemo: true });
    [apiUrl, anonKey] = [stack.cfg.apiUrl, stack.cfg.ANON_KEY];
    warm = await serveEdge(edgeConfig({ apiUpstream: apiUrl, anonKey, statsTtlMs: 500 }));
  });
  afterAll(async () => {
    await warm?.close();
    await stack?.destroy();
  });

  /** The bytes and headers the SDK makes for `message`, from an edge that has kept nothing yet. */
  const fresh = async (message: object, headers: Record<string, string> = {}) => {
    const edge = await serveEdge(edgeConfig({ apiUpstream: apiUrl, anonKey }));
    try {
      const res = await call(edge, message, headers);
      return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
    } finally {
      await edge.close();
    }
  };

  it('answer a request asked again with the bytes the SDK makes for it, whatever its id', async () => {
    const requests = [
      tool(1, 'get_stats'),
      tool('a-string-id', 'get_stats'),
      tool(7, 'get_history', { to: addDays(todayUtc(), -5) }),
      tool(8, 'get_history', { from: addDays(todayUtc(), -5) }),
      { jsonrpc: '2.0', id: 9, method: 'tools/list' },
      { jsonrpc: '2.0', id: 10, method: 'resources/read', params: { uri: 'stats://latest' } },
    ];
    // Asked twice each, so the second comes from what the first kept; the figures must not move
    // between the warm edge's answer and the fresh one, so they are read within one TTL's retry.
    for (const message of requests) {
      await eventually(async () => {
        await call(warm, message);
        const again = await call(warm, message);
        const kept = { status: again.status, type: again.headers.get('content-type'), text: await again.text() };
        return { kept, made: await fresh(message) };
      }, ({ kept, made }) => {
        expect(kept.status).toBe(200);
        return JSON.stringify(kept) === JSON.stringify(made);
      }, 10_000);
    }
    // Arguments are part of what is kept: two ranges, two answers.
    const [fromRange, toRange] = await Promise.all([requests[2]!, requests[3]!].map(async (message) => (await (await call(warm, message)).json()).result.structuredContent));
    expect(fromRange).not.toEqual(toRange);
  });

  it('never answer with figures older than the ones the request would read', async () => {
    const updatedAt = async () => (await (await call(warm, tool(2, 'get_stats'))).json()).result.structuredContent.updated_at as string;
    const before = await updatedAt();
    // A new accrual observation moves updated_at; once the edge's own cache has it, so must the answer.
    const at = new Date(Date.now() + 1000).toISOString().replace(/\.\d+Z$/, 'Z');
    await sql('insert into stats.accrual (observed_at, usd, markets) values ($1, 1, 1)', [at]);
    expect(await eventually(updatedAt, (value) => value !== before, 10_000)).toBe(at);
  });

  it('keep no answer made while the figures could not be read', async () => {
    // The edge reads the API host through a relay that can be cut.
    let cut = true;
    const relay = http.createServer(async (req, res) => {
      if (cut) { res.writeHead(503, { 'content-type': 'application/json' }).end('{"message":"cut"}'); return; }
      const upstream = await fetch(apiUrl + req.url, { headers: { apikey: String(req.headers.apikey ?? '') } });
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' }).end(Buffer.from(await upstream.arrayBuffer()));
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const edge = await serveEdge(edgeConfig({ apiUpstream: `http://127.0.0.1:${(relay.address() as AddressInfo).port}`, anonKey }));
    try {
      const unavailable = await (await call(edge, tool(4, 'get_stats'))).json();
      expect(unavailable.result.isError).toBe(true);
      cut = false;
      const answered = await (await call(edge, tool(4, 'get_stats'))).json();
      expect(answered.result.isError).toBeFalsy();
      expect(answered.result.structuredContent.updated_at).toBeTypeOf('string');
    } finally {
      await edge.close();
      relay.closeAllConnections();
      await new Promise((resolve) => relay.close(resolve));
    }
  });
});
