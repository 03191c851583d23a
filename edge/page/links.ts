// The discovery documents the page links to, and the `Link` header of `/` (agent-readiness.md §4
// "linkHeaders": exactly these five relations, absolute URLs).
import type { EdgeConfig } from '../config.ts';

export interface DocLink {
  path: string;
  title: string;
}

export const DISCOVERY_DOCUMENTS: DocLink[] = [
  { path: '/openapi.json', title: 'OpenAPI 3.1 description (carries the public key)' },
  { path: '/api-docs', title: 'Human-readable API reference' },
  { path: '/llms.txt', title: 'Plain-text service summary for language models' },
  { path: '/auth.md', title: 'Access policy and the current public key' },
  { path: '/.well-known/api-catalog', title: 'API catalog (RFC 9727)' },
  { path: '/.well-known/oauth-protected-resource', title: 'Protected resource metadata (RFC 9728)' },
  { path: '/.well-known/oauth-authorization-server', title: 'Authorization server metadata (RFC 8414)' },
  { path: '/.well-known/agent-card.json', title: 'A2A agent card' },
  { path: '/.well-known/mcp/server-card.json', title: 'MCP server card' },
  { path: '/.well-known/agent-skills/index.json', title: 'Agent skills index' },
  { path: '/.well-known/http-message-signatures-directory', title: 'HTTP message signatures key directory (Ed25519 JWKS)' },
];

export const ENDPOINTS: DocLink[] = [
  { path: '/api/stats', title: 'GET: the stats record as JSON (no key)' },
  { path: '/api/health', title: 'GET: data freshness and liveness (no key)' },
  { path: '/mcp', title: 'POST: MCP server, Streamable HTTP (alpha)' },
  { path: '/a2a', title: 'POST: A2A JSON-RPC, message/send (alpha)' },
  { path: '/index.md', title: 'This page as Markdown' },
];

export function linkHeader(cfg: EdgeConfig): string {
  const b = cfg.siteUrl;
  return [
    `<${b}/.well-known/api-catalog>; rel="api-catalog"; type="application/linkset+json"`,
    `<${b}/openapi.json>; rel="service-desc"; type="application/json"`,
    `<${b}/api-docs>; rel="service-doc"; type="text/html"`,
    `<${b}/llms.txt>; rel="describedby"; type="text/plain"`,
    `<${b}/index.md>; rel="alternate"; type="text/markdown"`,
  ].join(', ');
}
