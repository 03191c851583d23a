// The documents the site host serves from the rendered root: URL path, file under the root, media
// type and cache lifetime. site/nginx/snippets/site-documents.conf serves exactly these (a test
// requests every row), and the tests read the expectations from here.
import { SITE_PATHS, API_PATHS } from '../../edge/paths.ts';

export interface ServedDocument {
  /** Path on the host. */
  path: string;
  /** File under the rendered root. */
  file: string;
  /** Exact Content-Type the host sends. */
  mediaType: string;
  /** Cache-Control the host sends. */
  cacheControl: string;
}

// Documents that carry the public key or the policy are kept short, so a key change reaches
// clients within minutes; the rest change only with a deployment.
export const CACHE_SHORT = 'public, max-age=300';
export const CACHE_LONG = 'public, max-age=3600';

export const API_CATALOG_MEDIA_TYPE = 'application/linkset+json; profile="https://www.rfc-editor.org/info/rfc9727"';
export const SIG_DIRECTORY_MEDIA_TYPE = 'application/http-message-signatures-directory+json';
export const MARKDOWN = 'text/markdown; charset=utf-8';
export const PLAIN_TEXT = 'text/plain; charset=utf-8';

const file = (p: string) => p.replace(/^\//, '');

export const SITE_DOCUMENTS: readonly ServedDocument[] = [
  { path: SITE_PATHS.OPENAPI, file: file(SITE_PATHS.OPENAPI), mediaType: 'application/json', cacheControl: CACHE_SHORT },
  { path: SITE_PATHS.API_CATALOG, file: file(SITE_PATHS.API_CATALOG), mediaType: API_CATALOG_MEDIA_TYPE, cacheControl: CACHE_LONG },
  { path: SITE_PATHS.PRM, file: file(SITE_PATHS.PRM), mediaType: 'application/json', cacheControl: CACHE_LONG },
  { path: SITE_PATHS.AS_METADATA, file: file(SITE_PATHS.AS_METADATA), mediaType: 'application/json', cacheControl: CACHE_LONG },
  { path: SITE_PATHS.MCP_CARD, file: file(SITE_PATHS.MCP_CARD), mediaType: 'application/json', cacheControl: CACHE_LONG },
  { path: SITE_PATHS.SKILLS_INDEX, file: file(SITE_PATHS.SKILLS_INDEX), mediaType: 'application/json', cacheControl: CACHE_LONG },
  { path: SITE_PATHS.SIG_DIRECTORY, file: file(SITE_PATHS.SIG_DIRECTORY), mediaType: SIG_DIRECTORY_MEDIA_TYPE, cacheControl: CACHE_LONG },
  { path: SITE_PATHS.LLMS_TXT, file: file(SITE_PATHS.LLMS_TXT), mediaType: PLAIN_TEXT, cacheControl: CACHE_SHORT },
  { path: SITE_PATHS.AUTH_MD, file: file(SITE_PATHS.AUTH_MD), mediaType: MARKDOWN, cacheControl: CACHE_SHORT },
  { path: SITE_PATHS.API_DOCS, file: 'api-docs.html', mediaType: 'text/html; charset=utf-8', cacheControl: CACHE_SHORT },
  { path: SITE_PATHS.ROBOTS, file: file(SITE_PATHS.ROBOTS), mediaType: PLAIN_TEXT, cacheControl: CACHE_LONG },
  { path: SITE_PATHS.SITEMAP, file: file(SITE_PATHS.SITEMAP), mediaType: 'application/xml', cacheControl: CACHE_LONG },
];

/** The API host's own protected-resource metadata, rendered under this directory of the root. */
export const API_HOST_DIR = 'api-host';
export const API_HOST_DOCUMENTS: readonly ServedDocument[] = [
  { path: API_PATHS.PRM, file: `${API_HOST_DIR}/${file(API_PATHS.PRM)}`, mediaType: 'application/json', cacheControl: CACHE_LONG },
];
