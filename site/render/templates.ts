// Fills {{NAME}} placeholders in the document sources under site/documents. A placeholder with no
// value is an error, so a typo cannot ship a document with a literal "{{…}}" in it.
export type Vars = Readonly<Record<string, string>>;

const PLACEHOLDER = /\{\{([A-Z][A-Z0-9_]*)\}\}/g;

export function fillText(text: string, vars: Vars, source: string): string {
  return text.replace(PLACEHOLDER, (_whole, name: string) => {
    const value = vars[name];
    if (value === undefined) throw new Error(`${source}: no value for the placeholder {{${name}}}.`);
    return value;
  });
}

/** Fills placeholders in every string and object key of parsed JSON; values stay correctly escaped. */
export function fillJson(value: unknown, vars: Vars, source: string): unknown {
  if (typeof value === 'string') return fillText(value, vars, source);
  if (Array.isArray(value)) return value.map((item) => fillJson(item, vars, source));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [fillText(key, vars, source), fillJson(item, vars, source)]));
  }
  return value;
}
