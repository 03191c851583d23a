// /api/health while parts of the stack are down: HTTP 200 and status "down" every time,
// then recovery. This file stops parts of a stack, so it starts its own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { downHealth, edgeDownHealth } from '../../contract/records.ts';
import { GATEWAY_UNAVAILABLE, UNAVAILABLE } from '../../contract/texts/rules.ts';
import { freePort } from '../../stack/processes.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { edgeConfig, eventually, serveEdge } from '../support/edge.ts';

let stack: TestStack;
let siteUrl: string;

const health = async () => {
  const res = await fetch(`${siteUrl}/api/health`);
  // Never an HTTP error while the site host is up, whatever is down behind it.
  expect(res.status).toBe(200);
  return res.json() as Promise<{ status: string; data: unknown; writer: unknown; api_host_reachable: boolean | null; checked_at: string }>;
};

beforeAll(async () => {
  stack = await startTestStack({ seedDemo: true });
  siteUrl = stack.cfg.siteUrl;
});
afterAll(async () => { await stack?.destroy(); });

describe('/api/health through outages', () => {
  it('is up before anything stops', async () => {
    const body = await health();
    expect(body.status).not.toBe('down');
    expect(body.api_host_reachable).toBe(true);
  });

  it('reports "down" with null data and writer while PostgREST is stopped, then recovers', async () => {
    await stack.stopPostgrest();
    const down = await eventually(health, (b) => b.status === 'down');
    expect(down).toMatchObject({ data: null, writer: null, api_host_reachable: true });
    expect(Date.parse(down.checked_at)).toBeGreaterThan(Date.now() - 60_000);
    await stack.startPostgrest();
    await eventually(health, (b) => b.status !== 'down');
  });

  it('reports "down" while Postgres is stopped, then recovers once it is back', async () => {
    await stack.db.stop();
    const down = await eventually(health, (b) => b.status === 'down');
    expect(down).toMatchObject({ data: null, writer: null, api_host_reachable: true });
    await stack.db.start();
    const back = await eventually(health, (b) => b.status !== 'down', 60_000);
    expect(back.data).not.toBeNull();
  }, 90_000);

  it('is still 200 "down" from the gateway while the edge server itself is stopped', async () => {
    await stack.stopEdge();
    try {
      const body = await health();
      // The gateway's own copies of the "down" record and of its 503, word for word the contract's.
      expect(body).toEqual(edgeDownHealth(body.checked_at));
      const other = await fetch(`${siteUrl}/api/nope`);
      expect(other.status).toBe(503);
      expect(await other.json()).toEqual({ message: GATEWAY_UNAVAILABLE.site });
    } finally {
      await stack.startEdge();
    }
    expect((await health()).status).not.toBe('down');
  });
});

describe('the edge when the API host cannot be reached at all', () => {
  it('reports "down" with api_host_reachable false, 503 for stats, and an MCP tool error', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const edge = await serveEdge(edgeConfig({ apiUpstream: closed, anonKey: stack.cfg.ANON_KEY }));
    try {
      const h = await (await fetch(`${edge.url}/api/health`)).json();
      expect(h).toEqual({ ...downHealth(h.checked_at), api_host_reachable: false });

      const stats = await fetch(`${edge.url}/api/stats`);
      expect(stats.status).toBe(503);
      expect(stats.headers.get('retry-after')).toBe('30');
      expect(stats.headers.get('cache-control')).toBe('no-store');
      expect(await stats.json()).toEqual({ message: UNAVAILABLE.http });

      const page = await fetch(`${edge.url}/`);
      expect(page.status).toBe(503);
      expect(await page.text()).toContain('Figures unavailable');

      const client = new Client({ name: 'edge-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${edge.url}/mcp`)));
      const result = await client.callTool({ name: 'get_stats', arguments: {} });
      expect(result.isError).toBe(true);
      expect(result.content).toEqual([{ type: 'text', text: UNAVAILABLE.mcpTool }]);
      await client.close();
    } finally {
      await edge.close();
    }
  });
});
