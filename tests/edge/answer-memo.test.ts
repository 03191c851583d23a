// The MCP and A2A answers an edge keeps: a request asked again is answered with exactly the bytes the
// SDK makes for it (its own ids in place), and never with figures older than the ones it would read.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, todayUtc } from '../../contract/dates.ts';
import { withClient } from '../support/db.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { cuttableRelay, edgeConfig, eventually, serveEdge, type Listening } from '../support/edge.ts';

let stack: TestStack;
let apiUrl: string;
let anonKey: string;
const sql = (text: string, values: unknown[]) => withClient(stack.db.adminUrl, (c) => c.query(text, values));
const ACCEPT = 'application/json, text/event-stream';

const call = (edge: Listening, message: object, headers: Record<string, string> = {}) =>
  fetch(`${edge.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers }, body: JSON.stringify(message) });
const answered = async (res: Response) => ({ status: res.status, type: res.headers.get('content-type'), text: await res.text() });

/** What `ask` answers from an edge that has kept nothing yet. */
async function fromFreshEdge<T>(ask: (edge: Listening) => Promise<T>): Promise<T> {
  const edge = await serveEdge(edgeConfig({ apiUpstream: apiUrl, anonKey }));
  try {
    return await ask(edge);
  } finally {
    await edge.close();
  }
}

const tool = (id: string | number, name: string, args: object = {}) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

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

/** A new accrual observation, a second ahead, moves the stats' updated_at; returns that time. */
async function newAccrual(): Promise<string> {
  const at = new Date(Date.now() + 1000).toISOString().replace(/\.\d+Z$/, 'Z');
  await sql('insert into stats.accrual (observed_at, usd, markets) values ($1, 1, 1)', [at]);
  return at;
}

describe('the answers an MCP edge keeps', () => {
  /** The bytes and headers the SDK makes for `message`, from an edge that has kept nothing yet. */
  const fresh = (message: object) => fromFreshEdge(async (edge) => answered(await call(edge, message)));

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
        const kept = await answered(await call(warm, message));
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
    // Once the edge's own cache has the new accrual, so must the answer.
    const at = await newAccrual();
    expect(await eventually(updatedAt, (value) => value !== before, 10_000)).toBe(at);
  });

  it('keep no answer made while the figures could not be read', async () => {
    // The edge reads the API host through a relay that can be cut.
    const relay = await cuttableRelay(apiUrl);
    const edge = await serveEdge(edgeConfig({ apiUpstream: relay.url, anonKey }));
    try {
      const unavailable = await (await call(edge, tool(4, 'get_stats'))).json();
      expect(unavailable.result.isError).toBe(true);
      relay.cut = false;
      const stats = await (await call(edge, tool(4, 'get_stats'))).json();
      expect(stats.result.isError).toBeFalsy();
      expect(stats.result.structuredContent.updated_at).toBeTypeOf('string');
    } finally {
      await edge.close();
      await relay.close();
    }
  });
});

describe('the answers an A2A edge keeps', () => {
  /** A message/send (protocol 0.3) or SendMessage (1.0) asking in words, with a message id of its own each time it is made. */
  const send = (protocol: '0.3' | '1.0', id: string | number, text: string, given?: string) => (contextId = given) => ({
    body: protocol === '0.3'
      ? { jsonrpc: '2.0', id, method: 'message/send', params: { message: { kind: 'message', role: 'user', messageId: crypto.randomUUID(), ...(contextId ? { contextId } : {}), parts: [{ kind: 'text', text }] } } }
      : { jsonrpc: '2.0', id, method: 'SendMessage', params: { message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', ...(contextId ? { contextId } : {}), parts: [{ text }] } } },
    headers: (protocol === '1.0' ? { 'a2a-version': '1.0' } : {}) as Record<string, string>,
  });
  type Ask = ReturnType<typeof send>;
  const ask = (edge: Listening, request: ReturnType<Ask>) =>
    fetch(`${edge.url}/a2a`, { method: 'POST', headers: { 'content-type': 'application/json', ...request.headers }, body: JSON.stringify(request.body) });

  /** The ids an answer made for itself, and its text with them replaced by a mark. */
  const ownIds = (text: string, contextGiven: boolean) => {
    const messageId = /"messageId":"([^"]+)"/.exec(text)?.[1];
    const contextId = /"contextId":"([^"]+)"/.exec(text)?.[1];
    let marked = text.replace(`"messageId":"${messageId}"`, '"messageId":"·"');
    if (!contextGiven) marked = marked.replace(`"contextId":"${contextId}"`, '"contextId":"·"');
    return { messageId, contextId, marked };
  };

  it('answer a request asked again with the bytes the SDK makes for it, its own ids aside', async () => {
    const requests: [Ask, string | undefined][] = [
      [send('0.3', 1, 'latest stats'), undefined],
      [send('0.3', 'a-string-id', 'is the service healthy?'), undefined],
      [send('0.3', 3, 'the whole track record'), undefined],
      [send('0.3', 4, 'latest stats', 'my-context'), 'my-context'],
      [send('1.0', 5, 'latest stats'), undefined],
      [send('1.0', 6, 'health please', 'ctx-b'), 'ctx-b'],
    ];
    for (const [request, contextId] of requests) {
      const { first, kept, made } = await eventually(async () => {
        const first = await answered(await ask(warm, request()));
        const kept = await answered(await ask(warm, request()));
        return { first, kept, made: await fromFreshEdge(async (edge) => answered(await ask(edge, request()))) };
      }, ({ kept, made }) => {
        expect(kept.status).toBe(200);
        expect(kept.type).toBe(made.type);
        return ownIds(kept.text, contextId !== undefined).marked === ownIds(made.text, contextId !== undefined).marked;
      }, 10_000);
      expect(JSON.parse(kept.text).result).toBeDefined();
      // Every answer is a new Message: an id of its own, and a new context unless one was given.
      const [a, b] = [ownIds(first.text, false), ownIds(kept.text, false)];
      expect(a.messageId).toMatch(/^[0-9a-f-]{36}$/);
      expect(b.messageId).toMatch(/^[0-9a-f-]{36}$/);
      expect(a.messageId).not.toBe(b.messageId);
      if (contextId) {
        expect([a.contextId, b.contextId]).toEqual([contextId, contextId]);
        // Another context given: the same answer, in that context.
        const other = ownIds(await (await ask(warm, request(`${contextId}-other`))).text(), false);
        expect(other.contextId).toBe(`${contextId}-other`);
      } else {
        expect(a.contextId).not.toBe(b.contextId);
      }
    }
  });

  const updatedAt = async (edge: Listening) => {
    const reply = await (await ask(edge, send('0.3', 2, 'latest stats')())).json();
    return reply.result.parts[1]?.data?.updated_at as string | undefined;
  };

  it('never answer with figures older than the ones the request would read', async () => {
    const before = await updatedAt(warm);
    const at = await newAccrual();
    expect(await eventually(() => updatedAt(warm), (value) => value !== before, 10_000)).toBe(at);
  });

  it('keep no answer made while the figures could not be read', async () => {
    const relay = await cuttableRelay(apiUrl);
    const edge = await serveEdge(edgeConfig({ apiUpstream: relay.url, anonKey }));
    try {
      expect(await updatedAt(edge)).toBeUndefined();
      relay.cut = false;
      expect(await updatedAt(edge)).toBeTypeOf('string');
    } finally {
      await edge.close();
      await relay.close();
    }
  });
});
