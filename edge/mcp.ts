// POST /mcp: a read-only MCP server over Streamable HTTP, stateless, JSON responses (alpha).
// An McpServer binds to one transport and a stateless transport serves one request, so both are
// built per request; the figures come from the shared cache.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import {
  ErrorCode,
  LATEST_PROTOCOL_VERSION,
  McpError,
  type CallToolResult,
  type Implementation,
  type Resource,
  type ServerCapabilities,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { EdgeConfig } from './config.ts';
import type { Figures } from './figures.ts';
import { z } from 'zod';
import { parseRange, withinRange } from './history.ts';
import { createMcpMemo } from './mcp-memo.ts';
import { SITE_PATHS } from '../contract/paths.ts';
import { HistoryRecordSchema, PublishedHealthSchema, PublishedStatsSchema } from '../contract/records.ts';
import { INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, paramsProblem, publicError, type RpcError } from './rpc-errors.ts';
import { SERVICE_NAME, UNAVAILABLE, UNAVAILABLE_MESSAGE } from '../contract/texts/rules.ts';
import { healthSummary, historySummary, mcpInstructions, statsSummary } from '../contract/texts/summaries.ts';

export const MCP_SERVER_NAME = 'public-stats';
export const MCP_SERVER_VERSION = '0.1.0-alpha';
export const STATS_RESOURCE_URI = 'stats://latest';

// The SDK builds a fresh Ajv instance per Server unless given one: about a quarter of a tools/call's
// CPU. It is only used for elicitation, which this server never does, so one instance serves all.
const sharedValidator = new AjvJsonSchemaValidator();

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

const unavailable = (): CallToolResult => ({
  isError: true,
  content: [{ type: 'text', text: UNAVAILABLE.mcpTool }],
});

function buildServer(cfg: Pick<EdgeConfig, 'siteUrl'>, figures: Figures): McpServer {
  const server = new McpServer(
    { name: MCP_SERVER_NAME, title: `${SERVICE_NAME} (alpha)`, version: MCP_SERVER_VERSION, websiteUrl: cfg.siteUrl },
    { instructions: mcpInstructions(cfg), jsonSchemaValidator: sharedValidator },
  );
  server.registerTool('get_stats', {
    title: 'Get the public statistics',
    description:
      "Nightly gross reward payouts (last 16 settled nights), today's in-progress accrual estimate, market breadth, all-time gross totals, the capital snapshot and the trailing-window returns with trading costs. Gross figures are not profit; cite updated_at.",
    outputSchema: PublishedStatsSchema,
    annotations: { title: 'Get the public statistics', ...READ_ONLY },
  }, async () => {
    const stats = await figures.stats().catch(() => undefined);
    if (!stats) return unavailable();
    return { content: [{ type: 'text', text: statsSummary(stats.value) }], structuredContent: stats.value };
  });
  server.registerTool('get_history', {
    title: 'Get the whole track record',
    description:
      'Every settled night since since_date, oldest first: the gross reward payout, the running gross total, that date\'s trading cost and the capital base the returns use. Optional from/to (YYYY-MM-DD, inclusive) narrow it. Gross figures are not profit; cite updated_at.',
    inputSchema: {
      from: z.iso.date().optional().describe('First night to include (YYYY-MM-DD, UTC).'),
      to: z.iso.date().optional().describe('Last night to include (YYYY-MM-DD, UTC).'),
    },
    outputSchema: HistoryRecordSchema,
    annotations: { title: 'Get the whole track record', ...READ_ONLY },
  }, async (args) => {
    const range = parseRange(args);
    if ('error' in range) return { isError: true, content: [{ type: 'text', text: range.error }] };
    const history = await figures.history().catch(() => undefined);
    if (!history) return unavailable();
    const record = withinRange(history.value, range);
    return { content: [{ type: 'text', text: historySummary(record, cfg.siteUrl) }], structuredContent: record };
  });
  server.registerTool('get_health', {
    title: 'Get data freshness and writer liveness',
    description: 'Whether the payout and accrual data are fresh and the writer is alive, and on a read replica how far its data trail the primary: status "ok", "degraded" or "down".',
    outputSchema: PublishedHealthSchema,
    annotations: { title: 'Get data freshness and writer liveness', ...READ_ONLY },
  }, async () => {
    const health = await figures.health();
    return { content: [{ type: 'text', text: healthSummary(health.value) }], structuredContent: health.value };
  });
  server.registerResource('stats-latest', STATS_RESOURCE_URI, {
    title: 'Latest statistics',
    description: `The latest stats record, as GET ${SITE_PATHS.SITE_STATS} serves it.`,
    mimeType: 'application/json',
  }, async (uri) => {
    const stats = await figures.stats().catch((error: Error) => {
      console.error(`edge: ${STATS_RESOURCE_URI}: ${error.message}`);
      throw new McpError(ErrorCode.InternalError, UNAVAILABLE_MESSAGE);
    });
    return { contents: [{ uri: uri.href, mimeType: 'application/json', text: stats.body }] };
  });
  // The SDK advertises list-change notifications once a tool or resource is registered; this
  // stateless server answers each POST with JSON and keeps no stream to send them on, and its lists
  // never change, so it says so.
  server.server.registerCapabilities({ tools: { listChanged: false }, resources: { listChanged: false } });
  return server;
}

/** What the server card states about the server: taken from a live server, so the two cannot disagree. */
export interface McpCardFacts {
  protocolVersion: string;
  serverInfo: Implementation;
  capabilities: ServerCapabilities;
  instructions: string | undefined;
  tools: Tool[];
  resources: Resource[];
}

/** Starts this server in memory, asks it what it is as a client would, and stops it. */
export async function mcpCardFacts(siteUrl: string): Promise<McpCardFacts> {
  // Listing runs no tool, so the figures are never read.
  const noFigures: Figures = {
    stats: () => Promise.reject(new Error('not read while listing')),
    history: () => Promise.reject(new Error('not read while listing')),
    health: () => Promise.reject(new Error('not read while listing')),
    log: () => Promise.reject(new Error('not read while listing')),
  };
  const server = buildServer({ siteUrl }, noFigures);
  const client = new Client({ name: 'server-card', version: MCP_SERVER_VERSION });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  await client.connect(clientSide);
  try {
    return {
      protocolVersion: LATEST_PROTOCOL_VERSION,
      serverInfo: client.getServerVersion()!,
      capabilities: client.getServerCapabilities()!,
      instructions: client.getInstructions(),
      tools: (await client.listTools()).tools,
      resources: (await client.listResources()).resources,
    };
  } finally {
    await client.close();
    await server.close();
  }
}

/** The SDK's answer (one JSON-RPC message) with an internal error replaced by what a caller may see (the detail is logged). */
async function withPublicErrors(response: Response): Promise<Response> {
  if (!response.headers.get('content-type')?.startsWith('application/json')) return response;
  const text = await response.text();
  // Most answers carry no error at all: only one naming the internal-error code is parsed.
  const message = text.includes(String(INTERNAL_ERROR)) ? (JSON.parse(text) as { error?: RpcError }) : undefined;
  if (message?.error?.code !== INTERNAL_ERROR) return new Response(text, response);
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  return new Response(JSON.stringify({ ...message, error: publicError(message.error, console.error) }), { status: response.status, headers });
}

/** POST /mcp: each request is served by a server of its own, unless the same was answered already. */
export function createMcpHandler(cfg: EdgeConfig, figures: Figures): (request: Request) => Promise<Response> {
  const memo = createMcpMemo(figures);
  return async (request) => {
    // Read once: the transport takes the parsed body, and a body that is not JSON is handed back to
    // it as it came, for the transport's own answer.
    const text = await request.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    // JSON-RPC batching was removed from MCP in protocol version 2025-06-18
    // (https://modelcontextprotocol.io/specification/2025-06-18/changelog); an empty batch was never valid.
    if (Array.isArray(body)) {
      return Response.json({ jsonrpc: '2.0', id: null, error: { code: INVALID_REQUEST, message: 'Invalid Request: JSON-RPC batches are not supported; send one request per POST.' } });
    }
    // Origin is not checked: the transport's Origin rule guards local servers against DNS rebinding,
    // and this one serves public read-only figures to any site, with no credentials or ambient authority.
    const problem = paramsProblem(body, 'mcp');
    if (problem) {
      const id = (body as { id?: unknown }).id ?? null;
      return Response.json({ jsonrpc: '2.0', id, error: { code: INVALID_PARAMS, message: `Invalid params: ${problem}` } });
    }
    const kept = await memo.answer(request, body);
    if (kept) return kept;
    const recording = memo.recording(figures);
    const server = buildServer(cfg, recording.figures);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      const answer = await withPublicErrors(await (body === undefined
        ? transport.handleRequest(new Request(request, { body: text }))
        : transport.handleRequest(request, { parsedBody: body })));
      return await recording.keep(request, body, answer);
    } finally {
      // JSON mode has the whole answer by now; closing frees the per-request pair at once.
      void server.close();
    }
  };
}
