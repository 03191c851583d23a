// The site host's nginx locations for the static documents, generated from the rows of
// contract/documents.ts: each is served from the rendered root with its exact media type, cache policy
// and headers, with CORS, ETag and Last-Modified (nginx adds those two to static files), HEAD and a
// 204 preflight. Media types are set per location (empty `types`, explicit default_type) because
// several files have no extension and others need exact types with parameters. A location with
// add_header of its own inherits none from the server, hence the repeated include.
import { API_HOST_DIR, API_HOST_DOCUMENTS, SKILL_FILE_TYPES, STATIC_DOCUMENTS, type SiteDocument } from '../../contract/documents.ts';
import { SITE_PATHS } from '../../contract/paths.ts';

/** An nginx string literal: double-quoted, with backslashes and quotes escaped. */
const quoted = (value: string) => `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

function location(doc: SiteDocument & { file: string }, root?: string): string {
  const lines = [
    `location = ${doc.path} {`,
    '    include snippets/cors.conf;',
    '    if ($request_method = OPTIONS) { include snippets/cors-preflight.conf; }',
    ...(root ? [`    root ${root};`] : []),
    `    add_header Cache-Control ${quoted(doc.cacheControl)} always;`,
    ...Object.entries(doc.headers ?? {}).map(([name, value]) => `    add_header ${name} ${quoted(value)} always;`),
    `    types { } default_type ${quoted(doc.mediaType)};`,
    ...(doc.file === doc.path.replace(/^\//, '') || root ? [] : [`    try_files /${doc.file} =404;`]),
    '}',
  ];
  return lines.join('\n');
}

const skillsDir = SITE_PATHS.SKILLS_INDEX.replace(/index\.json$/, '');

/**
 * The API host's own documents, included in its server block: served from their directory under the
 * rendered root ($site_documents_root, from templates/documents.conf.template).
 */
export function apiDocumentLocations(): string {
  return [
    '# Generated from contract/documents.ts by site/render/locations.ts: edit the rows there, not this file.',
    ...API_HOST_DOCUMENTS.map((doc) => location(doc, `$site_documents_root/${API_HOST_DIR}`)),
    '',
  ].join('\n');
}

/** The whole snippet, included in the site host's server block. */
export function documentLocations(): string {
  return [
    '# Generated from contract/documents.ts by site/render/locations.ts: edit the rows there, not this file.',
    ...STATIC_DOCUMENTS.map((doc) => location(doc)),
    // The skills' own files, under the index's directory.
    `location ^~ ${skillsDir} {`,
    '    include snippets/cors.conf;',
    '    if ($request_method = OPTIONS) { include snippets/cors-preflight.conf; }',
    `    add_header Cache-Control ${quoted(STATIC_DOCUMENTS.find((d) => d.path === SITE_PATHS.SKILLS_INDEX)!.cacheControl)} always;`,
    `    types { ${Object.entries(SKILL_FILE_TYPES).map(([ext, type]) => `${quoted(type)} ${ext};`).join(' ')} }`,
    '    default_type application/octet-stream;',
    '    error_page 404 = @document_not_found;',
    '}',
    // Anything else under /.well-known is a real, uncached 404 (scanners must never see a soft 200);
    // the agent card is the edge server's, in an exact location of the server block.
    'location ^~ /.well-known/ {',
    '    include snippets/cors.conf;',
    '    add_header Cache-Control "no-store" always;',
    '    default_type application/json;',
    `    return 404 '{"message":"Not found"}\\n';`,
    '}',
    'location @document_not_found {',
    '    include snippets/cors.conf;',
    '    add_header Cache-Control "no-store" always;',
    '    default_type application/json;',
    `    return 404 '{"message":"Not found"}\\n';`,
    '}',
    '',
  ].join('\n');
}
