// Draws /api-docs with Redoc (the versioned bundle the page loads first): both hosts' OpenAPI
// descriptions as one reference, each operation under its own host. A file of its own, not an
// inline script, so the page's Content-Security-Policy can refuse inline scripts.
const container = document.getElementById('reference');
const descriptions = await Promise.all(
  container.dataset.descriptions.split(' ').map(async (url) => {
    const response = await fetch(url);
    if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
    return response.json();
  }),
);

// The first description is the frame; every path keeps its own document's server.
const [first] = descriptions;
const merged = { ...first, paths: {}, tags: [], components: {} };
for (const description of descriptions) {
  for (const [path, item] of Object.entries(description.paths)) merged.paths[path] = { servers: description.servers, ...item };
  for (const tag of description.tags ?? []) if (!merged.tags.some((t) => t.name === tag.name)) merged.tags.push(tag);
  for (const [kind, members] of Object.entries(description.components ?? {})) merged.components[kind] = { ...members, ...merged.components[kind] };
}

// Colours chosen for WCAG AA contrast (4.5:1 for text) on Redoc's light backgrounds.
const theme = {
  colors: {
    primary: { main: '#2b2b8f' },
    success: { main: '#1a6b22' },
    warning: { main: '#8a4b00' },
    error: { main: '#b3261e' },
    text: { primary: '#1f1f1f', secondary: '#4a4a4a' },
    http: { get: '#1a6b22', post: '#0b5394', put: '#7a4a00', options: '#5b4636', patch: '#6b4e00', delete: '#b3261e', basic: '#4a4a4a', link: '#0b5394', head: '#6b2c6b' },
  },
  sidebar: { textColor: '#1f1f1f', activeTextColor: '#2b2b8f' },
  rightPanel: { backgroundColor: '#1f2a33', textColor: '#ffffff' },
  codeBlock: { backgroundColor: '#000000' },
};

globalThis.Redoc.init(merged, { theme, hideDownloadButton: true, expandResponses: '200', nativeScrollbars: true }, container);
