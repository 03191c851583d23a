// The fake Polymarket pins the documented behaviour the writer depends on, with plain fetch, so a
// writer test that passes against it passes against the documented API and not against a reading of it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activity, conditionId, earning, fakeAccount, FakePolymarket, l2Signature, openOrder, position, PUSD, trade } from '../support/fake-polymarket.ts';

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

  it('/activity leaves out deposits and withdrawals unless excludeDepositsWithdrawals=false, even when type names them', async () => {
    account.activity = [
      activity({ type: 'DEPOSIT', timestamp: 100, usdcSize: 50 }, account),
      activity({ type: 'REWARD', timestamp: 200, usdcSize: 3 }, account),
      activity({ type: 'WITHDRAWAL', timestamp: 300, usdcSize: 20 }, account),
    ];
    expect((await data('/activity', { user: account.funder, type: 'DEPOSIT,WITHDRAWAL,REWARD' })).body.map((r: any) => r.type)).toEqual(['REWARD']);
    const all = await data('/activity', { user: account.funder, excludeDepositsWithdrawals: 'false' });
    expect(all.body.map((r: any) => r.type)).toEqual(['WITHDRAWAL', 'REWARD', 'DEPOSIT']); // newest first by default
    expect((await data('/activity', { user: account.funder, excludeDepositsWithdrawals: 'false', sortDirection: 'ASC', start: 150, end: 300 })).body.map((r: any) => r.type))
      .toEqual(['REWARD', 'WITHDRAWAL']);
  });

  it('/activity answers 400 past offset 5000 and clamps a limit over 500 to 500; /positions answers 400 past offset 10000', async () => {
    const saved = account.activity;
    account.activity = Array.from({ length: 600 }, (_, i) => activity({ type: 'TRADE', timestamp: 1000 + i, usdcSize: 1 }, account));
    expect((await data('/activity', { user: account.funder, offset: 5000 })).status).toBe(200);
    expect((await data('/activity', { user: account.funder, offset: 5001 })).status).toBe(400);
    const clamped = await data('/activity', { user: account.funder, limit: 501 });
    expect(clamped.status).toBe(200);
    expect(clamped.body).toHaveLength(500);
    account.activity = saved;
    expect((await data('/positions', { user: account.funder, offset: 10_000 })).status).toBe(200);
    expect((await data('/positions', { user: account.funder, offset: 10_001 })).status).toBe(400);
  });

  it('/activity returns TIP rows only when type names TIP; MIGRATION rows come in the default set', async () => {
    account.activity = [
      activity({ type: 'TIP', timestamp: 100, usdcSize: 5, size: 5, side: 'IN' }, account),
      activity({ type: 'MIGRATION', timestamp: 200, usdcSize: 40 }, account),
      activity({ type: 'TRADE', timestamp: 300, usdcSize: 7, side: 'BUY' }, account),
    ];
    expect((await data('/activity', { user: account.funder })).body.map((r: any) => r.type)).toEqual(['TRADE', 'MIGRATION']);
    expect((await data('/activity', { user: account.funder, type: 'TIP' })).body.map((r: any) => [r.type, r.side])).toEqual([['TIP', 'IN']]);
    expect((await data('/activity', { user: account.funder, type: 'TIP,TRADE' })).body.map((r: any) => r.type)).toEqual(['TRADE', 'TIP']);
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

  it('/positions drops positions under sizeThreshold (default 1) and /value sums current values', async () => {
    account.positions = [position(1, 5, 2.5, account), position(2, 0.5, 0.2, account)];
    expect((await data('/positions', { user: account.funder })).body).toHaveLength(1);
    expect((await data('/positions', { user: account.funder, sizeThreshold: 0 })).body).toHaveLength(2);
    expect((await data('/value', { user: account.funder })).body).toEqual([{ user: account.funder, value: 2.7 }]);
  });

  it('answers 425 on the order routes during a matching-engine restart; rewards, balances and the Data API keep answering', async () => {
    account.orders = [openOrder(conditionId(5), account)];
    fake.restartFor(500);
    expect((await clob('/data/orders')).status).toBe(425);
    expect((await clob('/data/trades')).status).toBe(425);
    expect((await clob('/rewards/user/total', { date: '2026-01-03', signature_type: '1' })).status).toBe(200);
    expect((await clob('/balance-allowance', { asset_type: 'COLLATERAL', signature_type: '1' })).status).toBe(200);
    expect((await data('/value', { user: account.funder })).status).toBe(200);
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
