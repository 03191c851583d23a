// What the MCP server says about itself: its name, title and version, its instructions and
// capabilities, and the table of its tools and its resource with their schemas and annotations
// (https://modelcontextprotocol.io/specification/2025-06-18/server/tools). The edge registers them
// with the SDK, each tool with its handler (edge/mcp.ts); the renderer lists them in the server card
// from an SDK server it builds from the same table (site/render/mcp-card.ts), so the two agree.
import type { Implementation, ServerCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { SITE_PATHS, type Origins } from './paths.ts';
import { HistoryRecordSchema, PublishedHealthSchema, PublishedStatsSchema } from './records.ts';
import { SERVICE_NAME } from './texts/rules.ts';

export const MCP_SERVER_NAME = 'public-stats';
export const MCP_SERVER_VERSION = '0.1.0-alpha';

/** The server's Implementation, as initialize answers it. */
export function mcpServerInfo(cfg: Pick<Origins, 'siteUrl'>): Implementation {
  return { name: MCP_SERVER_NAME, title: `${SERVICE_NAME} (alpha)`, version: MCP_SERVER_VERSION, websiteUrl: cfg.siteUrl };
}

/**
 * The SDK advertises list-change notifications once a tool or resource is registered; this
 * stateless server answers each POST with JSON and keeps no stream to send them on, and its lists
 * never change, so it says so.
 */
export const MCP_CAPABILITIES = { tools: { listChanged: false }, resources: { listChanged: false } } satisfies ServerCapabilities;

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

/** The tools, in the order tools/list names them. */
export const MCP_TOOLS = {
  get_stats: {
    title: 'Get the public statistics',
    description:
      "Nightly gross reward payouts (last 16 settled nights), today's in-progress accrual estimate, market breadth, all-time gross totals, the capital snapshot, the trailing-window returns with trading costs and the latest independent audit (null before one is published). Gross figures are not profit; cite updated_at.",
    outputSchema: PublishedStatsSchema,
    annotations: { title: 'Get the public statistics', ...READ_ONLY },
  },
  get_history: {
    title: 'Get the whole track record',
    description:
      'Every settled night since since_date, oldest first: the gross reward payout, the running gross total, that date\'s trading cost and the capital base the returns use. Optional from/to (YYYY-MM-DD, inclusive) narrow it. Gross figures are not profit; cite updated_at.',
    inputSchema: {
      from: z.iso.date().optional().describe('First night to include (YYYY-MM-DD, UTC).'),
      to: z.iso.date().optional().describe('Last night to include (YYYY-MM-DD, UTC).'),
    },
    outputSchema: HistoryRecordSchema,
    annotations: { title: 'Get the whole track record', ...READ_ONLY },
  },
  get_health: {
    title: 'Get data freshness and writer liveness',
    description: 'Whether the payout and accrual data are fresh and the writer is alive, and on a read replica whether it receives the primary\'s changes and how far its data trail the primary: status "ok", "degraded" or "down".',
    outputSchema: PublishedHealthSchema,
    annotations: { title: 'Get data freshness and writer liveness', ...READ_ONLY },
  },
};

/** The one resource: the latest stats record, as the site serves it. */
export const STATS_RESOURCE = {
  name: 'stats-latest',
  uri: 'stats://latest',
  metadata: {
    title: 'Latest statistics',
    description: `The latest stats record, as GET ${SITE_PATHS.SITE_STATS} serves it.`,
    mimeType: 'application/json',
  },
};
