// POST /a2a (A2A JSON-RPC, alpha) and its agent card, without express. @a2a-js/sdk 1.3.0 speaks
// protocol 1.0; the service promises `message/send`, the 0.3 method, so both are served: the
// A2A-Version header picks the dispatcher (absent or 0.3 = legacy). Every reply is one Message (text + data part), never a Task, so nothing is stored.
import { A2A_VERSION_HEADER, Role, type AgentCard, type AgentSkill, type Part } from '@a2a-js/sdk';
import { A2A_LEGACY_PROTOCOL_VERSION, duplicateInterfacesForLegacy } from '@a2a-js/sdk/compat/v0_3';
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
import type { EdgeConfig } from './config.ts';
import type { Figures } from './figures.ts';
import { strongEtag, etagMatches } from './http.ts';
import { INVALID_PARAMS, paramsProblem, publicError, type RpcError } from './rpc-errors.ts';
import { RULES, SERVICE_NAME, verification } from '../contract/texts/rules.ts';
import { healthSummary, historySummary, statsSummary } from '../contract/texts/summaries.ts';

export const AGENT_VERSION = '0.1.0-alpha';
/** The protocol version a 0.3 agent card states (https://a2a-protocol.org/v0.3.0/specification/). */
const A2A_CARD_PROTOCOL_VERSION = '0.3.0';

const SKILLS: AgentSkill[] = [
  {
    id: 'stats',
    name: 'Public statistics',
    description:
      "Nightly gross reward payouts (last 16 nights), today's in-progress accrual estimate, totals, capital and trailing-window returns with trading costs. Replies with a plain-words summary and the stats record as a data part. Input: any text, or a JSON data part {\"skill\": \"stats\"}.",
    tags: ['statistics', 'liquidity rewards', 'read-only'],
    examples: ['latest stats', "What was last night's payout?", '{"skill": "stats"}'],
    inputModes: ['text/plain', 'application/json'],
    outputModes: ['text/plain', 'application/json'],
    securityRequirements: [],
  },
  {
    id: 'history',
    name: 'The whole track record',
    description: 'Every settled night since the start, oldest first, with the running gross total, trading cost and capital base. Replies with a short summary and the history record as a data part. Input: text that asks for the history or track record, or a JSON data part {"skill": "history"}.',
    tags: ['history', 'track record', 'read-only'],
    examples: ['full history', 'Show the whole track record', '{"skill": "history"}'],
    inputModes: ['text/plain', 'application/json'],
    outputModes: ['text/plain', 'application/json'],
    securityRequirements: [],
  },
  {
    id: 'health',
    name: 'Data freshness and liveness',
    description: 'Whether the data are fresh and the writer is alive, and on a read replica how far its data trail the primary ("ok", "degraded" or "down"). Input: text that asks about health, status or freshness, or a JSON data part {"skill": "health"}.',
    tags: ['health', 'freshness', 'read-only'],
    examples: ['health', 'Is the data fresh?', '{"skill": "health"}'],
    inputModes: ['text/plain', 'application/json'],
    outputModes: ['text/plain', 'application/json'],
    securityRequirements: [],
  },
];

export function buildAgentCard(cfg: EdgeConfig): AgentCard {
  return {
    name: SERVICE_NAME,
    description: `Read-only, alpha agent for the public aggregate statistics of one liquidity-reward market-making account. ${RULES.gross_not_profit} ${RULES.accrual_is_estimate} ${Object.values(verification(cfg)).join(' ')}`,
    version: AGENT_VERSION,
    provider: { organization: SERVICE_NAME, url: cfg.siteUrl },
    documentationUrl: `${cfg.siteUrl}/api-docs`,
    supportedInterfaces: duplicateInterfacesForLegacy(
      [{ url: `${cfg.siteUrl}/a2a`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }],
      ['JSONRPC'],
    ),
    capabilities: { streaming: false, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: SKILLS,
    signatures: [],
  };
}

/**
 * The v0.3 card with the v1.0 interfaces embedded (the SDK's "hybrid" card). The SDK's converter
 * lives only inside its express router, so the 0.3 fields are written out here.
 */
function hybridCard(card: AgentCard): Record<string, unknown> {
  const legacy = card.supportedInterfaces.find((i) => i.protocolVersion === A2A_LEGACY_PROTOCOL_VERSION);
  if (!legacy) throw new Error('the agent card has no 0.3 interface');
  return {
    name: card.name,
    description: card.description,
    version: card.version,
    url: legacy.url,
    preferredTransport: legacy.protocolBinding,
    // A2A 0.3 cards state the full version ("0.3.0"); the SDK's interface label is "0.3".
    protocolVersion: A2A_CARD_PROTOCOL_VERSION,
    capabilities: { streaming: false, pushNotifications: false },
    defaultInputModes: card.defaultInputModes,
    defaultOutputModes: card.defaultOutputModes,
    skills: card.skills.map(({ id, name, description, tags, examples, inputModes, outputModes }) =>
      ({ id, name, description, tags, examples, inputModes, outputModes })),
    provider: card.provider,
    documentationUrl: card.documentationUrl,
    supportsAuthenticatedExtendedCard: false,
    supportedInterfaces: card.supportedInterfaces,
  };
}

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

class FiguresExecutor implements AgentExecutor {
  private readonly figures: Figures;
  private readonly siteUrl: string;
  constructor(figures: Figures, siteUrl: string) {
    this.figures = figures;
    this.siteUrl = siteUrl;
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
      [text, data] = [historySummary(history.value, this.siteUrl), history.value];
    } else {
      const stats = await this.figures.stats().catch(() => undefined);
      const health = stats ? undefined : (await this.figures.health()).value;
      [text, data] = stats
        ? [statsSummary(stats.value), stats.value]
        : ['The statistics are unavailable right now; the data part holds the health report. Retry in a minute.', health];
    }
    bus.publish(AgentEvent.message({
      messageId: crypto.randomUUID(),
      contextId: ctx.contextId,
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

export interface A2AHandlers {
  card(request: Request): Promise<Response>;
  rpc(request: Request): Promise<Response>;
}

export function createA2A(cfg: EdgeConfig, figures: Figures): A2AHandlers {
  const card = buildAgentCard(cfg);
  // The task store is required by the handler's constructor; replies are Messages, so it stays empty.
  const requestHandler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new FiguresExecutor(figures, cfg.siteUrl));
  const v1 = new JsonRpcTransportHandler(requestHandler);
  const v03 = new LegacyJsonRpcTransportHandler(requestHandler);
  const cardBodies = Promise.all([hybridCard(card), card].map(async (c) => {
    const body = JSON.stringify(c);
    return { body, etag: await strongEtag(body) };
  }));

  return {
    async card(request) {
      const version = request.headers.get(A2A_VERSION_HEADER) || A2A_LEGACY_PROTOCOL_VERSION;
      const [legacy, current] = await cardBodies;
      const chosen = version === A2A_LEGACY_PROTOCOL_VERSION ? legacy! : current!;
      const headers = {
        'content-type': 'application/json',
        'cache-control': 'public, max-age=3600',
        vary: A2A_VERSION_HEADER,
        etag: chosen.etag,
      };
      if (etagMatches(request.headers.get('if-none-match'), chosen.etag)) return new Response(null, { status: 304, headers });
      return new Response(chosen.body, { headers });
    },

    async rpc(request) {
      const requestedVersion = request.headers.get(A2A_VERSION_HEADER) || undefined;
      const legacy = (requestedVersion ?? A2A_LEGACY_PROTOCOL_VERSION) === A2A_LEGACY_PROTOCOL_VERSION;
      const mapError = legacy ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError : JsonRpcTransportHandler.mapToJSONRPCError;
      const contentType = request.headers.get('content-type');
      if (contentType && contentType.split(';', 1)[0]!.trim().toLowerCase() !== 'application/json') {
        return rpcReply({ jsonrpc: '2.0', id: null, error: mapError(new ContentTypeNotSupportedError(`Unsupported Content-Type "${contentType}"; expected application/json.`)) });
      }
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(await request.text()) as Record<string, unknown>;
      } catch {
        // Parsed here: a string handed to the SDK would come back as -32600/-32602, not -32700.
        return rpcReply({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the body is not valid JSON.' } });
      }
      const id = body && typeof body === 'object' && !Array.isArray(body) ? (body.id ?? null) : null;
      const problem = paramsProblem(body, 'a2a');
      if (problem) return rpcReply({ jsonrpc: '2.0', id, error: { code: INVALID_PARAMS, message: `Invalid params: ${problem}` } });
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
        return rpcReply(result);
      } catch (error) {
        return rpcReply({ jsonrpc: '2.0', id, error: publicError(mapError(error), console.error) });
      }
    },
  };
}
