// POST /a2a (A2A JSON-RPC, alpha), without express; its agent card is ./agent-card.ts. @a2a-js/sdk
// 1.3.0 speaks protocol 1.0; the service promises `message/send`, the 0.3 method, so both are served:
// the A2A-Version header picks the dispatcher (absent or 0.3 = legacy). Every reply is one Message
// (text + data part), never a Task, so nothing is stored. A request asked again while the figures
// are unchanged is answered from what was made for it (./answer-memo.ts).
import { A2A_VERSION_HEADER, Role, type Part } from '@a2a-js/sdk';
import { A2A_LEGACY_PROTOCOL_VERSION } from '@a2a-js/sdk/compat/v0_3';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import { ContentTypeNotSupportedError } from '@a2a-js/sdk/errors';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  UnauthenticatedUser,
  defaultServerCallContextBuilder,
  validateVersion,
  type AgentExecutor,
  type RequestContext,
} from '@a2a-js/sdk/server';
import type { Origins } from '../contract/paths.ts';
import { UNAVAILABLE } from '../contract/texts/rules.ts';
import { healthSummary, historySummary, statsSummary } from '../contract/texts/summaries.ts';
import { buildAgentCard } from './agent-card.ts';
import { createAnswerMemo, cutTemplate, fillTemplate, templateChars, type HeaderOf, type KeptAnswer, type Template } from './answer-memo.ts';
import type { Figures } from './figures.ts';
import { INVALID_PARAMS, paramsProblem, publicError, type RpcError } from './rpc-errors.ts';

const HEALTH_WORDS = /\b(health|healthy|status|fresh|freshness|stale|alive|liveness|writer|heartbeat|down)\b/i;

const HISTORY_WORDS = /\b(history|historical|track record|every night|all nights|whole record|series|csv|cumulative|since the start)\b/i;

export type SkillId = 'stats' | 'history' | 'health';

/**
 * The skill a message asks for: a data part naming it ({"skill": …}) decides; otherwise words about
 * health, then about the history; else the stats.
 */
export function askedSkill(parts: Part[]): SkillId {
  for (const part of parts) {
    const content = part.content;
    if (content?.$case === 'data' && content.value && typeof content.value === 'object') {
      const asked = (content.value as Record<string, unknown>).skill ?? (content.value as Record<string, unknown>).operation;
      if (asked === 'health' || asked === 'history' || asked === 'stats') return asked;
    }
  }
  const words = parts.map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join(' ');
  if (HEALTH_WORDS.test(words)) return 'health';
  if (HISTORY_WORDS.test(words)) return 'history';
  return 'stats';
}

/** The values of its own an answer carries: the ids of the Message it is. */
interface Published { messageId: string; contextId: string }

class FiguresExecutor implements AgentExecutor {
  private readonly figures: Figures;
  private readonly siteUrl: string;
  private readonly onPublished: (message: Published) => void;
  constructor(figures: Figures, siteUrl: string, onPublished: (message: Published) => void) {
    this.figures = figures;
    this.siteUrl = siteUrl;
    this.onPublished = onPublished;
  }

  async execute(ctx: RequestContext, bus: Parameters<AgentExecutor['execute']>[1]): Promise<void> {
    let text: string;
    let data: unknown;
    const skill = askedSkill(ctx.userMessage.parts);
    const history = skill === 'history' ? await this.figures.history().catch(() => undefined) : undefined;
    if (skill === 'health') {
      const health = (await this.figures.health()).value;
      [text, data] = [healthSummary(health), health];
    } else if (history) {
      const log = await this.figures.log().catch(() => undefined);
      [text, data] = [historySummary(history.value, this.siteUrl, history.value, log?.value), history.value];
    } else {
      const stats = await this.figures.stats().catch(() => undefined);
      const health = stats ? undefined : (await this.figures.health()).value;
      [text, data] = stats
        ? [statsSummary(stats.value), stats.value]
        : [UNAVAILABLE.a2a, health];
    }
    const published = { messageId: crypto.randomUUID(), contextId: ctx.contextId };
    this.onPublished(published);
    bus.publish(AgentEvent.message({
      ...published,
      taskId: '',
      role: Role.ROLE_AGENT,
      parts: [
        { content: { $case: 'text', value: text }, mediaType: 'text/plain', filename: '', metadata: undefined },
        { content: { $case: 'data', value: data }, mediaType: 'application/json', filename: '', metadata: undefined },
      ],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    }));
    bus.finished();
  }

  cancelTask = async (): Promise<void> => {};
}

const jsonHeaders = { 'content-type': 'application/json', 'cache-control': 'no-store' };
const rpcReply = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: jsonHeaders });
const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** A request whose answer may be kept: under what, and the values of its own that its answer may carry. */
interface Asked { key: string; id: string | number; messageId: string; contextId?: string }

/**
 * Under what a request is kept: the A2A-Version it asks for and its whole body but the values the
 * SDK only carries into the answer or ignores (the request's id and its message's id) and the
 * message's contextId, which the answer carries back (the SDK makes one when none is given). Only
 * message requests with ids of their own are kept.
 */
function requestKey(version: string | undefined, body: Record<string, unknown>): Asked | undefined {
  const { id, params, ...rest } = body;
  if ((typeof id !== 'string' && typeof id !== 'number') || !isRecord(params) || !isRecord(params.message)) return undefined;
  const { messageId, contextId, ...message } = params.message;
  if (typeof messageId !== 'string' || messageId === '') return undefined;
  if (contextId !== undefined && (typeof contextId !== 'string' || contextId === '')) return undefined;
  const key = [version ?? '', contextId === undefined ? 'new context' : 'given context', JSON.stringify({ ...rest, params: { ...params, message } })].join('\n');
  return { key, id, messageId, contextId };
}

type Hole = 'id' | 'messageId' | 'contextId';
const hole = (name: Hole, value: unknown) => `"${name}":${JSON.stringify(value)}`;

/**
 * The answer cut where its own values stand, when it can be made again from the cut: each stands
 * once in it, its contextId is the one asked for when one was, and the request's message id did not
 * come back in it.
 */
function templateOf(text: string, asked: Asked, published: Published | undefined): Template<Hole> | undefined {
  if (!published || (asked.contextId ?? published.contextId) !== published.contextId || text.includes(JSON.stringify(asked.messageId))) return undefined;
  return cutTemplate<Hole>(text, { id: hole('id', asked.id), messageId: hole('messageId', published.messageId), contextId: hole('contextId', published.contextId) });
}

/** What a POST asks, read before any SDK sees it: a reply made here (a refusal), or the request for the SDK. */
type Read =
  | { reply: object }
  | { body: Record<string, unknown>; id: unknown; requestedVersion: string | undefined; legacy: boolean; asked: Asked | undefined };

function readRequest(header: HeaderOf, text: string): Read {
  const requestedVersion = header(A2A_VERSION_HEADER) || undefined;
  const legacy = (requestedVersion ?? A2A_LEGACY_PROTOCOL_VERSION) === A2A_LEGACY_PROTOCOL_VERSION;
  const mapError = legacy ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError : JsonRpcTransportHandler.mapToJSONRPCError;
  const contentType = header('content-type');
  if (contentType && contentType.split(';', 1)[0]!.trim().toLowerCase() !== 'application/json') {
    return { reply: { jsonrpc: '2.0', id: null, error: mapError(new ContentTypeNotSupportedError(`Unsupported Content-Type "${contentType}"; expected application/json.`)) } };
  }
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // Parsed here: a string handed to the SDK would come back as -32600/-32602, not -32700.
    return { reply: { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the body is not valid JSON.' } } };
  }
  const id = isRecord(body) ? (body.id ?? null) : null;
  const problem = paramsProblem(body, 'a2a');
  if (problem) return { reply: { jsonrpc: '2.0', id, error: { code: INVALID_PARAMS, message: `Invalid params: ${problem}` } } };
  return { body, id, requestedVersion, legacy, asked: isRecord(body) ? requestKey(requestedVersion, body) : undefined };
}

const JSON_HEADER_LIST = Object.entries(jsonHeaders);

export interface A2AEndpoint {
  /** POST /a2a: one JSON-RPC request, answered with one Message or an error. */
  handle(request: Request): Promise<Response>;
  /**
   * The answer `handle` gives from what it kept for a POST of this text with these headers (the
   * reply the SDK made for the same request before, with this request's id and fresh message and
   * context ids in place); undefined when `handle` would make one.
   */
  kept(header: HeaderOf, text: string): Promise<KeptAnswer | undefined>;
}

export function createA2AEndpoint(cfg: Pick<Origins, 'siteUrl'>, figures: Figures): A2AEndpoint {
  const card = buildAgentCard(cfg);
  const memo = createAnswerMemo<Template<Hole>>(figures, templateChars);
  // A handler pair per request not answered from the memo, reading the figures through its recording.
  // The task store is required by the handler's constructor; replies are Messages, so it stays empty.
  const handlersOver = (recorded: Figures, onPublished: (message: Published) => void) => {
    const requestHandler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new FiguresExecutor(recorded, cfg.siteUrl, onPublished));
    return { v1: new JsonRpcTransportHandler(requestHandler), v03: new LegacyJsonRpcTransportHandler(requestHandler) };
  };
  /** The kept reply's text for this request, with its own values in place. */
  const keptText = async (asked: Asked | undefined, id: unknown) => {
    const kept = asked && (await memo.find(asked.key));
    if (!asked || !kept) return undefined;
    return fillTemplate(kept, { id: hole('id', id), messageId: hole('messageId', crypto.randomUUID()), contextId: hole('contextId', asked.contextId ?? crypto.randomUUID()) });
  };

  return {
    async kept(header, text) {
      const read = readRequest(header, text);
      if ('reply' in read) return undefined;
      const body = await keptText(read.asked, read.id);
      return body === undefined ? undefined : { body, headers: JSON_HEADER_LIST };
    },

    async handle(request) {
      // A body that cannot be read is answered as one that is not JSON.
      const read = readRequest((name) => request.headers.get(name), await request.text().catch(() => ''));
      if ('reply' in read) return rpcReply(read.reply);
      const { body, id, requestedVersion, legacy, asked } = read;
      const kept = await keptText(asked, id);
      if (kept !== undefined) return new Response(kept, { status: 200, headers: jsonHeaders });
      const mapError = legacy ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError : JsonRpcTransportHandler.mapToJSONRPCError;
      const recording = memo.recording(figures);
      let published: Published | undefined;
      const { v1, v03 } = handlersOver(recording.figures, (message) => { published = message; });
      try {
        const headers: Record<string, string> = {};
        request.headers.forEach((value, key) => { headers[key] = value; });
        const ctx = defaultServerCallContextBuilder({ extensions: undefined, user: new UnauthenticatedUser(), headers, requestedVersion });
        validateVersion(ctx.requestedVersion, card, 'JSONRPC');
        const result = await (legacy ? v03 : v1).handle(body, ctx);
        if (result && typeof (result as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function') {
          // Only streaming methods return a stream, and the card says streaming: false, so the SDK
          // refuses them first; this is the belt to those braces.
          return rpcReply({ jsonrpc: '2.0', id, error: { code: -32004, message: 'Streaming is not supported by this agent.' } });
        }
        const reply = result as { error?: RpcError };
        if (reply?.error) return rpcReply({ ...reply, error: publicError(reply.error, console.error) });
        const text = JSON.stringify(result);
        const template = asked && templateOf(text, asked, published);
        if (asked && template) recording.keep(asked.key, template);
        return new Response(text, { status: 200, headers: jsonHeaders });
      } catch (error) {
        return rpcReply({ jsonrpc: '2.0', id, error: publicError(mapError(error), console.error) });
      }
    },
  };
}
