// POST /mcp through the site host with the real MCP SDK client, plus raw requests for the
// transport's contract (the behaviours most likely to move between SDK releases).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

const { siteUrl } = inject('stack');
const MCP_ACCEPT = 'application/json, text/event-stream';

const rawMcp = (body: string, headers: Record<string, string> = {}) =>
  fetch(`${siteUrl}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: MCP_ACCEPT, ...headers }, body });

describe('MCP with the SDK client', () => {
  let client: Client;
  beforeAll(async () => {
    client = new Client({ name: 'edge-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${siteUrl}/mcp`)));
  });
  afterAll(async () => { await client?.close(); });

  it('introduces itself as an alpha, read-only server whose instructions carry the semantic rules', () => {
    expect(client.getServerVersion()).toMatchObject({ name: 'public-stats', version: expect.stringContaining('alpha') });
    const instructions = client.getInstructions() ?? '';
    expect(instructions).toMatch(/gross reward income/);
    expect(instructions).toMatch(/not report them as profit/);
    expect(instructions).toMatch(/estimate/);
    expect(instructions).toMatch(/annualise/);
    expect(instructions).toMatch(/updated_at/);
  });

  it('lists get_stats, get_history and get_health with output schemas and read-only annotations', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['get_health', 'get_history', 'get_stats']);
    for (const tool of tools) {
      expect(tool.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true });
      expect(tool.outputSchema?.type).toBe('object');
      expect(tool.inputSchema).toMatchObject({ type: 'object' });
    }
    const stats = tools.find((t) => t.name === 'get_stats')!;
    expect(Object.keys(stats.outputSchema?.properties ?? {})).toEqual(expect.arrayContaining(['updated_at', 'daily', 'returns', 'attribution', 'notes']));
  });

  it('get_stats returns the /api/stats record as structured content and a text summary', async () => {
    const result = await client.callTool({ name: 'get_stats', arguments: {} });
    expect(result.isError).toBeFalsy();
    const rest = await (await fetch(`${siteUrl}/api/stats`)).json();
    expect(result.structuredContent).toEqual(rest);
    const text = (result.content as { type: string; text: string }[])[0]!;
    expect(text.type).toBe('text');
    expect(text.text).toMatch(/not profit|before trading costs/);
    expect(text.text).toMatch(/updated at/);
  });

  it('get_health returns the health record', async () => {
    const result = await client.callTool({ name: 'get_health', arguments: {} });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ status: 'degraded', api_host_reachable: true });
    expect((result.content as { text: string }[])[0]!.text).toMatch(/health at .*: degraded/);
  });

  it('reads the latest stats as a resource', async () => {
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toContain('stats://latest');
    const read = await client.readResource({ uri: 'stats://latest' });
    const content = read.contents[0]! as { mimeType?: string; text?: string };
    expect(content.mimeType).toBe('application/json');
    expect(JSON.parse(content.text!)).toEqual(await (await fetch(`${siteUrl}/api/stats`)).json());
  });

  it('an unknown tool is reported as a tool error', async () => {
    const result = await client.callTool({ name: 'place_order', arguments: {} });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toMatch(/place_order not found/);
  });
});

describe('MCP raw HTTP', () => {
  it('a tools/call works without initialize (stateless) and issues no session id', async () => {
    const res = await rawMcp(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_stats', arguments: {} } }));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    const body = await res.json();
    expect(body.result.structuredContent.attribution.url).toBe(siteUrl);
  });

  it('a missing Accept gets 406', async () => {
    const res = await fetch(`${siteUrl}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(406);
    expect((await res.json()).error.message).toMatch(/Not Acceptable/);
  });

  it('malformed JSON gets 400 with a JSON-RPC parse error', async () => {
    const res = await rawMcp('{"jsonrpc":"2.0",');
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe(-32700);
  });

  it('advertises no list-change notifications, which a stateless JSON server can never send', async () => {
    const res = await rawMcp(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }));
    const { result } = await res.json() as { result: { capabilities: Record<string, { listChanged?: boolean }> } };
    expect(result.capabilities.tools).toEqual({ listChanged: false });
    expect(result.capabilities.resources).toEqual({ listChanged: false });
  });

  it.each([
    ['a batch', JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { jsonrpc: '2.0', id: 2, method: 'ping' }])],
    ['an empty batch', '[]'],
  ])('answers %s with -32600 (batches left the protocol in 2025-06-18)', async (_name, body) => {
    const res = await rawMcp(body);
    const answer = await res.json() as { id: unknown; error?: { code: number; message: string } };
    expect(answer.id).toBeNull();
    expect(answer.error?.code).toBe(-32600);
    expect(answer.error?.message).toMatch(/batches are not supported/);
  });

  it('an unknown method gets -32601', async () => {
    const res = await rawMcp(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/frobnicate' }));
    expect((await res.json()).error.code).toBe(-32601);
  });

  it('GET and DELETE answer 405 (no idle SSE stream)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${siteUrl}/mcp`, { method, headers: { accept: 'text/event-stream' } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST, OPTIONS');
    }
  });
});
