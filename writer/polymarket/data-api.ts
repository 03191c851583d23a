// The writer's reads of Polymarket's Data API, on its v2 routes: every answer wraps its payload in
// `data`, paged routes add `pagination` and are followed by `pagination.next_cursor` until it is
// null, fields are snake_case, and a documented miss is `data: null` or an empty list, never an error
// (https://docs.polymarket.com/api-reference/data-api/migrating-from-v1). Each of these reads has a v2
// counterpart in that guide's route mapping (only GET /v1/accounting/snapshot stays on v1, and the
// writer does not read it), so none is made on v1:
//   GET /v2/activity   https://docs.polymarket.com/api-reference/feeds/list-account-activity
//   GET /v2/positions  https://docs.polymarket.com/api-reference/wallet/list-positions-for-a-user-or-market
//   GET /v2/value      https://docs.polymarket.com/api-reference/wallet/get-portfolio-value
// Amounts are JSON numbers there (`format: double`); they are kept as read, and rounded to 6 decimals
// only where the writer stores them.
import type { Logger } from '../log.ts';
import { getJson, type RetryPolicy } from './http.ts';
import { decimal } from './parse.ts';

/** The largest page /v2/activity serves ("max 1000, past-cap rejected"). /v2/positions is asked at its own default size, which is never past its own maximum. */
const PAGE_SIZE = 1000;
/** A walk longer than this is taken for a server that never ends it. */
const MAX_PAGES = 1000;

/**
 * Activity types the feed leaves out unless a request names them: a TIP (a user-to-user pUSD
 * transfer) is "opt-in: it is never in the default set, so it is only returned when you name it"
 * (https://docs.polymarket.com/api-reference/feeds/list-account-activity).
 */
export const OPT_IN_ACTIVITY_TYPES = ['TIP'];

/**
 * One activity row, as much of it as the writer uses (`usdc_size`, `size` and `transaction_hash` of the
 * v2 row). The transaction hash never leaves the writer but in the commitments' private openings.
 */
export interface Activity { type: string; usdcSize: number; size: number; side: string; timestamp: number; transactionHash: string }

type Query = Record<string, string | number>;
type Row = Record<string, unknown>;

export class DataApiClient {
  private readonly host: string;
  /** The funder (profile) address: the `user` every read is anchored on. */
  private readonly user: string;
  private readonly policy: RetryPolicy;
  private readonly log?: Logger;

  constructor(host: string, user: string, policy: RetryPolicy, log?: Logger) {
    this.host = host;
    this.user = user;
    this.policy = policy;
    this.log = log;
  }

  private get(route: string, query: Query): Promise<unknown> {
    return getJson(`GET ${route}`, () => {
      const url = new URL(route, this.host);
      for (const [k, v] of Object.entries(query)) url.searchParams.set(k, String(v));
      return { url: url.toString(), headers: {} };
    }, this.policy);
  }

  /** The `data` of an answer: null for the documented miss (logged as a warning), an error when absent. */
  private data(body: unknown, route: string): unknown {
    if (body === null || typeof body !== 'object' || !('data' in body)) throw new Error(`unexpected response from ${route}: no data`);
    const data = (body as { data: unknown }).data;
    if (data === null) this.log?.warn('polymarket answered null: read as no rows', { route });
    return data;
  }

  /**
   * Every row of a paged route. The same filters go with every page: the feed cursors carry only
   * the seek anchor, the page size and the sort direction, and a changed filter re-anchors silently.
   */
  private async walk(route: string, query: Query): Promise<Row[]> {
    const all: Row[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const body = await this.get(route, cursor === undefined ? query : { ...query, cursor });
      const data = this.data(body, route);
      if (data === null) return all;
      if (!Array.isArray(data)) throw new Error(`unexpected response from ${route}: data is no list`);
      all.push(...(data as Row[]));
      const pagination = (body as { pagination?: unknown }).pagination;
      if (pagination === null || typeof pagination !== 'object') throw new Error(`unexpected response from ${route}: no pagination`);
      const next = (pagination as { next_cursor?: unknown }).next_cursor;
      if (next === null || next === undefined) return all;
      if (typeof next !== 'string' || next === '' || next === cursor) throw new Error(`unexpected response from ${route}: an unusable next_cursor`);
      cursor = next;
    }
    throw new Error(`GET ${route} did not reach its last page within ${MAX_PAGES} pages`);
  }

  /**
   * Every activity row with start ≤ timestamp < end (Unix seconds), oldest first, deposits and
   * withdrawals included: the feed drops them unless exclude_deposits_withdrawals=false, even when
   * `type` names them. Without `types`, every type: the default set (which carries types the writer
   * may not know yet), then each opt-in type by name. The feed's window is inclusive at both ends,
   * and a `start` of 0 would mean three years back, so the window asked for is [max(1, start), end − 1].
   */
  async activity(start: number, end: number, types?: string[]): Promise<Activity[]> {
    const from = Math.max(1, start);
    if (end - 1 < from) return [];
    const out: Activity[] = [];
    for (const selection of types ? [types] : [undefined, OPT_IN_ACTIVITY_TYPES]) {
      const query: Query = {
        user: this.user, start: from, end: end - 1, limit: PAGE_SIZE, sort_direction: 'ASC', exclude_deposits_withdrawals: 'false',
      };
      if (selection) query.type = selection.join(',');
      for (const a of await this.walk('/v2/activity', query)) {
        const timestamp = decimal(a.timestamp, 'timestamp');
        if (timestamp < start || timestamp >= end) continue;
        out.push({
          type: String(a.type), usdcSize: decimal(a.usdc_size, 'usdc_size'),
          size: a.size === undefined || a.size === null ? Number.NaN : decimal(a.size, 'size'),
          side: typeof a.side === 'string' ? a.side : '', timestamp,
          transactionHash: typeof a.transaction_hash === 'string' ? a.transaction_hash : '',
        });
      }
    }
    return out.sort((a, b) => a.timestamp - b.timestamp);
  }

  /** The value of the open positions (portfolio value, which the route rounds to 4 decimals); 0 for the documented miss. */
  async inventoryUsd(): Promise<number> {
    const route = '/v2/value';
    const data = this.data(await this.get(route, { user: this.user }), route);
    if (data === null) return 0;
    if (typeof data !== 'object' || Array.isArray(data)) throw new Error(`unexpected response from ${route}: data is no object`);
    return decimal((data as { value?: unknown }).value, 'value');
  }

  /**
   * Open positions of at least `minSize` shares (the `OPEN` status is the superset that includes
   * resolved positions still held). The route's own dust floor is 0.1 share, so the floor is named.
   */
  async positionCount(minSize: number): Promise<number> {
    const rows = await this.walk('/v2/positions', { user: this.user, status: 'OPEN', filter_type: 'TOKENS', filter_amount: minSize });
    return rows.filter((p) => decimal(p.current_size, 'current_size') >= minSize).length;
  }
}
