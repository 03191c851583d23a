// The record contract's schemas as OpenAPI 3.1 components, in the form an OpenAPI reader expects.
import { z } from 'zod';
import { contract } from '../../contract/records.ts';

type JsonSchema = Record<string, unknown>;

/**
 * The JSON Schema zod writes, in the form an OpenAPI 3.1 reader expects: "T or null" as a type list,
 * no per-component $schema/$id, and none of the noise zod adds (format patterns, the integer range
 * of a double, an empty additionalProperties of an open object).
 */
function tidy(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(tidy);
  if (node === null || typeof node !== 'object') return node;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$schema' || key === '$id') continue;
    if (key === 'pattern' && 'format' in node) continue;
    if ((key === 'maximum' || key === 'minimum') && Math.abs(value as number) === Number.MAX_SAFE_INTEGER) continue;
    if (key === 'additionalProperties' && value && typeof value === 'object' && Object.keys(value).length === 0) continue;
    out[key] = tidy(value);
  }
  const anyOf = out.anyOf as JsonSchema[] | undefined;
  if (anyOf?.length === 2 && anyOf[1]?.type === 'null' && typeof anyOf[0]?.type === 'string') {
    const { anyOf: _, ...rest } = out;
    const inner = anyOf[0];
    return { ...inner, ...rest, type: [inner.type, 'null'], ...(inner.enum ? { enum: [...(inner.enum as unknown[]), null] } : {}) };
  }
  return out;
}

/** The contract's named schemas as OpenAPI components, referring to each other by #/components/schemas/<id>. */
export function contractSchemas(): Record<string, JsonSchema> {
  const { schemas } = z.toJSONSchema(contract, { target: 'draft-2020-12', uri: (id) => `#/components/schemas/${id}` });
  return tidy(schemas) as Record<string, JsonSchema>;
}
