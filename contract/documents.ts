// The site's documents, one row each: where each is served, what it is rendered from, its media type,
// cache policy and title. The renderer writes them from here, the site host's nginx locations are
// generated from here, the page links the titled ones, and the tests request every row. A new
// document costs its content, one row, and its content test.
import { API_PATHS, SITE_PATHS } from './paths.ts';

export interface SiteDocument {
  /** Path on the host. */
  path: string;
  /** File under the rendered root; undefined for what the edge server answers itself. */
  file?: string;
  /**
   * Template under site/documents, filled with the named values ({{NAME}}); JSON templates are
   * parsed, filled and written back as JSON. Undefined when the renderer builds the document
   * itself (it names those) or the edge serves it.
   */
  source?: string;
  /** Exact Content-Type the host sends. */
  mediaType: string;
  /** Cache-Control the host sends. */
  cacheControl: string;
  /** Shown in the page's list of documents; untitled rows are served but not listed. */
  title?: string;
  /** Further response headers of this document. */
  headers?: Record<string, string>;
}

// Documents that carry the public key or the policy are kept short, so a key change reaches
// clients within minutes; the rest change only with a deployment.
export const CACHE_SHORT = 'public, max-age=300';
export const CACHE_LONG = 'public, max-age=3600';
export const CACHE_IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * The key directory (https://datatracker.ietf.org/doc/draft-meunier-http-message-signatures-directory/):
 * its media type, and how long a client may keep an answer, which is also how often the signature
 * on it is made again.
 */
export const KEY_DIRECTORY_MEDIA_TYPE = 'application/http-message-signatures-directory+json';
export const KEY_DIRECTORY_CACHE_SECONDS = 60;
export const KEY_DIRECTORY_CACHE_CONTROL = `public, max-age=${KEY_DIRECTORY_CACHE_SECONDS}`;

const JSON_TYPE = 'application/json';
const MARKDOWN = 'text/markdown; charset=utf-8';
const PLAIN_TEXT = 'text/plain; charset=utf-8';
/** RFC 9239 §6: JavaScript's media type. */
const JAVASCRIPT = 'text/javascript; charset=utf-8';
const file = (p: string) => p.replace(/^\//, '');

export const SITE_DOCUMENTS: readonly SiteDocument[] = [
  { path: SITE_PATHS.OPENAPI, file: file(SITE_PATHS.OPENAPI), mediaType: JSON_TYPE, cacheControl: CACHE_SHORT, title: 'OpenAPI 3.1 description (carries the public key)' },
  { path: SITE_PATHS.OPENAPI_KEYLESS, file: file(SITE_PATHS.OPENAPI_KEYLESS), mediaType: JSON_TYPE, cacheControl: CACHE_SHORT, title: 'OpenAPI 3.1 description of the keyless site endpoints' },
  {
    path: SITE_PATHS.API_DOCS, file: 'api-docs.html', source: 'api-docs.html', mediaType: 'text/html; charset=utf-8', cacheControl: CACHE_SHORT, title: 'Human-readable API reference',
    // Scripts only from this host, none inline; Redoc injects its styles and runs search in a blob worker.
    headers: { 'Content-Security-Policy': "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; worker-src 'self' blob:; connect-src *; frame-ancestors *" },
  },
  // The script's name carries a digest of its bytes, the bundle's its version: neither changes under its name.
  { path: SITE_PATHS.API_DOCS_SCRIPT, file: file(SITE_PATHS.API_DOCS_SCRIPT), source: 'api-docs.js', mediaType: JAVASCRIPT, cacheControl: CACHE_IMMUTABLE },
  { path: SITE_PATHS.REDOC_BUNDLE, file: file(SITE_PATHS.REDOC_BUNDLE), mediaType: JAVASCRIPT, cacheControl: CACHE_IMMUTABLE },
  { path: SITE_PATHS.LLMS_TXT, file: file(SITE_PATHS.LLMS_TXT), source: 'llms.txt', mediaType: PLAIN_TEXT, cacheControl: CACHE_SHORT, title: 'Plain-text service summary for language models' },
  { path: SITE_PATHS.AUTH_MD, file: file(SITE_PATHS.AUTH_MD), source: 'auth.md', mediaType: MARKDOWN, cacheControl: CACHE_SHORT, title: 'Access policy and the current public key' },
  {
    path: SITE_PATHS.API_CATALOG, file: file(SITE_PATHS.API_CATALOG), source: 'well-known/api-catalog.json',
    mediaType: 'application/linkset+json; profile="https://www.rfc-editor.org/info/rfc9727"', cacheControl: CACHE_LONG, title: 'API catalog (RFC 9727)',
    // RFC 9727 §2: HEAD (and GET) name the catalog with rel="api-catalog".
    headers: { Link: `<${SITE_PATHS.API_CATALOG}>; rel="api-catalog"` },
  },
  { path: SITE_PATHS.PRM, file: file(SITE_PATHS.PRM), mediaType: JSON_TYPE, cacheControl: CACHE_LONG, title: 'Protected resource metadata (RFC 9728)' },
  { path: SITE_PATHS.AS_METADATA, file: file(SITE_PATHS.AS_METADATA), source: 'well-known/oauth-authorization-server.json', mediaType: JSON_TYPE, cacheControl: CACHE_LONG, title: 'Authorization server metadata (RFC 8414)' },
  { path: SITE_PATHS.AGENT_CARD, mediaType: JSON_TYPE, cacheControl: 'public, max-age=3600', title: 'A2A agent card' },
  { path: SITE_PATHS.MCP_CARD, file: file(SITE_PATHS.MCP_CARD), mediaType: JSON_TYPE, cacheControl: CACHE_LONG, title: 'MCP server card' },
  { path: SITE_PATHS.SKILLS_INDEX, file: file(SITE_PATHS.SKILLS_INDEX), mediaType: JSON_TYPE, cacheControl: CACHE_LONG, title: 'Agent skills index' },
  // Signed per answer by the edge (the signature carries created and expires).
  { path: SITE_PATHS.SIG_DIRECTORY, mediaType: KEY_DIRECTORY_MEDIA_TYPE, cacheControl: KEY_DIRECTORY_CACHE_CONTROL, title: 'HTTP message signatures key directory (Ed25519 JWKS)' },
  // The log's page is the edge's (it states the live checkpoint); the verifier is this repository's
  // verify/ with its log-reader/, bundled into one file by the build (site/render/verifier.ts) so anyone can run it alone.
  { path: SITE_PATHS.LOG, mediaType: 'text/html; charset=utf-8', cacheControl: 'public, max-age=60', title: 'Transparency log of the nightly figures' },
  { path: SITE_PATHS.LOG_VERIFIER, file: file(SITE_PATHS.LOG_VERIFIER), mediaType: JAVASCRIPT, cacheControl: CACHE_SHORT, title: 'The verifier: one JavaScript file, run with Node alone' },
  { path: SITE_PATHS.ROBOTS, file: file(SITE_PATHS.ROBOTS), source: 'robots.txt', mediaType: PLAIN_TEXT, cacheControl: CACHE_LONG },
  { path: SITE_PATHS.SITEMAP, file: file(SITE_PATHS.SITEMAP), source: 'sitemap.xml', mediaType: 'application/xml', cacheControl: CACHE_LONG },
  // Browsers ask for /favicon.ico whatever the page says; an SVG under that name serves them all.
  { path: '/favicon.ico', file: 'favicon.ico', source: 'favicon.svg', mediaType: 'image/svg+xml', cacheControl: CACHE_LONG },
];

/** The documents written to the rendered root (everything but what the edge answers itself). */
export const STATIC_DOCUMENTS = SITE_DOCUMENTS.filter((d): d is SiteDocument & { file: string } => d.file !== undefined);

/** The API host's own protected-resource metadata, rendered under this directory of the root. */
export const API_HOST_DIR = 'api-host';
export const API_HOST_DOCUMENTS: readonly (SiteDocument & { file: string })[] = [
  { path: API_PATHS.PRM, file: `${API_HOST_DIR}/${file(API_PATHS.PRM)}`, mediaType: JSON_TYPE, cacheControl: CACHE_LONG },
  // Where the issuer {api_url}/auth/v1 says its metadata is (RFC 8414 §3.3: the issuer must match);
  // the site host serves the same document under the plain well-known name.
  { path: API_PATHS.AS_METADATA, file: `${API_HOST_DIR}/${file(API_PATHS.AS_METADATA)}`, source: 'well-known/oauth-authorization-server.json', mediaType: JSON_TYPE, cacheControl: CACHE_LONG },
];

/** Media types of the agent skills' files, by extension, under the skills index's directory. */
export const SKILL_FILE_TYPES: Record<string, string> = { json: JSON_TYPE, md: MARKDOWN };
