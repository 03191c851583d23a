// The MCP SDK's answers, kept for the same request asked again while the figures it read are
// unchanged. In stateless JSON mode an answer is a function of the request (its whole message but
// the id, and the headers the transport reads) and of the figures its handler read, so the answer
// made for an earlier request is this one's, with this request's id in place of that one's.
import { createAnswerMemo, cutTemplate, fillTemplate, templateChars, type HeaderOf, type KeptAnswer, type Template } from './answer-memo.ts';
import type { Figures } from './figures.ts';

/** The headers the SDK's transport reads from a POST (webStandardStreamableHttp.js). */
const TRANSPORT_HEADERS = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id'] as const;

interface Kept {
  template: Template<'id'>;
  headers: [string, string][];
}

/** What ends the SDK's answer to the request with this id: it writes `{result, jsonrpc, id}` in that order. */
const tail = (id: unknown) => `,"jsonrpc":"2.0","id":${JSON.stringify(id)}}`;

/** A JSON-RPC request the SDK answers with one message: a method and an id of its own. */
function requestKey(header: HeaderOf, message: unknown): string | undefined {
  if (message === null || typeof message !== 'object' || Array.isArray(message)) return undefined;
  const { id, ...rest } = message as Record<string, unknown>;
  if ((typeof id !== 'string' && typeof id !== 'number') || typeof rest.method !== 'string') return undefined;
  return [JSON.stringify(rest), ...TRANSPORT_HEADERS.map((name) => header(name) ?? '')].join('\n');
}

export interface McpMemo {
  /** The kept answer to a request with these headers and this message, when the figures its answer read are still the ones it read. */
  answer(header: HeaderOf, message: unknown): Promise<KeptAnswer | undefined>;
  /**
   * Figures that note what is read through them, and `keep`, which stores the answer made with them
   * (when it can be reused) and returns it.
   */
  recording(figures: Figures): { figures: Figures; keep(request: Request, message: unknown, answer: Response): Promise<Response> };
}

export function createMcpMemo(figures: Figures): McpMemo {
  const memo = createAnswerMemo<Kept>(figures, (kept) => templateChars(kept.template));
  return {
    async answer(header, message) {
      const key = requestKey(header, message);
      const kept = key === undefined ? undefined : await memo.find(key);
      if (!kept) return undefined;
      return { body: fillTemplate(kept.template, { id: tail((message as { id: unknown }).id) }), headers: kept.headers };
    },

    recording(source) {
      const recording = memo.recording(source);
      return {
        figures: recording.figures,
        async keep(request, message, answer) {
          const key = requestKey((name) => request.headers.get(name), message);
          if (key === undefined || answer.status !== 200 || !answer.headers.get('content-type')?.startsWith('application/json')) return answer;
          const text = await answer.text();
          const end = tail((message as { id: unknown }).id);
          // Only a result, never an error, and only in the shape whose id can be put in place.
          const template = text.startsWith('{"result":') && text.endsWith(end) ? cutTemplate(text, { id: end }) : undefined;
          if (template) recording.keep(key, { template, headers: [...answer.headers] });
          return new Response(text, { status: answer.status, headers: answer.headers });
        },
      };
    },
  };
}
