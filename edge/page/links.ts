// The discovery documents the page links to, and the `Link` header of `/` (the agent-readiness
// scanner's "linkHeaders" check: exactly these five relations, absolute URLs).
import { SITE_DOCUMENTS } from '../../contract/documents.ts';
import { SITE_PATHS, type Origins } from '../../contract/paths.ts';

export interface DocLink {
  path: string;
  title: string;
  /** Answers POST only: shown as an address, not a link a browser or crawler would GET (405). */
  postOnly?: true;
}

/** The titled rows of the documents table, in its order. */
export const DISCOVERY_DOCUMENTS: DocLink[] = SITE_DOCUMENTS.flatMap((d) => (d.title ? [{ path: d.path, title: d.title }] : []));

export const ENDPOINTS: DocLink[] = [
  { path: SITE_PATHS.SITE_STATS, title: 'GET: the stats record as JSON (no key)' },
  { path: SITE_PATHS.SITE_HISTORY, title: 'GET: the whole track record as JSON (no key; from/to narrow it)' },
  { path: SITE_PATHS.SITE_HISTORY_CSV, title: 'GET: the whole track record as CSV (no key)' },
  { path: SITE_PATHS.FEED, title: 'Atom feed: one entry per settled night' },
  { path: SITE_PATHS.SITE_HEALTH, title: 'GET: data freshness and liveness (no key)' },
  { path: SITE_PATHS.MCP, title: 'POST: MCP server, Streamable HTTP (alpha)', postOnly: true },
  { path: SITE_PATHS.A2A, title: 'POST: A2A JSON-RPC, message/send (alpha)', postOnly: true },
  { path: SITE_PATHS.INDEX_MD, title: 'This page as Markdown' },
];

export function linkHeader(cfg: Origins): string {
  const b = cfg.siteUrl;
  return [
    `<${b}${SITE_PATHS.API_CATALOG}>; rel="api-catalog"; type="application/linkset+json"`,
    `<${b}${SITE_PATHS.OPENAPI}>; rel="service-desc"; type="application/json"`,
    `<${b}${SITE_PATHS.OPENAPI_KEYLESS}>; rel="service-desc"; type="application/json"`,
    `<${b}${SITE_PATHS.API_DOCS}>; rel="service-doc"; type="text/html"`,
    `<${b}${SITE_PATHS.LLMS_TXT}>; rel="describedby"; type="text/plain"`,
    `<${b}${SITE_PATHS.INDEX_MD}>; rel="alternate"; type="text/markdown"`,
  ].join(', ');
}
