// A local fake of the Polymarket CLOB and Data API for the writer's tests (reference/polymarket.md §8).
// It checks the L2 signature headers with its own HMAC code (not the writer's), serves the
// documented response shapes, and plays scripted faults: 429 with an HTML body and Retry-After,
// 425, 401, 5xx, and answers slower than the writer's timeout.
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface EarningRow { condition_id: string; asset_address: string; earnings: number | string; asset_rate: number | string }
/** `sponsored` marks a sponsored reward in the fixture (not a Polymarket field): as documented, /total
 * includes such rows only when asked with sponsored=true. */
export interface TotalRow { date: string | number; asset_address: string; earnings: number | string; asset_rate: number | string; sponsored?: boolean }
export interface ActivityRow { type: string; usdcSize: number; timestamp: number; conditionId?: string }

export interface Fault { status: number; body?: string; headers?: Record<string, string>; delayMs?: number }

export interface FakeAccount {
  apiKey: string;
  secret: string;
  passphrase: string;
  address: string;
  funder: string;
  /** Activity day → rows of /rewards/user/total (absent = `[]`). */
  totals: Map<string, TotalRow[]>;
  /** Activity day → rows of /rewards/user, served two per page. */
  earnings: Map<string, EarningRow[]>;
  orders: { id: string; market: string }[];
  trades: { id: string; market: string; maker_orders: { order_id: string; maker_address: string }[] }[];
  balance: string;
  value: { user: string; value: number }[];
  positions: { conditionId: string; size: number; currentValue: number }[];
  activity: ActivityRow[];
}

export interface RecordedRequest { at: number; path: string; query: Record<string, string>; status: number }

// The routes the writer reads that need L2 headers, and those that must carry signature_type.
const SIGNED = new Set(['/rewards/user', '/rewards/user/total', '/balance-allowance', '/data/orders', '/data/trades']);
const NEEDS_SIGNATURE_TYPE = new Set(['/rewards/user', '/rewards/user/total', '/balance-allowance']);
const END = 'LTE=';
const cursorFor = (offset: number) => Buffer.from(String(offset)).toString('base64');
const offsetOf = (cursor: string | undefined) => Number(Buffer.from(cursor ?? 'MA==', 'base64').toString() || 0);

/** Independent HMAC of the fake: url-safe base64 with padding over ts+METHOD+path. */
function expectedSignature(secret: string, ts: string, method: string, path: string): string {
  return createHmac('sha256', Buffer.from(secret.replace(/-/g, '+').replace(/_/g, '/'), 'base64'))
    .update(ts + method + path).digest('base64').replaceAll('+', '-').replaceAll('/', '_');
}

export class FakePolymarket {
  server: Server;
  url = '';
  requests: RecordedRequest[] = [];
  /** Faults served, in order, before the normal answer of a path. */
  faults = new Map<string, Fault[]>();
  /** Faults served on every request of a path (a call that always fails). */
  permanent = new Map<string, Fault>();
  /** Seconds the fake's clock runs ahead of the real one. */
  clockSkewSeconds = 0;
  private readonly open = new Set<ServerResponse>();

  constructor(public account: FakeAccount) {
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

  hits(path: string) {
    return this.requests.filter((r) => r.path === path);
  }

  private now() {
    return Math.floor(Date.now() / 1000) + this.clockSkewSeconds;
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    this.open.add(res);
    res.on('close', () => this.open.delete(res));
    const url = new URL(req.url ?? '/', 'http://fake');
    const query = Object.fromEntries(url.searchParams);
    const record = { at: Date.now(), path: url.pathname, query, status: 200 };
    this.requests.push(record);
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      record.status = status;
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      res.writeHead(status, { 'content-type': typeof body === 'string' && text.startsWith('<') ? 'text/html' : 'application/json', ...headers });
      res.end(text);
    };

    const fault = this.faults.get(url.pathname)?.shift() ?? this.permanent.get(url.pathname);
    if (fault) {
      if (fault.delayMs) await new Promise((r) => setTimeout(r, fault.delayMs));
      if (res.destroyed) return;
      // status 0: the delay is the whole fault, and the normal answer follows it
      if (fault.status !== 0) return send(fault.status, fault.body ?? '{"error":"fault"}', fault.headers);
    }
    if (SIGNED.has(url.pathname)) {
      const problem = this.checkSignature(req, url.pathname);
      if (problem) return send(401, { error: 'Unauthorized/Invalid api key', detail: problem });
      if (NEEDS_SIGNATURE_TYPE.has(url.pathname) && !/^[0-3]$/.test(query.signature_type ?? '')) {
        return send(400, { error: 'signature_type is required' });
      }
    }
    const a = this.account;
    switch (url.pathname) {
      case '/time': return send(200, this.now());
      case '/rewards/user/total': {
        const all = a.totals.get(query.date ?? '') ?? [];
        return send(200, all.filter((r) => query.sponsored === 'true' || !r.sponsored).map(({ sponsored: _, ...row }) => row));
      }
      case '/rewards/user': {
        const list = a.earnings.get(query.date ?? '') ?? [];
        const offset = offsetOf(query.next_cursor);
        const data = list.slice(offset, offset + 2);
        const next = offset + 2 < list.length ? cursorFor(offset + 2) : END;
        return send(200, { limit: 2, count: data.length, next_cursor: next, data: data.map((r) => ({ date: `${query.date}T00:00:00Z`, maker_address: a.funder, ...r })) });
      }
      case '/balance-allowance': return send(200, { balance: a.balance, allowances: { '0x4bFb41d5B3570DeFd03C39a9A4D8dE6Bd8B8982E': '115792089237316195423570985008687907853269984665640564039457584007913129639935' } });
      case '/data/orders': {
        const offset = offsetOf(query.next_cursor);
        const data = a.orders.slice(offset, offset + 2).map((o) => ({ ...o, status: 'ORDER_STATUS_LIVE', owner: a.apiKey, maker_address: a.funder, asset_id: '1', side: 'BUY', original_size: '10', size_matched: '0', price: '0.45' }));
        return send(200, { limit: 2, count: data.length, next_cursor: offset + 2 < a.orders.length ? cursorFor(offset + 2) : END, data });
      }
      case '/data/trades': return send(200, { limit: 100, count: a.trades.length, next_cursor: END, data: a.trades.map((t) => ({ ...t, status: 'CONFIRMED', size: '5', price: '0.5', trader_side: 'TAKER' })) });
      case '/value': return send(200, query.user === a.funder ? a.value : []);
      case '/positions': {
        if (query.user !== a.funder) return send(200, []);
        const offset = Number(query.offset ?? 0);
        if (offset > 10_000) return send(400, { error: 'offset beyond cap' });
        const limit = Number(query.limit ?? 100);
        return send(200, a.positions.slice(offset, offset + limit).map((p) => ({ proxyWallet: a.funder, ...p })));
      }
      case '/activity': {
        const types = new Set((query.type ?? '').split(','));
        const start = Number(query.start ?? 0);
        const end = Number(query.end ?? Infinity);
        const offset = Number(query.offset ?? 0);
        const rows = a.activity.filter((r) => types.has(r.type) && r.timestamp >= start && r.timestamp <= end)
          .map((r) => ({ proxyWallet: a.funder, transactionHash: `0x${'ab'.repeat(32)}`, ...r }));
        return send(200, rows.slice(offset, offset + Number(query.limit ?? 100)));
      }
      default: return send(404, { error: 'not found' });
    }
  }

  private checkSignature(req: IncomingMessage, path: string): string | undefined {
    const h = (name: string) => req.headers[name.toLowerCase()] as string | undefined;
    const a = this.account;
    if (h('POLY_API_KEY') !== a.apiKey || h('POLY_PASSPHRASE') !== a.passphrase || h('POLY_ADDRESS') !== a.address) return 'wrong credentials';
    const ts = h('POLY_TIMESTAMP') ?? '';
    if (!/^\d+$/.test(ts) || Math.abs(this.now() - Number(ts)) > 60) return 'stale timestamp';
    if (h('POLY_SIGNATURE') !== expectedSignature(a.secret, ts, req.method ?? 'GET', path)) return 'bad signature';
    return undefined;
  }
}
