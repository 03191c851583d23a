// The discovery documents the page links to, and the `Link` header of `/` (the agent-readiness
// scanner's "linkHeaders" check: exactly these five relations, absolute URLs).
import { SITE_PATHS } from '../paths.ts';
import type { EdgeConfig } from '../config.ts';

export interface DocLink {
  path: string;
  title: string;
}

export const DISCOVERY_DOCUMENTS: DocLink[] = [
  { path: SITE_PATHS.OPENAPI, title: 'OpenAPI 3.1 description (carries the public key)' },
  { path: SITE_PATHS.API_DOCS, title: 'Human-readable API reference' },
  { path: SITE_PATHS.LLMS_TXT, title: 'Plain-text service summary for language models' },
  { path: SITE_PATHS.AUTH_MD, title: 'Access policy and the current public key' },
  { path: SITE_PATHS.API_CATALOG, title: 'API catalog (RFC 9727)' },
  { path: SITE_PATHS.PRM, title: 'Protected resource metadata (RFC 9728)' },
  { path: SITE_PATHS.AS_METADATA, title: 'Authorization server metadata (RFC 8414)' },
  { path: SITE_PATHS.AGENT_CARD, title: 'A2A agent card' },
  { path: SITE_PATHS.MCP_CARD, title: 'MCP server card' },
  { path: SITE_PATHS.SKILLS_INDEX, title: 'Agent skills index' },
  { path: SITE_PATHS.SIG_DIRECTORY, title: 'HTTP message signatures key directory (Ed25519 JWKS)' },
];

export const ENDPOINTS: DocLink[] = [
  { path: SITE_PATHS.SITE_STATS, title: 'GET: the stats record as JSON (no key)' },
  { path: SITE_PATHS.SITE_HEALTH, title: 'GET: data freshness and liveness (no key)' },
  { path: SITE_PATHS.MCP, title: 'POST: MCP server, Streamable HTTP (alpha)' },
  { path: SITE_PATHS.A2A, title: 'POST: A2A JSON-RPC, message/send (alpha)' },
  { path: SITE_PATHS.INDEX_MD, title: 'This page as Markdown' },
];

export function linkHeader(cfg: EdgeConfig): string {
  const b = cfg.siteUrl;
  return [
    `<${b}${SITE_PATHS.API_CATALOG}>; rel="api-catalog"; type="application/linkset+json"`,
    `<${b}${SITE_PATHS.OPENAPI}>; rel="service-desc"; type="application/json"`,
    `<${b}${SITE_PATHS.API_DOCS}>; rel="service-doc"; type="text/html"`,
    `<${b}${SITE_PATHS.LLMS_TXT}>; rel="describedby"; type="text/plain"`,
    `<${b}${SITE_PATHS.INDEX_MD}>; rel="alternate"; type="text/markdown"`,
  ].join(', ');
}
