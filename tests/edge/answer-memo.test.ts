// The MCP and A2A answers an edge keeps: a request asked again is answered with exactly the bytes the
// SDK makes for it (its own ids in place), and never with figures older than the ones it would read.
import http from 'node:http';
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

describe('the kept answers an edge sends before its app', () => {
  interface Wire { status: number; headers: string[]; body: string }
  /**
   * A POST as nginx sends it (a plain Host, the body's length given) and its answer as it came on
   * the wire: the status, every header line but Date in its order, the body.
   */
  const wire = (edge: Listening, path: string, message: object, headers: Record<string, string> = {}) => new Promise<Wire>((resolve, reject) => {
    const body = JSON.stringify(message);
    const request = http.request(`${edge.url}${path}`, {
      method: 'POST',
      agent: false,
      // A chunked body goes without its length.
      headers: { host: 'edge', 'content-type': 'application/json', ...(headers['transfer-encoding'] ? {} : { 'content-length': String(Buffer.byteLength(body)) }), ...headers },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const lines: string[] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) if (res.rawHeaders[i]!.toLowerCase() !== 'date') lines.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`);
        resolve({ status: res.statusCode!, headers: lines, body: Buffer.concat(chunks).toString() });
      });
    });
    request.on('error', reject);
    request.end(body);
  });

  /** What the app alone (no answer kept yet, so the SDK's) answers to the same request. */
  const bySdk = async (path: string, message: object, headers: Record<string, string>) => {
    const app = await serveEdge(edgeConfig({ apiUpstream: apiUrl, anonKey }), { appOnly: true });
    try {
      return await wire(app, path, message, headers);
    } finally {
      await app.close();
    }
  };

  /** The answer an edge sent without its app, after asking once so that it kept one, and the SDK's to the same request. */
  const keptAndMade = (edge: Listening & { reachedApp: number }, path: string, message: () => object, headers: Record<string, string>, same: (kept: Wire, made: Wire) => boolean) =>
    eventually(async () => {
      await wire(edge, path, message(), headers);
      const before = edge.reachedApp;
      const kept = await wire(edge, path, message(), headers);
      return { kept, reachedApp: edge.reachedApp - before, made: await bySdk(path, message(), headers) };
    }, ({ kept, reachedApp, made }) => reachedApp === 0 && same(kept, made), 10_000);

  let edge: Listening & { reachedApp: number };
  beforeAll(async () => { edge = await serveEdge(edgeConfig({ apiUpstream: apiUrl, anonKey })); });
  afterAll(async () => { await edge?.close(); });

  it('answer MCP with what the SDK makes, byte for byte and header for header', async () => {
    const asked: [object, Record<string, string>][] = [
      [tool(1, 'get_stats'), {}],
      [tool('a-string-id', 'get_stats'), { 'mcp-protocol-version': '2025-06-18' }],
      [tool(3, 'get_stats'), { 'mcp-protocol-version': '2025-03-26', 'mcp-session-id': 'a-session' }],
      // (get_history is never kept here: these edges cannot read the log it names.)
      [{ jsonrpc: '2.0', id: 5, method: 'tools/list' }, {}],
      [{ jsonrpc: '2.0', id: 6, method: 'resources/read', params: { uri: 'stats://latest' } }, {}],
      [{ jsonrpc: '2.0', id: 7, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } } }, {}],
    ];
    for (const [message, headers] of asked) {
      const { kept, made } = await keptAndMade(edge, '/mcp', () => message, { accept: ACCEPT, ...headers }, (a, b) => JSON.stringify(a) === JSON.stringify(b));
      expect(kept.status).toBe(200);
      expect(kept).toEqual(made);
    }
  });

  it('answer A2A with what the SDK makes, its own fresh ids aside', async () => {
    /** The body with the ids an answer makes for itself marked; with a context given, that context stays. */
    const marked = (answer: Wire, contextGiven: boolean) => {
      let body = answer.body.replace(/"messageId":"[0-9a-f-]{36}"/, '"messageId":"·"');
      if (!contextGiven) body = body.replace(/"contextId":"[0-9a-f-]{36}"/, '"contextId":"·"');
      return { ...answer, body };
    };
    const asked: [() => object, Record<string, string>, boolean][] = [
      [() => ({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: { kind: 'message', role: 'user', messageId: crypto.randomUUID(), parts: [{ kind: 'text', text: 'latest stats' }] } } }), {}, false],
      [() => ({ jsonrpc: '2.0', id: 'b', method: 'message/send', params: { message: { kind: 'message', role: 'user', messageId: crypto.randomUUID(), contextId: 'ctx-a', parts: [{ kind: 'text', text: 'is it healthy?' }] } } }), {}, true],
      [() => ({ jsonrpc: '2.0', id: 3, method: 'SendMessage', params: { message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: 'latest stats' }] } } }), { 'a2a-version': '1.0' }, false],
    ];
    for (const [message, headers, contextGiven] of asked) {
      const { kept, made } = await keptAndMade(edge, '/a2a', message, headers, (a, b) => JSON.stringify(marked(a, contextGiven)) === JSON.stringify(marked(b, contextGiven)));
      expect(kept.status).toBe(200);
      expect(marked(kept, contextGiven)).toEqual(marked(made, contextGiven));
      expect(kept.body).not.toContain('"messageId":"·"');
    }
  });

  it('leave to the app what they cannot answer exactly', async () => {
    const message = tool(8, 'get_stats');
    const { kept } = await keptAndMade(edge, '/mcp', () => message, { accept: ACCEPT }, (a, b) => a.body === b.body);
    // A gateway filling its cache gets no CORS headers; a Host the app checks itself, a query, a
    // body of no given length: each is the app's to answer.
    const others: [string, Record<string, string>][] = [
      ['/mcp', { 'x-cache-fill': '1' }],
      ['/mcp', { host: 'EDGE' }],
      ['/mcp?x=1', {}],
      ['/mcp', { 'transfer-encoding': 'chunked' }],
    ];
    for (const [path, headers] of others) {
      const before = edge.reachedApp;
      const answer = await wire(edge, path, message, { accept: ACCEPT, ...headers });
      expect(edge.reachedApp - before, `${path} ${JSON.stringify(headers)}`).toBe(1);
      expect(answer.status).toBe(200);
      expect(answer.body).toBe(kept.body);
    }
  });
});
