// POST /mcp: a read-only MCP server over Streamable HTTP, stateless, JSON responses (alpha).
// An McpServer binds to one transport and a stateless transport serves one request, so both are
// built per request; the figures come from the shared cache.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { ErrorCode, McpError, type CallToolResult, type Implementation } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { EdgeConfig } from './config.ts';
import type { Figures } from './figures.ts';
import { parseRange, withinRange } from './history.ts';
import type { HeaderOf, KeptAnswer } from './answer-memo.ts';
import { createMcpMemo } from './mcp-memo.ts';
import { MCP_CAPABILITIES, MCP_TOOLS, mcpServerInfo, STATS_RESOURCE } from '../contract/mcp.ts';
import { INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, paramsProblem, publicError, type RpcError } from './rpc-errors.ts';
import { UNAVAILABLE, UNAVAILABLE_MESSAGE } from '../contract/texts/rules.ts';
import { healthSummary, historySummary, mcpInstructions, statsSummary } from '../contract/texts/summaries.ts';

// The SDK builds a fresh Ajv instance per Server unless given one: about a quarter of a tools/call's
// CPU. It is only used for elicitation, which this server never does, so one instance serves all.
const sharedValidator = new AjvJsonSchemaValidator();

const unavailable = (): CallToolResult => ({
  isError: true,
  content: [{ type: 'text', text: UNAVAILABLE.mcpTool }],
});

/** What every request's server says about itself: made once, as it depends only on the site. */
interface ServerFacts { info: Implementation; instructions: string; siteUrl: string }

/** The server contract/mcp.ts describes, each tool and the resource answered from the figures. */
function buildServer(facts: ServerFacts, figures: Figures): McpServer {
  const server = new McpServer(facts.info, { instructions: facts.instructions, jsonSchemaValidator: sharedValidator });
  server.registerTool('get_stats', MCP_TOOLS.get_stats, async () => {
    const stats = await figures.stats().catch(() => undefined);
    if (!stats) return unavailable();
    return { content: [{ type: 'text', text: statsSummary(stats.value) }], structuredContent: stats.value };
  });
  server.registerTool('get_history', MCP_TOOLS.get_history, async (args) => {
    const range = parseRange(args);
    if ('error' in range) return { isError: true, content: [{ type: 'text', text: range.error }] };
    const [history, log] = await Promise.all([figures.history().catch(() => undefined), figures.log().catch(() => undefined)]);
    if (!history) return unavailable();
    const record = withinRange(history.value, range);
    return { content: [{ type: 'text', text: historySummary(record, facts.siteUrl, history.value, log?.value) }], structuredContent: record };
  });
  server.registerTool('get_health', MCP_TOOLS.get_health, async () => {
    const health = await figures.health();
    return { content: [{ type: 'text', text: healthSummary(health.value) }], structuredContent: health.value };
  });
  server.registerResource(STATS_RESOURCE.name, STATS_RESOURCE.uri, STATS_RESOURCE.metadata, async (uri) => {
    const stats = await figures.stats().catch((error: Error) => {
      console.error(`edge: ${STATS_RESOURCE.uri}: ${error.message}`);
      throw new McpError(ErrorCode.InternalError, UNAVAILABLE_MESSAGE);
    });
    return { contents: [{ uri: uri.href, mimeType: STATS_RESOURCE.metadata.mimeType, text: stats.body }] };
  });
  server.server.registerCapabilities(MCP_CAPABILITIES);
  return server;
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

/** What a POST's text asks: a message for the SDK (undefined when the text is not JSON), or a refusal made here. */
function readMessage(text: string): { message: unknown } | { refusal: object } {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    // Handed back to the transport as it came, for the transport's own answer.
    return { message: undefined };
  }
  // JSON-RPC batching was removed from MCP in protocol version 2025-06-18
  // (https://modelcontextprotocol.io/specification/2025-06-18/changelog); an empty batch was never valid.
  if (Array.isArray(message)) {
    return { refusal: { jsonrpc: '2.0', id: null, error: { code: INVALID_REQUEST, message: 'Invalid Request: JSON-RPC batches are not supported; send one request per POST.' } } };
  }
  const problem = paramsProblem(message, 'mcp');
  if (problem) {
    const id = (message as { id?: unknown }).id ?? null;
    return { refusal: { jsonrpc: '2.0', id, error: { code: INVALID_PARAMS, message: `Invalid params: ${problem}` } } };
  }
  return { message };
}

export interface McpEndpoint {
  /** POST /mcp: each request is served by a server of its own, unless the same was answered already. */
  handle(request: Request): Promise<Response>;
  /**
   * The answer `handle` gives from what it kept for a POST of this text with these headers (the
   * SDK's own answer made for the same request before, this request's id in place); undefined when
   * `handle` would make one.
   */
  kept(header: HeaderOf, text: string): Promise<KeptAnswer | undefined>;
}

export function createMcpEndpoint(cfg: EdgeConfig, figures: Figures): McpEndpoint {
  const memo = createMcpMemo(figures);
  const facts: ServerFacts = { info: mcpServerInfo(cfg), instructions: mcpInstructions(cfg), siteUrl: cfg.siteUrl };
  return {
    async kept(header, text) {
      const read = readMessage(text);
      return 'refusal' in read ? undefined : memo.answer(header, read.message);
    },

    async handle(request) {
      // Read once: the transport takes the parsed body, and a body that is not JSON is handed back to
      // it as it came, for the transport's own answer.
      const text = await request.text();
      const read = readMessage(text);
      // Origin is not checked: the transport's Origin rule guards local servers against DNS rebinding,
      // and this one serves public read-only figures to any site, with no credentials or ambient authority.
      if ('refusal' in read) return Response.json(read.refusal);
      const body = read.message;
      const kept = await memo.answer((name) => request.headers.get(name), body);
      if (kept) return new Response(kept.body, { status: 200, headers: kept.headers });
      const recording = memo.recording(figures);
      const server = buildServer(facts, recording.figures);
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
    },
  };
}
