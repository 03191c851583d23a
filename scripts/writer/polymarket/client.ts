// The few Polymarket reads the writer needs, with plain fetch (reference/polymarket.md §1, §2, §4).
// Responses are parsed defensively: numbers may arrive as numeric strings, some routes changed
// from bare arrays to envelopes, and paging stops at the end marker or an empty cursor.
import type { PolymarketConfig } from '../config.ts';
import type { Logger } from '../log.ts';
import { l2Headers } from './hmac.ts';
import { getJson, type RetryPolicy } from './http.ts';

const FIRST_CURSOR = 'MA==';
const END_CURSOR = 'LTE=';
const MAX_PAGES = 1000;

/** A number or a numeric string (what the official SDK calls decimal-ish). */
export function decimal(value: unknown, field: string): number {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n)) throw new Error(`unexpected response: ${field} is not a number`);
  return n;
}

/** The UTC date of an ISO date-time, a YYYY-MM-DD string or epoch milliseconds; undefined if none. */
export function rowDate(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const ms = typeof value === 'number' || /^\d{10,}$/.test(String(value)) ? Number(value) : Date.parse(String(value).length === 10 ? `${value}T00:00:00Z` : String(value));
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString().slice(0, 10);
}

function rows(body: unknown, route: string): Record<string, unknown>[] {
  const list = Array.isArray(body) ? body : (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(list)) throw new Error(`unexpected response from ${route}: no data array`);
  return list as Record<string, unknown>[];
}

export class PolymarketClient {
  /** Server clock minus ours, in seconds: signatures use the server's time (skew causes 401s). */
  private skewSeconds = 0;
  private readonly policy: RetryPolicy;

  constructor(private readonly cfg: PolymarketConfig, log?: Logger) {
    this.policy = {
      timeoutMs: cfg.timeoutMs, retries: cfg.retries, retryBaseMs: cfg.retryBaseMs,
      onRetry: (error, delayMs, attempt) => log?.info('polymarket call retried', { error: error.message, attempt, delay_ms: Math.round(delayMs) }),
    };
  }

  private signed(path: string, query: Record<string, string | number | undefined>) {
    return () => {
      const url = new URL(path, this.cfg.clobHost);
      for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
      const ts = Math.floor(Date.now() / 1000) + this.skewSeconds;
      return { url: url.toString(), headers: l2Headers(this.cfg, ts, 'GET', path) };
    };
  }

  private dataApi(path: string, query: Record<string, string | number>) {
    return () => {
      const url = new URL(path, this.cfg.dataApiHost);
      for (const [k, v] of Object.entries(query)) url.searchParams.set(k, String(v));
      return { url: url.toString(), headers: {} };
    };
  }

  /** The maker selection every rewards call carries. */
  private maker(): Record<string, string | number | undefined> {
    return { signature_type: this.cfg.signatureType, maker_address: this.cfg.funderExplicit ? this.cfg.funder : undefined };
  }

  async syncClock(): Promise<void> {
    const body = await getJson('GET /time', () => ({ url: new URL('/time', this.cfg.clobHost).toString(), headers: {} }), this.policy);
    const server = decimal(body, 'time');
    this.skewSeconds = Math.round(server - Date.now() / 1000);
  }

  /** Pages a cursor route until the end marker (or an empty cursor, defensively). */
  private async paged(path: string, query: Record<string, string | number | undefined>): Promise<Record<string, unknown>[]> {
    const all: Record<string, unknown>[] = [];
    let cursor = FIRST_CURSOR;
    for (let page = 0; page < MAX_PAGES; page++) {
      const body = await getJson(`GET ${path}`, this.signed(path, { ...query, next_cursor: cursor }), this.policy);
      all.push(...rows(body, path));
      const next = Array.isArray(body) ? undefined : (body as { next_cursor?: unknown }).next_cursor;
      if (typeof next !== 'string' || next === '' || next === END_CURSOR || next === cursor) return all;
      cursor = next;
    }
    throw new Error(`GET ${path} did not reach its last page within ${MAX_PAGES} pages`);
  }

  /** USD of the earnings of activity day `date`: Σ earnings × asset_rate; null when the day has no rows. */
  async totalEarnings(date: string): Promise<number | null> {
    // sponsored=true: on /total it means native plus sponsored rewards (without it, native only).
    const body = await getJson('GET /rewards/user/total', this.signed('/rewards/user/total', { date, sponsored: 'true', ...this.maker() }), this.policy);
    const list = rows(body, '/rewards/user/total').filter((r) => (rowDate(r.date) ?? date) === date);
    if (list.length === 0) return null;
    return list.reduce((sum, r) => sum + decimal(r.earnings, 'earnings') * decimal(r.asset_rate, 'asset_rate'), 0);
  }

  /** Markets (condition ids) with earnings above zero on activity day `date`. */
  async earningMarkets(date: string): Promise<Set<string>> {
    const list = await this.paged('/rewards/user', { date, ...this.maker() });
    const markets = new Set<string>();
    for (const r of list) if (decimal(r.earnings, 'earnings') > 0 && typeof r.condition_id === 'string') markets.add(r.condition_id);
    return markets;
  }

  /** Markets with open orders now. /data/orders moved from a bare array to an envelope: both work. */
  async openOrderMarkets(): Promise<Set<string>> {
    const list = await this.paged('/data/orders', {});
    return new Set(list.map((o) => o.market).filter((m): m is string => typeof m === 'string'));
  }

  /** Markets with fills since `afterSeconds` (Unix seconds). */
  async tradedMarkets(afterSeconds: number): Promise<Set<string>> {
    const list = await this.paged('/data/trades', { after: afterSeconds });
    return new Set(list.map((t) => t.market).filter((m): m is string => typeof m === 'string'));
  }

  /** Cash: the collateral balance, 6-decimal base units as a string. */
  async cashUsd(): Promise<number> {
    const body = await getJson('GET /balance-allowance', this.signed('/balance-allowance', { asset_type: 'COLLATERAL', signature_type: this.cfg.signatureType }), this.policy);
    return decimal((body as { balance?: unknown } | null)?.balance, 'balance') / 1e6;
  }

  /** Value of open positions (Data API /value), 0 when it returns no row. */
  async inventoryUsd(): Promise<number> {
    const body = await getJson('GET /value', this.dataApi('/value', { user: this.cfg.funder }), this.policy);
    const first = rows(body, '/value')[0];
    return first ? decimal(first.value, 'value') : 0;
  }

  /** Positions of at least `minSize` shares; dust below it is not a position anyone holds on purpose. */
  async positionCount(minSize: number): Promise<number> {
    const limit = 500;
    let count = 0;
    // The Data API caps offset at 10,000; an account with more positions is counted up to there.
    for (let offset = 0; offset <= 10_000; offset += limit) {
      const body = await getJson('GET /positions', this.dataApi('/positions', { user: this.cfg.funder, sizeThreshold: minSize, limit, offset }), this.policy);
      const page = rows(body, '/positions');
      count += page.filter((p) => decimal(p.size, 'size') >= minSize).length;
      if (page.length < limit) break;
    }
    return count;
  }

  /** Activity rows of the given types between two Unix times (inclusive start, exclusive end). */
  async activity(types: string[], start: number, end: number): Promise<{ type: string; usdcSize: number; timestamp: number }[]> {
    const limit = 500;
    const out: { type: string; usdcSize: number; timestamp: number }[] = [];
    for (let offset = 0; offset <= 10_000; offset += limit) {
      const body = await getJson('GET /activity', this.dataApi('/activity', { user: this.cfg.funder, type: types.join(','), start, end, limit, offset, sortBy: 'TIMESTAMP', sortDirection: 'ASC' }), this.policy);
      const page = rows(body, '/activity');
      for (const a of page) {
        const timestamp = decimal(a.timestamp, 'timestamp');
        if (timestamp >= start && timestamp < end) out.push({ type: String(a.type), usdcSize: decimal(a.usdcSize, 'usdcSize'), timestamp });
      }
      if (page.length < limit) return out;
    }
    throw new Error('GET /activity: more rows in one day than the Data API pages through (offset cap 10,000)');
  }
}
