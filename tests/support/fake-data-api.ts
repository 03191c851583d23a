// Polymarket's Data API v2, faked for the writer's tests from its public reference, never from the
// writer: each rule names its page. The conventions every v2 route shares are in the `info` of its
// OpenAPI document, repeated on each route's page: the payload is wrapped in `data` (paged routes add
// `pagination`), cursors are opaque and signed, there is no `offset` ("sending one is a 400"), params
// accept snake_case and camelCase, and errors carry `error`, `code`, `retryable` and `trace_id`.
//   GET /v2/activity   https://docs.polymarket.com/api-reference/feeds/list-account-activity
//   GET /v2/positions  https://docs.polymarket.com/api-reference/wallet/list-positions-for-a-user-or-market
//   GET /v2/value      https://docs.polymarket.com/api-reference/wallet/get-portfolio-value
// The v1 routes are not served: each has a v2 counterpart (only GET /v1/accounting/snapshot stays on
// v1: https://docs.polymarket.com/api-reference/data-api/migrating-from-v1), so a writer that still
// asks v1 gets this fake's 404. A documented parameter the fake does not model (market selection by
// `condition` or `event_id`, `title`, `include_archived`, a `start`/`end` window on positions) answers
// 501, so a test can never pass on a filter that was silently ignored.
import { createHmac, randomBytes, randomUUID } from 'node:crypto';

/** One activity row, as /v2/activity serves it: the `Activity` schema of https://docs.polymarket.com/api-reference/feeds/list-account-activity. */
export interface ActivityRow {
  proxy_wallet: string; timestamp: number; condition_id: string; type: string; size: number; usdc_size: number; transaction_hash: string;
  price: number; token_id: string; side: string; outcome_index: number; title: string; slug: string; icon: string; event_slug: string;
  outcome: string; name: string; pseudonym: string; bio: string; profile_image: string; profile_image_optimized: string;
}

/** One position, as /v2/positions serves it: the `Position` schema of https://docs.polymarket.com/api-reference/wallet/list-positions-for-a-user-or-market; `status` is OPEN, REDEEMABLE or CLOSED. */
export interface Position {
  proxy_wallet: string; token_id: string; condition_id: string; current_size: number; avg_price: number; entry_cost_usdc: number;
  entry_fees_usdc: number; total_cost_usdc: number; current_price: number; current_value: number; total_size: number; realized_pnl: number;
  unrealized_pnl: number; total_pnl: number; percent_pnl: number; percent_realized_pnl: number; status: string; redeemable: boolean;
  mergeable: boolean; negative_risk: boolean; archived: boolean; title: string; slug: string; icon: string; event_id: string; event_slug: string;
  outcome: string; outcome_index: number; opposite_outcome: string; opposite_token_id: string; end_date: string; last_event_at: number;
  first_entry_at: number; name: string; profile_image: string; verified: boolean;
}

/** What the Data API knows of the account: its wallet (the `user`), its activity and its positions. */
export interface DataFacts { funder: string; activity: ActivityRow[]; positions: Position[] }

export interface DataAnswer { status: number; body: unknown }

/**
 * `type` values /v2/activity accepts ("Any other value is rejected with 400"); TIP only when named.
 * https://docs.polymarket.com/api-reference/feeds/list-account-activity (parameter `type`; the list is that route's OpenAPI, data-api.polymarket.com/v2/openapi.json).
 */
const ACTIVITY_TYPES = new Set(['TRADE', 'SPLIT', 'MERGE', 'REDEEM', 'CONVERSION', 'MIGRATION', 'REWARD', 'YIELD', 'MAKER_REBATE',
  'TAKER_REBATE', 'REFERRAL_REWARD', 'DEPOSIT', 'WITHDRAWAL', 'TIP']);
const OPT_IN_ACTIVITY = new Set(['TIP']);
/** "Page size; default 100, max 1000, past-cap rejected." (https://docs.polymarket.com/api-reference/feeds/list-account-activity, `limit`) */
const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;
/** An omitted or 0 `start` of the activity feed "floors to three years back"; an omitted or 0 `end` "is now plus one day" (https://docs.polymarket.com/api-reference/feeds/list-account-activity). */
const THREE_YEARS_S = 3 * 365 * 86_400;
const DAY_S = 86_400;
/** The statuses of /v2/positions, and the sort each defaults to (https://docs.polymarket.com/api-reference/wallet/list-positions-for-a-user-or-market, `status` and `sort_by`). */
const POSITION_STATUS_SORT: Record<string, string> = {
  OPEN: 'CURRENT_VALUE', REDEEMABLE: 'CURRENT_VALUE', REDEEMABLE_LOST: 'CURRENT_VALUE', MERGEABLE: 'TOKENS', CLOSED: 'REALIZED_PNL',
};
/** The v2 `sort_by` values, and the field each orders by; PRICE is a sort of v1's /positions only, so it is refused here. */
const POSITION_SORT_FIELD: Record<string, keyof Position> = {
  CURRENT_VALUE: 'current_value', TOKENS: 'current_size', UNREALIZED_PNL: 'unrealized_pnl',
  REALIZED_PNL: 'realized_pnl', TOTAL_PNL: 'total_pnl', TIMESTAMP: 'last_event_at',
};
/** On a user's CLOSED positions these sorts describe a holding that no longer exists: served in REALIZED_PNL order (https://docs.polymarket.com/api-reference/wallet/list-positions-for-a-user-or-market, `sort_by`). */
const CLOSED_AS_REALIZED = new Set(['TOKENS', 'CURRENT_VALUE', 'UNREALIZED_PNL']);
/** `filter_amount` of TOKENS "defaults to the 0.1 dust floor"; CASH applies "on top of the token dust floor" (https://docs.polymarket.com/api-reference/wallet/list-positions-for-a-user-or-market). */
const DUST_SHARES = 0.1;

class Rejected extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}
/** A 400 whose message names the parameter (the pages' "a 400 naming the value"). */
const invalid = (message: string) => new Rejected(400, message);

/** A query parameter by its snake_case name or its camelCase spelling ("Params accept both"). */
function param(q: Record<string, string>, name: string): string | undefined {
  return q[name] ?? q[name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())];
}

function oneOf(q: Record<string, string>, name: string, allowed: Iterable<string>): string | undefined {
  const value = param(q, name);
  if (value !== undefined && ![...allowed].includes(value)) throw invalid(`invalid ${name}: ${value}`);
  return value;
}

function integer(q: Record<string, string>, name: string): number | undefined {
  const value = param(q, name);
  if (value === undefined) return undefined;
  if (!/^-?\d+$/.test(value)) throw invalid(`invalid ${name}: ${value}`);
  return Number(value);
}

function boolean(q: Record<string, string>, name: string, fallback: boolean): boolean {
  const value = oneOf(q, name, ['true', 'false']);
  return value === undefined ? fallback : value === 'true';
}

/** A page size of at most `max`; without one, the feed's default. */
function limitOf(q: Record<string, string>, max = Infinity): number {
  const limit = integer(q, 'limit') ?? DEFAULT_LIMIT;
  if (limit < 0 || limit > max) throw invalid(`limit must be between 0 and ${max}`);
  return limit;
}

/** A wallet address; the docs require it without giving its grammar, so this fake takes 0x and 40 hex digits. */
function user(q: Record<string, string>, required: boolean): string | undefined {
  const value = param(q, 'user');
  if (value === undefined || value === '') {
    if (required) throw invalid('user is required');
    return undefined;
  }
  if (!/^0x[0-9a-fA-F]{40}$/.test(value)) throw invalid(`invalid user: ${value}`);
  return value.toLowerCase();
}

function notModelled(q: Record<string, string>, names: string[]) {
  for (const name of names) if (param(q, name) !== undefined) throw new Rejected(501, `${name} is documented but not modelled by this fake`);
}

type Key = (string | number)[];
interface CursorState { kind: string; anchor: Key; limit: number; offset: number; direction: 'ASC' | 'DESC'; status?: string; sort_by?: string }

/** Opaque, signed, typed per endpoint: a cursor is JSON under an HMAC with this process's key. */
const CURSOR_KEY = randomBytes(32);
const sign = (payload: string) => createHmac('sha256', CURSOR_KEY).update(payload).digest('base64url');
function mintCursor(state: CursorState): string {
  const payload = Buffer.from(JSON.stringify(state)).toString('base64url');
  return `${payload}.${sign(payload)}`;
}
function readCursor(q: Record<string, string>, kind: string): CursorState | undefined {
  const cursor = param(q, 'cursor');
  if (cursor === undefined) return undefined;
  const [payload = '', signature] = cursor.split('.');
  if (signature !== sign(payload)) throw invalid('bad cursor');
  const state = JSON.parse(Buffer.from(payload, 'base64url').toString()) as CursorState;
  if (state.kind !== kind) throw invalid('bad cursor: minted by another endpoint');
  return state;
}

function compare(a: Key, b: Key): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/** One keyset page of `rows`: those after the cursor's anchor in the walk's order, and the cursor of the next. */
function keysetPage<T>(rows: T[], keyOf: (row: T) => Key, direction: 'ASC' | 'DESC', limit: number, cursor: CursorState | undefined,
  mint: Omit<CursorState, 'anchor' | 'offset' | 'limit' | 'direction'>) {
  const order = direction === 'ASC' ? 1 : -1;
  const ordered = [...rows].sort((a, b) => order * compare(keyOf(a), keyOf(b)));
  const rest = cursor ? ordered.filter((r) => order * compare(keyOf(r), cursor.anchor) > 0) : ordered;
  const page = rest.slice(0, limit);
  const offset = cursor?.offset ?? 0;
  // "has_more: Exact: true iff another page exists"
  const hasMore = rest.length > page.length;
  const last = page.at(-1);
  return {
    data: page,
    pagination: {
      limit, offset, has_more: hasMore,
      next_cursor: hasMore && last ? mintCursor({ ...mint, anchor: keyOf(last), limit, offset: offset + page.length, direction }) : null,
    },
  };
}

/** The feed's order is (block_timestamp, sequence_id): the fake numbers rows in the order they were added. */
const sequence = new WeakMap<ActivityRow, number>();
let nextSequence = 0;
function sequenceOf(row: ActivityRow): number {
  let n = sequence.get(row);
  if (n === undefined) sequence.set(row, n = nextSequence++);
  return n;
}

/** https://docs.polymarket.com/api-reference/feeds/list-account-activity */
function activity(q: Record<string, string>, facts: DataFacts, nowS: number) {
  const wallet = user(q, true);
  notModelled(q, ['condition', 'condition_id', 'event_id']);
  const cursor = readCursor(q, 'activity');
  const limit = cursor?.limit ?? limitOf(q, MAX_LIMIT);
  // "Value sorts (CASH/TOKENS) have no seek anchor and are rejected with 400."
  oneOf(q, 'sort_by', ['TIMESTAMP']);
  // "The cursor binds the direction it was minted under and the resume ADOPTS it."
  const direction = cursor?.direction ?? (oneOf(q, 'sort_direction', ['ASC', 'DESC']) as 'ASC' | 'DESC' | undefined) ?? 'DESC';
  const typeList = param(q, 'type');
  const types = typeList === undefined ? undefined : new Set(typeList.split(','));
  for (const t of types ?? []) if (!ACTIVITY_TYPES.has(t)) throw invalid(`invalid type: ${t}`);
  // DEPOSIT and WITHDRAWAL "are dropped even when named" under the default (true).
  const excludeTransfers = boolean(q, 'exclude_deposits_withdrawals', true);
  const side = oneOf(q, 'side', ['BUY', 'SELL']);
  const start = integer(q, 'start') || nowS - THREE_YEARS_S;
  const end = integer(q, 'end') || nowS + DAY_S;
  facts.activity.forEach(sequenceOf);
  const rows = (wallet === facts.funder.toLowerCase() ? facts.activity : []).filter((r) =>
    (types ? types.has(r.type) : !OPT_IN_ACTIVITY.has(r.type))
    && !(excludeTransfers && (r.type === 'DEPOSIT' || r.type === 'WITHDRAWAL'))
    && (side === undefined || r.side === side)
    && r.timestamp >= start && r.timestamp <= end);
  return keysetPage(rows, (r) => [r.timestamp, sequenceOf(r)], direction, limit, cursor, { kind: 'activity' });
}

/** https://docs.polymarket.com/api-reference/wallet/list-positions-for-a-user-or-market */
function positions(q: Record<string, string>, facts: DataFacts) {
  notModelled(q, ['condition', 'condition_id', 'event_id', 'title', 'include_archived', 'start', 'end']);
  const wallet = user(q, false);
  // "At least one of user/condition is required"; "a bare ?cursor= request returns 400" (the page's
  // Chinese copy, https://docs.polymarket.com/cn/api-reference/wallet/list-positions-for-a-user-or-market;
  // the English copy says a cursor alone is enough). The writer sends its user on every page, which
  // both copies accept; the fake keeps the stricter one.
  if (wallet === undefined) throw invalid('missing anchor: user or condition is required');
  const cursor = readCursor(q, 'positions');
  // The cursor binds status, sort and direction: "Restating them is allowed and must agree;
  // explicitly contradicting one is a 400."
  const status = oneOf(q, 'status', Object.keys(POSITION_STATUS_SORT)) ?? cursor?.status ?? 'OPEN';
  const asked = oneOf(q, 'sort_by', Object.keys(POSITION_SORT_FIELD));
  const direction = (oneOf(q, 'sort_direction', ['ASC', 'DESC']) as 'ASC' | 'DESC' | undefined) ?? cursor?.direction ?? 'DESC';
  if (cursor && (status !== cursor.status || (asked !== undefined && asked !== cursor.sort_by) || direction !== cursor.direction)) {
    throw invalid('the request contradicts its cursor');
  }
  const requestedSort = asked ?? cursor?.sort_by ?? POSITION_STATUS_SORT[status]!;
  const sortBy = status === 'CLOSED' && CLOSED_AS_REALIZED.has(requestedSort) ? 'REALIZED_PNL' : requestedSort;
  // "limit: First-page size. Ignored when cursor is supplied (the cursor's size wins)." Each v2
  // endpoint "documents its default and maximum" (https://docs.polymarket.com/api-reference/data-api/overview,
  // "Paginate With Cursors"), but this route's are in the part of its page not checked here: the fake
  // refuses no size and, without one, serves the activity page's documented default (100). The writer
  // sends no limit on this route, so it depends on neither.
  const limit = cursor?.limit ?? limitOf(q);
  const filterType = oneOf(q, 'filter_type', ['TOKENS', 'CASH']) ?? 'TOKENS';
  // "Invalid values fall back to the default."
  const amount = Number(param(q, 'filter_amount'));
  const floor = param(q, 'filter_amount') !== undefined && Number.isFinite(amount) && amount >= 0 ? amount : undefined;
  const held = (p: Position) => filterType === 'TOKENS'
    ? p.current_size >= (floor ?? DUST_SHARES)
    : p.current_size >= DUST_SHARES && p.current_value >= (floor ?? 0);
  const ofStatus: Record<string, (p: Position) => boolean> = {
    // "OPEN is the superset; it includes settled-but-unredeemed winners, which REDEEMABLE narrows to."
    OPEN: (p) => p.status !== 'CLOSED' && held(p),
    REDEEMABLE: (p) => p.status === 'REDEEMABLE' && held(p),
    REDEEMABLE_LOST: (p) => p.status === 'REDEEMABLE' && p.current_value === 0 && held(p),
    MERGEABLE: (p) => p.status === 'OPEN' && p.mergeable && held(p),
    // "a user's CLOSED set is not narrowed by it"
    CLOSED: (p) => p.status === 'CLOSED',
  };
  const rows = (wallet === facts.funder.toLowerCase() ? facts.positions : []).filter((p) => !p.archived && ofStatus[status]!(p));
  const field = POSITION_SORT_FIELD[sortBy]!;
  return keysetPage(rows, (p) => [p[field] as number, p.token_id], direction, limit, cursor, { kind: 'positions', status, sort_by: requestedSort });
}

/** https://docs.polymarket.com/api-reference/wallet/get-portfolio-value: holdings marked to market
 * (the fake's account holds no combos), "rounded to 4 decimals"; "a user with no positions yields
 * { data: { proxy_wallet, value: 0 } }". */
function value(q: Record<string, string>, facts: DataFacts) {
  notModelled(q, ['condition', 'condition_id']);
  const wallet = user(q, true)!;
  const held = wallet === facts.funder.toLowerCase() ? facts.positions.filter((p) => p.status !== 'CLOSED') : [];
  return { data: { proxy_wallet: wallet, value: round4(held.reduce((s, p) => s + p.current_value, 0)) } };
}

const ROUTES: Record<string, (q: Record<string, string>, facts: DataFacts, nowS: number) => unknown> = {
  '/v2/activity': activity, '/v2/positions': positions, '/v2/value': value,
};

/** The answer of a Data API v2 route, or undefined for a path it does not serve. */
export function dataApi(path: string, q: Record<string, string>, facts: DataFacts, nowS: number): DataAnswer | undefined {
  const route = ROUTES[path];
  if (!route) return undefined;
  try {
    // "there is no offset query parameter (sending one is a 400)"
    if (q.offset !== undefined) throw invalid('offset is not a parameter of the v2 routes: follow pagination.next_cursor');
    return { status: 200, body: route(q, facts, nowS) };
  } catch (error) {
    if (!(error instanceof Rejected)) throw error;
    // The error body has the keys the v2 conventions name (`error`, `code`, `retryable`, `trace_id`);
    // the `code` values are this fake's own words, as no page lists them, and a 501 is this fake's own answer.
    const code = error.status === 400 ? 'invalid_request' : 'not_modelled';
    return { status: error.status, body: { error: error.message, code, retryable: false, trace_id: randomUUID() } };
  }
}

export const round6 = (n: number) => Math.round(n * 1e6) / 1e6;
const round4 = (n: number) => Math.round(n * 1e4) / 1e4;
