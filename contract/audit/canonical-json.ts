// RFC 8785 JSON Canonicalization (https://www.rfc-editor.org/rfc/rfc8785): ECMAScript number and
// string serialization, object members sorted by their names' UTF-16 code units, no whitespace.
// Commitments hash these bytes, so the writer and an auditor reach the same ones.
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    return `{${Object.keys(record).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
