// The MCP SDK's answers, kept for the same request asked again while the figures it read are
// unchanged. In stateless JSON mode an answer is a function of the request (its whole message but
// the id, and the headers the transport reads) and of the figures its handler read, so the answer
// made for an earlier request is this one's, with this request's id in place of that one's. Polling
// agents ask the same few things over and over; each is made once per change of the figures.
import type { Figures } from './figures.ts';

type FigureName = keyof Figures;

/** The headers the SDK's transport reads from a POST (webStandardStreamableHttp.js). */
const TRANSPORT_HEADERS = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id'] as const;
/** Distinct requests kept; the oldest goes first. Enough for every tool and argument an agent polls. */
const MEMO_SIZE = 64;

interface Kept {
  /** The figures the handler read, each with the ETag it had. */
  read: [FigureName, string][];
  /** The answer's text before its "jsonrpc" and "id", which end every answer the SDK makes. */
  head: string;
  headers: [string, string][];
}

/** What ends the SDK's answer to the request with this id: it writes `{result, jsonrpc, id}` in that order. */
const tail = (id: unknown) => `,"jsonrpc":"2.0","id":${JSON.stringify(id)}}`;

/** A JSON-RPC request the SDK answers with one message: a method and an id of its own. */
function requestKey(request: Request, message: unknown): string | undefined {
  if (message === null || typeof message !== 'object' || Array.isArray(message)) return undefined;
  const { id, ...rest } = message as Record<string, unknown>;
  if ((typeof id !== 'string' && typeof id !== 'number') || typeof rest.method !== 'string') return undefined;
  return [JSON.stringify(rest), ...TRANSPORT_HEADERS.map((name) => request.headers.get(name) ?? '')].join('\n');
}

export interface McpMemo {
  /** The kept answer to this request, when the figures its answer read are still the ones it read. */
  answer(request: Request, message: unknown): Promise<Response | undefined>;
  /**
   * Figures that note what is read through them, and `keep`, which stores the answer made with them
   * (when it can be reused) and returns it.
   */
  recording(figures: Figures): { figures: Figures; keep(request: Request, message: unknown, answer: Response): Promise<Response> };
}

export function createMcpMemo(figures: Figures): McpMemo {
  const kept = new Map<string, Kept>();

  const current = async (entry: Kept) => {
    for (const [name, etag] of entry.read) {
      const now = await figures[name]().catch(() => undefined);
      if (now?.etag !== etag) return false;
    }
    return true;
  };

  return {
    async answer(request, message) {
      const key = requestKey(request, message);
      const entry = key === undefined ? undefined : kept.get(key);
      if (!entry || !(await current(entry))) return undefined;
      const body = entry.head + tail((message as { id: unknown }).id);
      return new Response(body, { status: 200, headers: entry.headers });
    },

    recording(source) {
      const read: [FigureName, string][] = [];
      let failed = false;
      const noted = <K extends FigureName>(name: K) => (() => source[name]().then(
        (value) => { read.push([name, value.etag]); return value; },
        (error: unknown) => { failed = true; throw error; },
      )) as Figures[K];
      // Typed, not cast: a figure added to Figures and not noted here does not compile.
      const recorded: Figures = { stats: noted('stats'), history: noted('history'), health: noted('health'), log: noted('log') };
      return {
        figures: recorded,
        async keep(request, message, answer) {
          const key = requestKey(request, message);
          if (key === undefined || failed || answer.status !== 200 || !answer.headers.get('content-type')?.startsWith('application/json')) return answer;
          const text = await answer.text();
          const end = tail((message as { id: unknown }).id);
          // Only a result, never an error, and only in the shape whose id can be put in place.
          if (text.startsWith('{"result":') && text.endsWith(end)) {
            kept.delete(key);
            if (kept.size >= MEMO_SIZE) kept.delete(kept.keys().next().value!);
            kept.set(key, { read, head: text.slice(0, -end.length), headers: [...answer.headers] });
          }
          return new Response(text, { status: answer.status, headers: answer.headers });
        },
      };
    },
  };
}
