// What agents call: the MCP server (POST /mcp), the A2A agent (POST /a2a) and its card.
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { SITE_PATHS } from '../../contract/paths.ts';
import { createAgentCardHandler } from '../agent-card.ts';
import { createA2ARpc } from '../a2a.ts';
import type { EdgeConfig } from '../config.ts';
import type { Figures } from '../figures.ts';
import { jsonError } from '../http.ts';
import { createMcpHandler } from '../mcp.ts';
import { getRoute, JSON_TYPE, postRoute } from '../routing.ts';

/** JSON-RPC bodies of these read-only protocols are small; anything bigger is not ours. */
const MAX_BODY_BYTES = 64 * 1024;

/** The MCP endpoint's refusal of any other method, as JSON-RPC: a GET handed to the stateless transport would open an SSE stream that never closes. */
const mcpRefusal = () => new Response(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this stateless MCP endpoint takes POST only.' }, id: null }), {
  status: 405,
  headers: { 'content-type': JSON_TYPE, allow: 'POST, OPTIONS', 'cache-control': 'no-store' },
});

export function createAgentsApp(cfg: EdgeConfig, figures: Figures): Hono {
  const app = new Hono();
  const limit = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: () => jsonError(413, `Request body too large: at most ${MAX_BODY_BYTES} bytes.`),
  });
  const mcp = createMcpHandler(cfg, figures);
  postRoute(app, SITE_PATHS.MCP, limit, (c) => mcp(c.req.raw), mcpRefusal);
  const a2a = createA2ARpc(cfg, figures);
  postRoute(app, SITE_PATHS.A2A, limit, (c) => a2a(c.req.raw));
  const card = createAgentCardHandler(cfg);
  getRoute(app, SITE_PATHS.AGENT_CARD, (c) => card(c.req.raw));
  return app;
}
