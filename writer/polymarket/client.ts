// The CLOB reads the writer needs, with plain fetch, and the Data API reads (data-api.ts) beside
// them. Responses are parsed defensively: numbers may arrive as numeric strings, some routes changed
// from bare arrays to envelopes, and cursor paging stops at the end marker or an empty cursor.
// CLOB: https://docs.polymarket.com/api-reference/rewards/get-earnings-for-user-by-date and its siblings.
import type { PolymarketConfig } from '../../config/writer.ts';
import type { Logger } from '../log.ts';
import { DataApiClient } from './data-api.ts';
import { l2Headers } from './hmac.ts';
import { getJson, HttpError, type RetryPolicy } from './http.ts';
import { decimal, rowDate } from './parse.ts';

const FIRST_CURSOR = 'MA==';
const END_CURSOR = 'LTE=';
const MAX_PAGES = 1000;

/** The signature type (POLY_1271, deposit wallets) that the rewards routes' reference does not list. */
export const UNDOCUMENTED_REWARDS_SIGNATURE_TYPE = 3;

/**
 * The rows of a CLOB list answer: a bare array, or the `data` array of an envelope. No rows at all
 * may arrive as `null` (a body of null, or an envelope whose `data` is null): Polymarket documents a
 * query without results of its Data API as answering with data null or an empty list, never an
 * error (https://docs.polymarket.com/api-reference/data-api/migrating-from-v1). The CLOB route pages
 * the writer reads show arrays only, so null is read the same way, as no rows, and reported through
 * `onNull`. Anything else (an object that is no envelope) is an error: reading an answer nobody
 * documented as empty would publish a made-up zero.
 */
export function rows(body: unknown, route: string, onNull?: (route: string) => void): Record<string, unknown>[] {
  if (Array.isArray(body)) return body as Record<string, unknown>[];
  if (body === null || (typeof body === 'object' && 'data' in body && (body as { data: unknown }).data === null)) {
    onNull?.(route);
    return [];
  }
  const list = typeof body === 'object' ? (body as { data?: unknown }).data : undefined;
  if (!Array.isArray(list)) throw new Error(`unexpected response from ${route}: no data array`);
  return list as Record<string, unknown>[];
}

/** A market the account quoted, and when (Unix ms). Condition ids never leave the source. */
export interface Quote { market: string; at: number }

export class PolymarketClient {
  /** The Data API reads, on the same retry policy. */
  readonly data: DataApiClient;
  private readonly cfg: PolymarketConfig;
  private readonly policy: RetryPolicy;
  private readonly log?: Logger;
  /** Server clock minus ours, in seconds: signatures use the server's time (skew causes 401s). */
  private skewSeconds = 0;

  constructor(cfg: PolymarketConfig, log?: Logger) {
    this.cfg = cfg;
    this.log = log;
    this.policy = {
      timeoutMs: cfg.timeoutMs, retries: cfg.retries, retryBaseMs: cfg.retryBaseMs, restartWaitMs: cfg.restartWaitMs,
      onRetry: (error, delayMs, attempt) => log?.info('polymarket call retried', { error: error.message, attempt, delay_ms: Math.round(delayMs) }),
    };
    this.data = new DataApiClient(cfg.dataApiHost, cfg.funder, this.policy, log);
  }

  private signed(path: string, query: Record<string, string | number | undefined>) {
    return () => {
      const url = new URL(path, this.cfg.clobHost);
      for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
      const ts = Math.floor(Date.now() / 1000) + this.skewSeconds;
      return { url: url.toString(), headers: l2Headers(this.cfg, ts, 'GET', path) };
    };
  }

  /** `rows`, with a warning for each answer that came as null. */
  private rows(body: unknown, route: string): Record<string, unknown>[] {
    return rows(body, route, (r) => this.log?.warn('polymarket answered null: read as no rows', { route: r }));
  }

  /**
   * The maker selection every rewards call carries. The rewards routes document signature types 0,
   * 1 and 2 only (https://docs.polymarket.com/api-reference/rewards/get-total-earnings-for-user-by-date);
   * the official client sends the account's type whatever it is, 3 (POLY_1271, a deposit wallet)
   * included (Polymarket/clob-client-v2 src/client.ts, getTotalEarningsForUserForDay; Polymarket/py-clob-client-v2
   * py_clob_client_v2/client.py, get_total_earnings_for_user_for_day). For a type-3
   * account the maker is therefore also named directly with the documented `maker_address`, so the
   * server need not derive it from a type its reference does not list.
   */
  private maker(): Record<string, string | number | undefined> {
    const named = this.cfg.funderExplicit || this.cfg.signatureType === UNDOCUMENTED_REWARDS_SIGNATURE_TYPE;
    return { signature_type: this.cfg.signatureType, maker_address: named ? this.cfg.funder : undefined };
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
      all.push(...this.rows(body, path));
      const next = body === null || Array.isArray(body) ? undefined : (body as { next_cursor?: unknown }).next_cursor;
      if (typeof next !== 'string' || next === '' || next === END_CURSOR || next === cursor) return all;
      cursor = next;
    }
    throw new Error(`GET ${path} did not reach its last page within ${MAX_PAGES} pages`);
  }

  /** `paged` on the first of several paths for one route that the server has (404 moves on). */
  private async pagedOn(paths: string[], query: Record<string, string | number | undefined>): Promise<Record<string, unknown>[]> {
    for (const [i, path] of paths.entries()) {
      try {
        return await this.paged(path, query);
      } catch (error) {
        if (!(error instanceof HttpError && error.status === 404) || i === paths.length - 1) throw error;
      }
    }
    throw new Error('no path given');
  }

  /**
   * USD of the earnings of activity day `date`, native plus sponsored: Σ earnings × asset_rate over
   * the reward assets. On /rewards/user/total, sponsored=true means native plus sponsored (without
   * it, native only). Null when the day has no rows.
   */
  async totalEarnings(date: string): Promise<number | null> {
    const body = await getJson('GET /rewards/user/total', this.signed('/rewards/user/total', { date, sponsored: 'true', ...this.maker() }), this.policy);
    const list = this.rows(body, '/rewards/user/total').filter((r) => (rowDate(r.date) ?? date) === date);
    if (list.length === 0) return null;
    return list.reduce((sum, r) => sum + decimal(r.earnings, 'earnings') * decimal(r.asset_rate, 'asset_rate'), 0);
  }

  /**
   * Markets (condition ids) with earnings above zero on activity day `date`, over the same rewards the
   * USD total covers. On /rewards/user, sponsored=true gives the sponsored rows only and its absence the
   * native rows only, so both are read, every page of each.
   */
  async earningMarkets(date: string): Promise<Set<string>> {
    const markets = new Set<string>();
    for (const sponsored of [undefined, 'true']) {
      for (const r of await this.paged('/rewards/user', { date, sponsored, ...this.maker() })) {
        if (decimal(r.earnings, 'earnings') > 0 && typeof r.condition_id === 'string') markets.add(r.condition_id);
      }
    }
    return markets;
  }

  /** Markets with a resting (open) order now: each one is being quoted. Bare array or envelope. */
  async openOrderMarkets(nowMs: number): Promise<Quote[]> {
    const list = await this.paged('/data/orders', {});
    return list.map((o) => o.market).filter((m): m is string => typeof m === 'string' && m !== '').map((market) => ({ market, at: nowMs }));
  }

  /**
   * Markets where the account's resting orders were filled since `afterSeconds`, at the fill time.
   * Only maker fills count as quoting: the trade's `trader_side` is MAKER, or the account is among its
   * `maker_orders` (https://docs.polymarket.com/api-reference/trade/get-trades). A taker-only fill is not.
   * The official clients read /data/trades (clob-client-v2 src/endpoints.ts); the API reference names
   * /trades with a required maker_address: the first the server has is used.
   */
  async makerFillMarkets(afterSeconds: number): Promise<Quote[]> {
    const list = await this.pagedOn(['/data/trades', '/trades'], { maker_address: this.cfg.funder, after: afterSeconds });
    const me = this.cfg.funder.toLowerCase();
    const out: Quote[] = [];
    for (const t of list) {
      if (typeof t.market !== 'string' || t.market === '') continue;
      const makers = Array.isArray(t.maker_orders) ? (t.maker_orders as { maker_address?: unknown }[]) : [];
      const isMaker = t.trader_side === 'MAKER' || makers.some((m) => typeof m.maker_address === 'string' && m.maker_address.toLowerCase() === me);
      if (!isMaker) continue;
      const seconds = Number(t.match_time);
      out.push({ market: t.market, at: Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : afterSeconds * 1000 });
    }
    return out;
  }

  /**
   * Cash the CLOB reports: its collateral balance (6-decimal base units). The value is cached on
   * Polymarket's side, with open reports of a stale "0" and of doubled balances, so the cache is
   * refreshed first (GET /balance-allowance/update).
   */
  async clobCashUsd(): Promise<number> {
    const query = { asset_type: 'COLLATERAL', signature_type: this.cfg.signatureType };
    await getJson('GET /balance-allowance/update', this.signed('/balance-allowance/update', query), this.policy);
    const body = await getJson('GET /balance-allowance', this.signed('/balance-allowance', query), this.policy);
    return decimal((body as { balance?: unknown } | null)?.balance, 'balance') / 1e6;
  }

  /** The collateral token's balance of the funder on Polygon (ERC-20 balanceOf, 6 decimals). */
  async chainCashUsd(rpcUrl: string): Promise<number> {
    const holder = this.cfg.funder.toLowerCase().replace(/^0x/, '').padStart(64, '0');
    const request = { jsonrpc: '2.0', id: 1, method: 'eth_call', params: [{ to: this.cfg.collateralToken, data: `0x70a08231${holder}` }, 'latest'] };
    const body = await getJson('POST polygon eth_call', () => ({ url: rpcUrl, headers: { 'content-type': 'application/json' } }), this.policy,
      { method: 'POST', body: JSON.stringify(request) }) as { result?: unknown; error?: { message?: unknown } };
    if (body.error) throw new Error(`polygon eth_call failed: ${String(body.error.message ?? 'error')}`);
    if (typeof body.result !== 'string' || !/^0x[0-9a-fA-F]*$/.test(body.result)) throw new Error('unexpected response from polygon eth_call: no hex result');
    return Number(BigInt(body.result === '0x' ? '0x0' : body.result)) / 1e6;
  }
}
