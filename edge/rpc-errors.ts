// JSON-RPC errors as /mcp and /a2a callers see them. A malformed request gets "invalid params"
// (-32602) with a short reason; what went wrong inside (an SDK's TypeError, a validation dump, a
// stack overflow, upstream error text) goes to the log only.
// Codes: https://www.jsonrpc.org/specification#error_object

import { UNAVAILABLE_MESSAGE } from '../contract/texts/rules.ts';

export const INVALID_REQUEST = -32600;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;

export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}


/** Deeper params are not a request of these protocols; the SDKs recurse into them and overflow. */
export const MAX_PARAMS_DEPTH = 32;

/** Whether `value` nests objects or arrays more than `limit` levels deep (iterative: no recursion to overflow). */
function nestedDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth >= limit) return true;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return false;
}

// A2A identifiers and text the SDK calls string methods on; a number there is a TypeError inside it.
const A2A_STRING_FIELDS = new Set(['id', 'messageId', 'taskId', 'contextId', 'text', 'kind', 'mediaType', 'mimeType', 'uri', 'url', 'name', 'filename']);
// Free-form content: anything goes inside these.
const A2A_FREE_FIELDS = new Set(['metadata', 'data', 'extensions']);

/** The first A2A field whose value must be a string and is not, as "path must be a string". */
function a2aTypeProblem(value: unknown, path: string): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, child] of Object.entries(value)) {
    const where = Array.isArray(value) ? `${path}[${key}]` : path ? `${path}.${key}` : key;
    if (!Array.isArray(value) && A2A_FREE_FIELDS.has(key)) continue;
    if (!Array.isArray(value) && A2A_STRING_FIELDS.has(key) && child !== undefined && child !== null && typeof child !== 'string') {
      return `${where} must be a string`;
    }
    if (key === 'referenceTaskIds' && Array.isArray(child) && child.some((id) => typeof id !== 'string')) return `${where} must be an array of strings`;
    const inner = a2aTypeProblem(child, where);
    if (inner) return inner;
  }
  return undefined;
}

/** Why a request's params cannot be served, before any SDK sees them; undefined when they can. */
export function paramsProblem(body: unknown, protocol: 'mcp' | 'a2a'): string | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const params = (body as { params?: unknown }).params;
  if (nestedDeeperThan(params, MAX_PARAMS_DEPTH)) return `params nest more than ${MAX_PARAMS_DEPTH} levels deep`;
  return protocol === 'a2a' ? a2aTypeProblem(params, 'params') : undefined;
}

/** The first issue of a zod validation dump (as the MCP SDK puts in a message) as "path: reason". */
function validationReason(message: string): string | undefined {
  try {
    const issues = JSON.parse(message) as { path?: unknown[]; message?: string }[];
    const first = Array.isArray(issues) ? issues[0] : undefined;
    if (!first?.message) return undefined;
    const path = (first.path ?? []).filter((part) => part !== 'params').join('.');
    return `${path || 'params'}: ${first.message}`;
  } catch {
    return undefined;
  }
}

/**
 * The error a caller may see: an internal one is logged whole, and answered as invalid params when
 * it is a validation of the request, else as a bare internal error.
 */
export function publicError(error: RpcError, log: (line: string) => void): RpcError {
  if (error.code !== INTERNAL_ERROR || error.message === UNAVAILABLE_MESSAGE) return error;
  log(`internal JSON-RPC error: ${error.message.replace(/\s*\n\s*/g, ' ')}`);
  const reason = validationReason(error.message);
  return reason ? { code: INVALID_PARAMS, message: `Invalid params: ${reason}` } : { code: INTERNAL_ERROR, message: 'Internal error.' };
}
