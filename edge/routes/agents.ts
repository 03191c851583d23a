// What agents call: the MCP server (POST /mcp), the A2A agent (POST /a2a) and its card.
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { SITE_PATHS } from '../../contract/paths.ts';
import { createAgentCardHandler } from '../agent-card.ts';
import { createA2AEndpoint, type A2AEndpoint } from '../a2a.ts';
import type { HeaderOf, KeptAnswer } from '../answer-memo.ts';
import type { EdgeConfig } from '../config.ts';
import type { Figures } from '../figures.ts';
import { jsonError } from '../http.ts';
import { createMcpEndpoint, type McpEndpoint } from '../mcp.ts';
import { getRoute, JSON_TYPE, postRoute } from '../routing.ts';

/** JSON-RPC bodies of these read-only protocols are small; anything bigger is not ours. */
export const MAX_BODY_BYTES = 64 * 1024;

/** The MCP endpoint's refusal of any other method, as JSON-RPC: a GET handed to the stateless transport would open an SSE stream that never closes. */
const mcpRefusal = () => new Response(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this stateless MCP endpoint takes POST only.' }, id: null }), {
  status: 405,
  headers: { 'content-type': JSON_TYPE, allow: 'POST, OPTIONS', 'cache-control': 'no-store' },
});

export interface Agents {
  app: Hono;
  /** The paths whose POSTs may be answered from what their endpoint kept. */
  keptPaths: readonly string[];
  /**
   * The answer the POST route of `path` gives from what its endpoint kept for a body of this text
   * with these headers (the body within MAX_BODY_BYTES); undefined when the route would make one.
   */
  kept(path: string, header: HeaderOf, text: string): Promise<KeptAnswer | undefined>;
}

export function createAgents(cfg: EdgeConfig, figures: Figures): Agents {
  const app = new Hono();
  const limit = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: () => jsonError(413, `Request body too large: at most ${MAX_BODY_BYTES} bytes.`),
  });
  const mcp = createMcpEndpoint(cfg, figures);
  postRoute(app, SITE_PATHS.MCP, limit, (c) => mcp.handle(c.req.raw), mcpRefusal);
  const a2a = createA2AEndpoint(cfg, figures);
  postRoute(app, SITE_PATHS.A2A, limit, (c) => a2a.handle(c.req.raw));
  const card = createAgentCardHandler(cfg);
  getRoute(app, SITE_PATHS.AGENT_CARD, (c) => card(c.req.raw));
  const endpoints = new Map<string, Pick<McpEndpoint | A2AEndpoint, 'kept'>>([[SITE_PATHS.MCP, mcp], [SITE_PATHS.A2A, a2a]]);
  return {
    app,
    keptPaths: [...endpoints.keys()],
    kept: async (path, header, text) => endpoints.get(path)?.kept(header, text),
  };
}
