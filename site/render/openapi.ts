// One OpenAPI description per host, cut from the one source (site/documents/openapi.json), where each
// path names its host in a path-level `servers`. Code generators (openapi-fetch, hey-api, …) take a
// single base URL per document and ignore path-level servers, so a document that mixes hosts sends
// half its operations to the wrong one. Each cut has its host as the top-level server and keeps only
// the components its operations reach.

interface OpenApiDocument {
  servers: { url: string; description?: string }[];
  paths: Record<string, { servers?: { url: string; description?: string }[] } & Record<string, unknown>>;
  components: Record<string, Record<string, unknown>>;
  tags?: { name: string }[];
  security?: unknown[];
  [member: string]: unknown;
}

/** Every `#/components/<kind>/<name>` the value refers to, and the security schemes it names. */
function references(value: unknown, found: Set<string>): void {
  if (Array.isArray(value)) {
    for (const item of value) references(item, found);
  } else if (value && typeof value === 'object') {
    for (const [key, member] of Object.entries(value)) {
      if (key === '$ref' && typeof member === 'string' && member.startsWith('#/components/')) found.add(member.slice('#/components/'.length));
      else if (key === 'security' && Array.isArray(member)) for (const requirement of member) for (const scheme of Object.keys(requirement as object)) found.add(`securitySchemes/${scheme}`);
      else references(member, found);
    }
  }
}

/** The components reachable from the paths and the top-level security, closed over their own references. */
function reachableComponents(doc: OpenApiDocument): OpenApiDocument['components'] {
  const seen = new Set<string>();
  references({ paths: doc.paths, security: doc.security }, seen);
  const pending = [...seen];
  while (pending.length) {
    const [kind, name] = pending.pop()!.split('/') as [string, string];
    const before = new Set(seen);
    references(doc.components[kind]?.[name], seen);
    for (const ref of seen) if (!before.has(ref)) pending.push(ref);
  }
  const components: OpenApiDocument['components'] = {};
  for (const [kind, members] of Object.entries(doc.components)) {
    const kept = Object.fromEntries(Object.entries(members).filter(([name]) => seen.has(`${kind}/${name}`)));
    if (Object.keys(kept).length) components[kind] = kept;
  }
  return components;
}

/**
 * The document of the host at `serverUrl`: its paths only, with that host as the one top-level
 * server. `keyless` drops the document-wide key requirement (the site host takes none).
 */
export function hostDocument(source: unknown, serverUrl: string, options: { title: string; keyless: boolean }): OpenApiDocument {
  const doc = structuredClone(source) as OpenApiDocument;
  const paths = Object.entries(doc.paths).filter(([, item]) => item.servers?.some((s) => s.url === serverUrl));
  if (!paths.length) throw new Error(`openapi.json: no path names the server ${serverUrl}.`);
  const server = paths[0]![1].servers!.find((s) => s.url === serverUrl)!;
  const cut: OpenApiDocument = {
    ...doc,
    info: { ...(doc.info as object), title: options.title },
    servers: [server],
    paths: Object.fromEntries(paths.map(([p, { servers: _servers, ...item }]) => [p, item])),
  };
  if (options.keyless) {
    delete cut.security;
    delete cut['x-public-anon-key'];
  }
  const operations = Object.values(cut.paths).flatMap((item) => Object.values(item)) as { tags?: string[] }[];
  const used = new Set(operations.flatMap((operation) => operation.tags ?? []));
  cut.tags = doc.tags?.filter((t) => used.has(t.name));
  cut.components = reachableComponents(cut);
  return cut;
}
