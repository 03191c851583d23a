// The fake Polymarket pins the documented behaviour the writer depends on, with plain fetch, so a
// writer test that passes against it passes against the documented API and not against a reading of it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activity, conditionId, earning, fakeAccount, openOrder, position, PUSD, trade } from '../support/fake-polymarket-account.ts';
import { FakePolymarket, l2Signature } from '../support/fake-polymarket.ts';

const account = fakeAccount();
let fake: FakePolymarket;

async function clob(path: string, query: Record<string, string> = {}) {
  const ts = String(fake.nowSeconds());
  const url = new URL(path, fake.url);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  const res = await fetch(url, { headers: {
    POLY_ADDRESS: account.address, POLY_API_KEY: account.apiKey, POLY_PASSPHRASE: account.passphrase, POLY_TIMESTAMP: ts,
    POLY_SIGNATURE: l2Signature(account.secret, ts, 'GET', path),
  } });
  return { status: res.status, body: await res.json().catch(() => null) as any };
}
async function data(path: string, query: Record<string, string | number>) {
  const url = new URL(path, fake.url);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, String(v));
  const res = await fetch(url);
  return { status: res.status, body: await res.json() as any };
}

beforeAll(async () => {
  fake = await new FakePolymarket(account).start();
});
afterAll(async () => fake?.stop());

describe('the fake Polymarket, as documented', () => {
  it('signs like the official clients (clob-client tests/signing/hmac.test.ts vector)', () => {
    expect(l2Signature('AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=', '1000000', 'test-sign', '/orders', '{"hash": "0x123"}'))
      .toBe('ZwAdJKvoYRlEKDkNMwd5BuwNNtg93kNaR_oU2HrfVvc=');
  });

  it('rejects a wrong signature or a stale timestamp with 401', async () => {
    const res = await fetch(new URL('/rewards/user/total?date=2026-01-01&signature_type=1', fake.url), { headers: {
      POLY_ADDRESS: account.address, POLY_API_KEY: account.apiKey, POLY_PASSPHRASE: account.passphrase,
      POLY_TIMESTAMP: String(fake.nowSeconds() - 600), POLY_SIGNATURE: l2Signature(account.secret, String(fake.nowSeconds() - 600), 'GET', '/rewards/user/total'),
    } });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'Unauthorized/Invalid api key' });
  });

  it('/rewards/user pages by 100 with base64 cursors and splits native from sponsored rows', async () => {
    account.earnings = [
      ...Array.from({ length: 150 }, (_, i) => earning('2026-01-02', i, 1)),
      earning('2026-01-02', 900, 2, { sponsored: true }),
    ];
    const first = await clob('/rewards/user', { date: '2026-01-02', signature_type: '1' });
    expect(first.body).toMatchObject({ limit: 100, count: 100, next_cursor: 'MTAw' });
    const second = await clob('/rewards/user', { date: '2026-01-02', signature_type: '1', next_cursor: 'MTAw' });
    expect(second.body).toMatchObject({ count: 50, next_cursor: 'LTE=' });
    const sponsored = await clob('/rewards/user', { date: '2026-01-02', signature_type: '1', sponsored: 'true' });
    expect(sponsored.body.data.map((r: any) => r.condition_id)).toEqual([conditionId(900)]);
  });

  it('/rewards/user/total sums per asset, native only unless sponsored=true adds the sponsored rows', async () => {
    account.earnings = [
      earning('2026-01-03', 1, 1.5), earning('2026-01-03', 2, 2.25), earning('2026-01-03', 3, 4, { sponsored: true }),
    ];
    expect((await clob('/rewards/user/total', { date: '2026-01-03', signature_type: '1' })).body).toEqual([
      { date: '2026-01-03T00:00:00Z', asset_address: PUSD, maker_address: account.funder, earnings: 3.75, asset_rate: 1 }]);
    expect((await clob('/rewards/user/total', { date: '2026-01-03', signature_type: '1', sponsored: 'true' })).body[0].earnings).toBe(7.75);
    // A signature type that is not the account's reads another (empty) address.
    expect((await clob('/rewards/user/total', { date: '2026-01-03', signature_type: '0' })).body).toEqual([]);
  });

  it('/balance-allowance serves its cache until /balance-allowance/update refreshes it', async () => {
    account.chainBalance = 1_234_560_000n;
    account.cachedBalance = '0';
    expect((await clob('/balance-allowance', { asset_type: 'COLLATERAL', signature_type: '1' })).body.balance).toBe('0');
    expect((await clob('/balance-allowance/update', { asset_type: 'COLLATERAL', signature_type: '1' })).status).toBe(200);
    expect((await clob('/balance-allowance', { asset_type: 'COLLATERAL', signature_type: '1' })).body.balance).toBe('1234560000');
  });

  it('/v2/activity leaves out deposits and withdrawals unless exclude_deposits_withdrawals=false, even when type names them', async () => {
    account.activity = [
      activity({ type: 'DEPOSIT', timestamp: 100, usdc_size: 50 }, account),
      activity({ type: 'REWARD', timestamp: 200, usdc_size: 3 }, account),
      activity({ type: 'WITHDRAWAL', timestamp: 300, usdc_size: 20 }, account),
    ];
    const types = (body: any) => body.data.map((r: any) => r.type);
    expect(types((await data('/v2/activity', { user: account.funder, type: 'DEPOSIT,WITHDRAWAL,REWARD', start: 1 })).body)).toEqual(['REWARD']);
    const all = await data('/v2/activity', { user: account.funder, exclude_deposits_withdrawals: 'false', start: 1 });
    expect(types(all.body)).toEqual(['WITHDRAWAL', 'REWARD', 'DEPOSIT']); // newest first by default
    expect(all.body.pagination).toEqual({ limit: 100, offset: 0, has_more: false, next_cursor: null });
    // Both ends of the window are inclusive; camelCase spellings are accepted.
    expect(types((await data('/v2/activity', { user: account.funder, excludeDepositsWithdrawals: 'false', sortDirection: 'ASC', start: 100, end: 200 })).body))
      .toEqual(['DEPOSIT', 'REWARD']);
    // An omitted start floors to three years back: rows of 1970 are out of that window.
    expect(types((await data('/v2/activity', { user: account.funder, exclude_deposits_withdrawals: 'false' })).body)).toEqual([]);
  });

  it('/v2/activity returns TIP rows only when type names TIP; MIGRATION rows come in the default set', async () => {
    account.activity = [
      activity({ type: 'TIP', timestamp: 100, usdc_size: 5, size: 5, side: 'IN' }, account),
      activity({ type: 'MIGRATION', timestamp: 200, usdc_size: 40 }, account),
      activity({ type: 'TRADE', timestamp: 300, usdc_size: 7, side: 'BUY' }, account),
    ];
    const rows = async (query: Record<string, string | number>) => (await data('/v2/activity', { user: account.funder, start: 1, ...query })).body.data;
    expect((await rows({})).map((r: any) => r.type)).toEqual(['TRADE', 'MIGRATION']);
    expect((await rows({ type: 'TIP' })).map((r: any) => [r.type, r.side, r.size])).toEqual([['TIP', 'IN', 5]]);
    expect((await rows({ type: 'TIP,TRADE' })).map((r: any) => r.type)).toEqual(['TRADE', 'TIP']);
  });

  it('/v2/activity walks a signed keyset cursor that keeps its direction, through rows sharing a second', async () => {
    account.activity = Array.from({ length: 250 }, (_, i) => activity({ type: 'TRADE', timestamp: 1000 + Math.floor(i / 7), usdc_size: i }, account));
    const seen: number[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      // The direction is named on the first page only: the cursor carries it.
      const query: Record<string, string | number> = { user: account.funder, start: 1, limit: 100, ...(cursor ? { cursor } : { sort_direction: 'ASC' }) };
      const page = await data('/v2/activity', query);
      expect(page.status).toBe(200);
      expect(page.body.pagination.offset).toBe(seen.length);
      seen.push(...page.body.data.map((r: any) => r.usdc_size));
      expect(page.body.pagination.has_more).toBe(seen.length < 250);
      cursor = page.body.pagination.next_cursor ?? undefined;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(Array.from({ length: 250 }, (_, i) => i));
  });

  it('/v2/activity refuses what its reference rejects with 400, and the fake serves no v1 route', async () => {
    account.activity = [activity({ type: 'TRADE', timestamp: 1000, usdc_size: 1 }, account)];
    const refused = async (query: Record<string, string | number>, parameter: string) => {
      const res = await data('/v2/activity', query);
      expect(res.status, JSON.stringify(query)).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_request', retryable: false, error: expect.stringContaining(parameter), trace_id: expect.any(String) });
    };
    const user = account.funder;
    await refused({ user, type: 'TRADE,PORTAL_CREDIT' }, 'type'); // "Any other value is rejected with 400"
    await refused({ user, offset: 0 }, 'offset'); // v1 paging: "there is no offset query parameter (sending one is a 400)"
    await refused({ user, sortBy: 'CASH' }, 'sort_by'); // a v1 value sort: "rejected with 400"
    await refused({ user, limit: 1001 }, 'limit'); // "max 1000, past-cap rejected"
    await refused({ type: 'TRADE' }, 'user'); // "Required; the feed is user-anchored"
    await refused({ user, cursor: 'eyJraW5kIjoiYWN0aXZpdHkifQ.forged' }, 'cursor'); // cursors are signed
    // The v1 routes have v2 counterparts (the migration guide), so the writer has no reason to ask them.
    expect((await data('/activity', { user })).status).toBe(404);
  });

  it('/rewards/* accept the documented signature types 0, 1 and 2 and answer 400 to another (the fake\'s named choice)', async () => {
    expect((await clob('/rewards/user/total', { date: '2026-01-03', signature_type: '3', maker_address: account.funder })).status).toBe(400);
    expect((await clob('/rewards/user', { date: '2026-01-03', signature_type: '3', maker_address: account.funder })).status).toBe(400);
    fake.rewardsSignatureTypes = [0, 1, 2, 3];
    try {
      expect((await clob('/rewards/user/total', { date: '2026-01-03', signature_type: '3', maker_address: account.funder })).status).toBe(200);
    } finally {
      fake.rewardsSignatureTypes = [0, 1, 2];
    }
  });

  it('/data/trades and /trades return only the trades of the maker_address asked for', async () => {
    const other = fakeAccount();
    account.trades = [trade(conditionId(1), 'MAKER', 1000, account), trade(conditionId(2), 'MAKER', 1000, other)];
    const mine = await clob('/data/trades', { maker_address: account.funder });
    expect(mine.body.data.map((t: any) => t.market)).toEqual([conditionId(1)]);
    expect((await clob('/trades', { maker_address: other.funder })).body.data.map((t: any) => t.market)).toEqual([conditionId(2)]);
    expect((await clob('/data/trades')).body.data).toHaveLength(2);
  });

  it('/v2/positions: OPEN (the default) holds resolved positions still held, over a 0.1-share dust floor unless filter_amount says otherwise', async () => {
    account.positions = [
      position(1, 5, 2.5, account), position(2, 0.5, 0.2, account), position(3, 0.05, 0.01, account),
      position(4, 3, 3, account, 'REDEEMABLE'), position(5, 0, 0, account, 'CLOSED'),
    ];
    const tokens = async (query: Record<string, string | number>) =>
      (await data('/v2/positions', { user: account.funder, ...query })).body.data.map((p: any) => p.token_id).sort();
    const id = (n: number) => position(n, 1, 1, account).token_id;
    expect(await tokens({})).toEqual([id(1), id(2), id(4)].sort());
    expect(await tokens({ status: 'OPEN', filter_type: 'TOKENS', filter_amount: 1 })).toEqual([id(1), id(4)].sort());
    expect(await tokens({ filter_amount: 'lots' })).toEqual([id(1), id(2), id(4)].sort()); // "Invalid values fall back to the default"
    expect(await tokens({ status: 'REDEEMABLE' })).toEqual([id(4)]);
    expect(await tokens({ status: 'CLOSED' })).toEqual([id(5)]);
    expect((await data('/v2/positions', { user: account.funder, status: 'GONE' })).status).toBe(400);
    expect((await data('/v2/positions', { status: 'OPEN' })).status).toBe(400); // no anchor
    expect((await data('/v2/positions', { user: account.funder, sizeThreshold: 1, offset: 0 })).status).toBe(400); // v1's offset
  });

  it('/v2/positions pages by a cursor that binds status and sort: a bare cursor or a contradicting one is a 400', async () => {
    account.positions = Array.from({ length: 25 }, (_, i) => position(100 + i, 2, i + 1, account));
    const first = await data('/v2/positions', { user: account.funder, limit: 10 });
    expect(first.body.data.map((p: any) => p.current_value)).toEqual([25, 24, 23, 22, 21, 20, 19, 18, 17, 16]); // CURRENT_VALUE, DESC
    const cursor = first.body.pagination.next_cursor;
    // "limit: First-page size. Ignored when cursor is supplied (the cursor's size wins)."
    const second = await data('/v2/positions', { user: account.funder, cursor, status: 'OPEN', limit: 3 });
    expect(second.body.data.map((p: any) => p.current_value)).toEqual([15, 14, 13, 12, 11, 10, 9, 8, 7, 6]);
    expect((await data('/v2/positions', { cursor })).status).toBe(400);
    expect((await data('/v2/positions', { user: account.funder, cursor, status: 'CLOSED' })).status).toBe(400);
    expect((await data('/v2/positions', { user: account.funder, cursor, sort_by: 'TOKENS' })).status).toBe(400);
  });

  it('/v2/value is one object: holdings marked to market, 0 for a wallet without positions, and needs a user', async () => {
    account.positions = [position(1, 5, 2.5, account), position(2, 0.5, 0.2, account), position(3, 1, 0, account, 'CLOSED')];
    expect((await data('/v2/value', { user: account.funder })).body).toEqual({ data: { proxy_wallet: account.funder, value: 2.7 } });
    const other = fakeAccount().funder;
    expect((await data('/v2/value', { user: other })).body).toEqual({ data: { proxy_wallet: other, value: 0 } });
    expect((await data('/v2/value', {})).status).toBe(400);
  });

  it('answers 425 on the order routes during a matching-engine restart; rewards, balances and the Data API keep answering', async () => {
    account.orders = [openOrder(conditionId(5), account)];
    fake.restartFor(500);
    expect((await clob('/data/orders')).status).toBe(425);
    expect((await clob('/data/trades')).status).toBe(425);
    expect((await clob('/rewards/user/total', { date: '2026-01-03', signature_type: '1' })).status).toBe(200);
    expect((await clob('/balance-allowance', { asset_type: 'COLLATERAL', signature_type: '1' })).status).toBe(200);
    expect((await data('/v2/value', { user: account.funder })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 600));
    expect((await clob('/data/orders')).body).toMatchObject({ count: 1, next_cursor: 'LTE=' });
  });

  it('serves balanceOf of the collateral token over JSON-RPC', async () => {
    account.chainBalance = 42_000_001n;
    const call = (to: string) => fetch(`${fake.url}/rpc`, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'eth_call',
      params: [{ to, data: `0x70a08231${account.funder.slice(2).padStart(64, '0')}` }, 'latest'] }) }).then((r) => r.json() as any);
    expect(BigInt((await call(PUSD)).result)).toBe(42_000_001n);
    expect(BigInt((await call('0x' + '9'.repeat(40))).result)).toBe(0n);
  });
});
