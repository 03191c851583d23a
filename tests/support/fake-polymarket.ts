// A local fake of Polymarket's CLOB, its Data API (v2, in fake-data-api.ts) and a Polygon JSON-RPC node,
// for the writer's tests. It is built from the public API reference (each rule names its page), never
// from the writer's own reading: the account is held as raw facts (per-market earnings, orders, trades, positions,
// activity, balances) and every route derives its answer from them the way the documentation says.
//
// Control API:
//   fakeAccount({ … })                       an account with fresh credentials and what the test gives it
//                                            (fake-polymarket-account.ts, with builders of its rows)
//   new FakePolymarket(account).start()      serve on 127.0.0.1, port 0; `url` is the base URL (CLOB and
//                                            Data API share it; the RPC is `${url}/rpc`)
//   fake.account.*                           the account's facts, changeable between calls
//   fake.clockOffsetMs                       the fake's clock runs this far ahead of the real one (/time, auth window)
//   fake.restartFor(ms)                      the matching engine restarts: the order routes answer 425 for `ms`
//   fake.rewardsSignatureTypes               signature types the rewards routes accept (the documented 0, 1, 2)
//   fake.fail(path, ...faults)               answers served in order before the normal one (status 0 = delay only)
//   fake.requests / fake.hits(path)          every request: path, query, status
//   writerEnv(fake)                          the writer's settings that read this account from this fake
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dataApi, round6 } from './fake-data-api.ts';
import { PUSD, type FakeAccount, type Trade } from './fake-polymarket-account.ts';

export interface RecordedRequest { at: number; method: string; path: string; query: Record<string, string>; status: number }
export interface Fault { status: number; body?: string; headers?: Record<string, string>; delayMs?: number }

const END = 'LTE=';
const cursorFor = (offset: number) => Buffer.from(String(offset)).toString('base64');
/** Cursors are base64 offsets: "MA==" is 0, "LTE=" (-1) the end (https://docs.polymarket.com/api-reference/rewards/get-earnings-for-user-by-date). */
const offsetOf = (cursor: string | undefined) => Math.max(0, Number(Buffer.from(cursor || 'MA==', 'base64').toString()) || 0);
/** The order-related routes of the reads the writer makes: the ones a matching-engine restart answers
 * with 425 ("During a restart window, the CLOB API returns HTTP 425 (Too Early) on all order-related
 * endpoints": https://docs.polymarket.com/trading/matching-engine). Rewards, balances and /time are no
 * order routes and keep answering (the page names no others; that reading is this fake's choice). */
const ORDER_ROUTES = new Set(['/data/orders', '/data/trades', '/trades']);
/** The signature types the rewards routes list ("Available options: 0, 1, 2":
 * https://docs.polymarket.com/api-reference/rewards/get-total-earnings-for-user-by-date). What the server
 * answers to another is not documented: by default this fake answers 400, as to any value outside a
 * parameter's documented options (a named choice; `rewardsSignatureTypes` widens the list). */
const DOCUMENTED_REWARDS_SIGNATURE_TYPES = [0, 1, 2];
/** Routes that need L2 headers (https://docs.polymarket.com/api-reference/authentication). */
const PRIVATE = new Set(['/rewards/user', '/rewards/user/total', '/balance-allowance', '/balance-allowance/update', '/data/orders', '/data/trades', '/trades']);

/** The HMAC of L2 auth, computed here on its own: url-safe base64 (padding kept) of HMAC-SHA256 over
 * timestamp + METHOD + path (no query) + body, keyed by the base64(url)-decoded secret
 * (clob-client-v2 src/signing/hmac.ts; vector in clob-client tests/signing/hmac.test.ts). */
export function l2Signature(secret: string, timestamp: string, method: string, path: string, body = ''): string {
  return createHmac('sha256', Buffer.from(secret.replace(/-/g, '+').replace(/_/g, '/'), 'base64'))
    .update(timestamp + method + path + body).digest('base64').replace(/\+/g, '-').replace(/\//g, '_');
}

export class FakePolymarket {
  readonly server: Server;
  url = '';
  account: FakeAccount;
  requests: RecordedRequest[] = [];
  clockOffsetMs = 0;
  /** The signature types the rewards routes accept (see DOCUMENTED_REWARDS_SIGNATURE_TYPES). */
  rewardsSignatureTypes = [...DOCUMENTED_REWARDS_SIGNATURE_TYPES];
  private restartUntil = 0;
  private readonly faults = new Map<string, Fault[]>();
  private readonly open = new Set<ServerResponse>();

  constructor(account: FakeAccount) {
    this.account = account;
    this.server = createServer((req, res) => void this.handle(req, res));
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    for (const res of this.open) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  fail(path: string, ...faults: Fault[]) {
    this.faults.set(path, [...(this.faults.get(path) ?? []), ...faults]);
  }

  /** A matching-engine restart: the order-related CLOB routes answer 425 "Too Early" for about 90 s in
   * production (https://docs.polymarket.com/trading/matching-engine); the others keep answering. */
  restartFor(ms: number) {
    this.restartUntil = Date.now() + ms;
  }

  hits(path: string) {
    return this.requests.filter((r) => r.path === path);
  }

  nowSeconds() {
    return Math.floor((Date.now() + this.clockOffsetMs) / 1000);
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    this.open.add(res);
    res.on('close', () => this.open.delete(res));
    const url = new URL(req.url ?? '/', 'http://fake');
    const query = Object.fromEntries(url.searchParams);
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString();
    const record: RecordedRequest = { at: Date.now(), method: req.method ?? 'GET', path: url.pathname, query, status: 200 };
    this.requests.push(record);
    const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
      record.status = status;
      const text = typeof payload === 'string' ? payload : JSON.stringify(payload);
      res.writeHead(status, { 'content-type': text.startsWith('<') ? 'text/html' : 'application/json', ...headers });
      res.end(text);
    };

    const fault = this.faults.get(url.pathname)?.shift();
    if (fault) {
      if (fault.delayMs) await new Promise((r) => setTimeout(r, fault.delayMs));
      if (res.destroyed) return;
      if (fault.status !== 0) return send(fault.status, fault.body ?? '{"error":"fault"}', fault.headers);
    }
    if (url.pathname === '/rpc') return send(200, this.rpc(body));
    if (ORDER_ROUTES.has(url.pathname) && Date.now() < this.restartUntil) return send(425, { error: 'service not ready' });
    if (PRIVATE.has(url.pathname)) {
      const problem = this.checkAuth(req, url.pathname, body);
      if (problem) return send(401, { error: 'Unauthorized/Invalid api key' });
    }
    try {
      const answer = this.route(url.pathname, query) ?? dataApi(url.pathname, query, this.account, this.nowSeconds());
      return answer === undefined ? send(404, { error: 'not found' }) : send(answer.status ?? 200, answer.body);
    } catch (error) {
      return send(400, { error: (error as Error).message });
    }
  }

  private checkAuth(req: IncomingMessage, path: string, body: string): string | undefined {
    const h = (name: string) => req.headers[name.toLowerCase()] as string | undefined;
    const a = this.account;
    if (h('POLY_API_KEY') !== a.apiKey || h('POLY_PASSPHRASE') !== a.passphrase || h('POLY_ADDRESS')?.toLowerCase() !== a.address.toLowerCase()) return 'credentials';
    const ts = h('POLY_TIMESTAMP') ?? '';
    // Signatures carry a timestamp the server accepts only near its own clock (clients can sync with GET /time).
    if (!/^\d+$/.test(ts) || Math.abs(this.nowSeconds() - Number(ts)) > 60) return 'timestamp';
    if (h('POLY_SIGNATURE') !== l2Signature(a.secret, ts, req.method ?? 'GET', path, body)) return 'signature';
    return undefined;
  }

  /**
   * Whose account a CLOB call reads: `maker_address` when given, else the address that
   * `signature_type` derives from POLY_ADDRESS (0 EOA: itself; 1 proxy, 2 Safe: the funder when that
   * is the account's type). A wrong type reads an address with nothing on it.
   */
  private maker(query: Record<string, string>): string {
    if (query.maker_address) return query.maker_address.toLowerCase();
    const type = Number(query.signature_type ?? 0);
    if (type === this.account.signatureType) return this.account.funder.toLowerCase();
    return type === 0 ? this.account.address.toLowerCase() : `unknown-${type}`;
  }

  private rewardsSignatureType(q: Record<string, string>) {
    if (q.signature_type !== undefined && !this.rewardsSignatureTypes.includes(Number(q.signature_type))) {
      throw new Error(`signature_type must be one of ${this.rewardsSignatureTypes.join(', ')}`);
    }
  }

  private isAccount(maker: string) {
    return maker === this.account.funder.toLowerCase();
  }

  private route(path: string, q: Record<string, string>): { status?: number; body: unknown } | undefined {
    const a = this.account;
    switch (path) {
      // https://docs.polymarket.com/api-reference/misc/get-server-time: Unix seconds.
      case '/time': return { body: this.nowSeconds() };

      // https://docs.polymarket.com/api-reference/rewards/get-earnings-for-user-by-date: 100 rows a page;
      // sponsored=true returns sponsored-only earnings, its absence (default false) native-only.
      case '/rewards/user': {
        const day = requiredDate(q.date);
        this.rewardsSignatureType(q);
        const sponsored = q.sponsored === 'true';
        const rows = this.isAccount(this.maker(q)) ? a.earnings.filter((e) => e.day === day && Boolean(e.sponsored) === sponsored) : [];
        const offset = offsetOf(q.next_cursor);
        const page = rows.slice(offset, offset + 100);
        return { body: {
          limit: 100, count: page.length, next_cursor: offset + 100 < rows.length ? cursorFor(offset + 100) : END,
          data: page.map((e) => ({ date: `${day}T00:00:00Z`, condition_id: e.condition_id, asset_address: e.asset_address, maker_address: a.funder, earnings: e.earnings, asset_rate: e.asset_rate })),
        } };
      }

      // https://docs.polymarket.com/api-reference/rewards/get-total-earnings-for-user-by-date: the day's
      // earnings summed per asset address, a bare array; sponsored=true aggregates native and sponsored.
      case '/rewards/user/total': {
        const day = requiredDate(q.date);
        this.rewardsSignatureType(q);
        const rows = this.isAccount(this.maker(q)) ? a.earnings.filter((e) => e.day === day && (q.sponsored === 'true' || !e.sponsored)) : [];
        const byAsset = new Map<string, { earnings: number; asset_rate: number }>();
        for (const e of rows) {
          const sum = byAsset.get(e.asset_address) ?? { earnings: 0, asset_rate: e.asset_rate };
          sum.earnings += e.earnings;
          byAsset.set(e.asset_address, sum);
        }
        return { body: [...byAsset].map(([asset, s]) => ({ date: `${day}T00:00:00Z`, asset_address: asset, maker_address: a.funder, earnings: round6(s.earnings), asset_rate: s.asset_rate })) };
      }

      // https://docs.polymarket.com/api-reference/account/get-balance-and-allowance: a cached balance in
      // base units; GET /balance-allowance/update asks the server to refresh it from the chain.
      case '/balance-allowance': {
        if (q.asset_type !== 'COLLATERAL' && q.asset_type !== 'CONDITIONAL') throw new Error('invalid asset_type');
        const balance = this.isAccount(this.maker(q)) ? a.stuckBalance ?? a.cachedBalance : '0';
        return { body: { balance, allowances: { '0xE111180000d2663C0091e4f400237545B87B996B': '115792089237316195423570985008687907853269984665640564039457584007913129639935' } } };
      }
      case '/balance-allowance/update': {
        if (this.isAccount(this.maker(q))) a.cachedBalance = a.chainBalance.toString();
        return { body: '' };
      }

      // https://docs.polymarket.com/api-reference/trade/get-user-orders: the caller's open orders, paged.
      case '/data/orders': return { body: paged(a.orders.filter((o) => o.status === 'ORDER_STATUS_LIVE'), q.next_cursor, 100) };

      // https://docs.polymarket.com/api-reference/trade/get-trades (GET /trades, maker_address required;
      // the official clients call it /data/trades): after/before filter on match_time (Unix seconds).
      // maker_address filters the trades to those of that maker: the trade's own maker_address, or one
      // of its maker_orders (which of the two the server matches is not documented; this fake takes either).
      case '/trades':
      case '/data/trades': {
        if (path === '/trades' && !q.maker_address) throw new Error('maker_address is required');
        const after = q.after ? Number(q.after) : -Infinity;
        const before = q.before ? Number(q.before) : Infinity;
        const maker = q.maker_address?.toLowerCase();
        const ofMaker = (t: Trade) => !maker || t.maker_address.toLowerCase() === maker || t.maker_orders.some((m) => m.maker_address.toLowerCase() === maker);
        return { body: paged(a.trades.filter((t) => ofMaker(t) && Number(t.match_time) > after && Number(t.match_time) < before), q.next_cursor, 100) };
      }

      default: return undefined;
    }
  }

  /** Polygon JSON-RPC: eth_chainId (137) and eth_call of ERC-20 balanceOf(address) (selector 0x70a08231). */
  private rpc(text: string): unknown {
    const req = JSON.parse(text) as { id: unknown; method: string; params?: [{ to?: string; data?: string }, string] };
    if (req.method === 'eth_chainId') return { jsonrpc: '2.0', id: req.id, result: '0x89' };
    if (req.method !== 'eth_call') return { jsonrpc: '2.0', id: req.id, error: { code: -32601, message: 'method not found' } };
    const call = req.params?.[0] ?? {};
    const data = (call.data ?? '').toLowerCase();
    if (!data.startsWith('0x70a08231') || data.length !== 10 + 64) return { jsonrpc: '2.0', id: req.id, error: { code: -32000, message: 'execution reverted' } };
    const holder = `0x${data.slice(-40)}`;
    const isPusd = (call.to ?? '').toLowerCase() === PUSD.toLowerCase();
    const balance = isPusd && holder === this.account.funder.toLowerCase() ? this.account.chainBalance : 0n;
    return { jsonrpc: '2.0', id: req.id, result: `0x${balance.toString(16).padStart(64, '0')}` };
  }
}

function paged<T>(rows: T[], cursor: string | undefined, size: number) {
  const offset = offsetOf(cursor);
  const data = rows.slice(offset, offset + size);
  return { limit: size, count: data.length, next_cursor: offset + size < rows.length ? cursorFor(offset + size) : END, data };
}

function requiredDate(value: string | undefined): string {
  if (!value || !/^\d{4}-\d{2}-\d{2}$/.test(value)) throw new Error('date is required (YYYY-MM-DD)');
  return value;
}

/** The writer's settings that read the fake's account from the fake (CLOB and Data API). */
export function writerEnv(fake: FakePolymarket): Record<string, string> {
  const a = fake.account;
  return {
    WRITER_SOURCE: 'polymarket', CLOB_API_KEY: a.apiKey, CLOB_SECRET: a.secret, CLOB_PASSPHRASE: a.passphrase,
    POLY_ADDRESS: a.address, FUNDER_ADDRESS: a.funder, SIGNATURE_TYPE: String(a.signatureType), CLOB_HOST: fake.url, DATA_API_HOST: fake.url,
  };
}
