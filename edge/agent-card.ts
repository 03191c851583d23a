// The A2A agent card (alpha) at /.well-known/agent-card.json: the skills the agent offers and where
// it answers. @a2a-js/sdk 1.3.0 writes protocol 1.0 cards; a client that sends no A2A-Version header,
// or 0.3, gets the 0.3 card, which embeds the 1.0 interfaces, and any other version the 1.0 card. The
// RPC is ./a2a.ts.
import { A2A_VERSION_HEADER, type AgentCard, type AgentSkill } from '@a2a-js/sdk';
import { A2A_LEGACY_PROTOCOL_VERSION, duplicateInterfacesForLegacy } from '@a2a-js/sdk/compat/v0_3';
import { SITE_DOCUMENTS } from '../contract/documents.ts';
import { SITE_PATHS, type Origins } from '../contract/paths.ts';
import { RULES, SERVICE_NAME, verification } from '../contract/texts/rules.ts';
import { etagMatches, strongEtag } from './http.ts';

export const AGENT_VERSION = '0.1.0-alpha';
/** The protocol version a 0.3 agent card states (https://a2a-protocol.org/v0.3.0/specification/). */
const A2A_CARD_PROTOCOL_VERSION = '0.3.0';
/** Every skill takes and gives plain text and JSON. */
const MODES = ['text/plain', 'application/json'];
/** Its row in the documents table: media type and cache policy. */
const CARD_DOCUMENT = SITE_DOCUMENTS.find((d) => d.path === SITE_PATHS.AGENT_CARD)!;

/** A read-only skill in both modes, open to anyone. */
function skill(id: string, name: string, description: string, tags: string[], examples: string[]): AgentSkill {
  return { id, name, description, tags: [...tags, 'read-only'], examples, inputModes: MODES, outputModes: MODES, securityRequirements: [] };
}

const SKILLS: AgentSkill[] = [
  skill('stats', 'Public statistics',
    "Nightly gross reward payouts (last 16 nights), today's in-progress accrual estimate, totals, capital, trailing-window returns with trading costs and the latest independent audit. Replies with a plain-words summary and the stats record as a data part. Input: any text, or a JSON data part {\"skill\": \"stats\"}.",
    ['statistics', 'liquidity rewards'], ['latest stats', "What was last night's payout?", '{"skill": "stats"}']),
  skill('history', 'The whole track record',
    'Every settled night since the start, oldest first, with the running gross total, trading cost and capital base. Replies with a short summary and the history record as a data part. Input: text that asks for the history or track record, or a JSON data part {"skill": "history"}.',
    ['history', 'track record'], ['full history', 'Show the whole track record', '{"skill": "history"}']),
  skill('health', 'Data freshness and liveness',
    'Whether the data are fresh and the writer is alive, and on a read replica whether it receives the primary\'s changes and how far its data trail the primary ("ok", "degraded" or "down"). Input: text that asks about health, status or freshness, or a JSON data part {"skill": "health"}.',
    ['health', 'freshness'], ['health', 'Is the data fresh?', '{"skill": "health"}']),
];

export function buildAgentCard(cfg: Pick<Origins, 'siteUrl'>): AgentCard {
  return {
    name: SERVICE_NAME,
    description: `Read-only, alpha agent for the public aggregate statistics of one liquidity-reward market-making account. ${RULES.gross_not_profit} ${RULES.accrual_is_estimate} ${Object.values(verification(cfg)).join(' ')}`,
    version: AGENT_VERSION,
    provider: { organization: SERVICE_NAME, url: cfg.siteUrl },
    documentationUrl: cfg.siteUrl + SITE_PATHS.API_DOCS,
    supportedInterfaces: duplicateInterfacesForLegacy(
      [{ url: cfg.siteUrl + SITE_PATHS.A2A, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }],
      ['JSONRPC'],
    ),
    capabilities: { streaming: false, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: MODES,
    defaultOutputModes: MODES,
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

/** GET of the card: the 0.3 card unless A2A-Version asks for another, each with its own validator. */
export function createAgentCardHandler(cfg: Pick<Origins, 'siteUrl'>): (request: Request) => Promise<Response> {
  const card = buildAgentCard(cfg);
  const cardBodies = Promise.all([hybridCard(card), card].map(async (c) => {
    const body = JSON.stringify(c);
    return { body, etag: await strongEtag(body) };
  }));
  return async (request) => {
    const version = request.headers.get(A2A_VERSION_HEADER) || A2A_LEGACY_PROTOCOL_VERSION;
    const [legacy, current] = await cardBodies;
    const chosen = version === A2A_LEGACY_PROTOCOL_VERSION ? legacy! : current!;
    const headers = {
      'content-type': CARD_DOCUMENT.mediaType,
      'cache-control': CARD_DOCUMENT.cacheControl,
      vary: A2A_VERSION_HEADER,
      etag: chosen.etag,
    };
    if (etagMatches(request.headers.get('if-none-match'), chosen.etag)) return new Response(null, { status: 304, headers });
    return new Response(chosen.body, { headers });
  };
}
