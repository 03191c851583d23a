// The account a fake Polymarket (fake-polymarket.ts) serves, held as raw facts in the documented row
// shapes, and builders of those rows.
import { randomBytes, randomUUID } from 'node:crypto';
import type { ActivityRow, Position } from './fake-data-api.ts';

/** One market's reward earnings of one activity day in one asset (what /rewards/user lists per row). */
export interface Earning {
  /** Activity day, YYYY-MM-DD (UTC). */
  day: string;
  condition_id: string;
  asset_address: string;
  earnings: number;
  asset_rate: number;
  /** A sponsored reward (paid from a sponsor's pool) rather than Polymarket's native one. */
  sponsored?: boolean;
}

/** An open order as GET /data/orders returns it (https://docs.polymarket.com/api-reference/trade/get-user-orders). */
export interface OpenOrder {
  id: string; status: string; owner: string; maker_address: string; market: string; asset_id: string; side: 'BUY' | 'SELL';
  original_size: string; size_matched: string; price: string; outcome: string; expiration: string; order_type: string;
  associate_trades: string[]; created_at: number;
}

/** A trade as GET /trades returns it (https://docs.polymarket.com/api-reference/trade/get-trades). */
export interface Trade {
  id: string; taker_order_id: string; market: string; asset_id: string; side: 'BUY' | 'SELL'; size: string; fee_rate_bps: string;
  price: string; status: string; match_time: string; last_update: string; outcome: string; bucket_index: number; owner: string;
  maker_address: string; transaction_hash: string; trader_side: 'TAKER' | 'MAKER';
  maker_orders: { order_id: string; owner: string; maker_address: string; matched_amount: string; price: string; fee_rate_bps: string; asset_id: string; outcome: string; side: string }[];
}

export interface FakeAccount {
  apiKey: string;
  secret: string;
  passphrase: string;
  /** The address the API key belongs to (POLY_ADDRESS). */
  address: string;
  /** The funder (profile) address: the maker of the account's orders and the Data API's `user`. */
  funder: string;
  /** The signature type that derives the funder from POLY_ADDRESS; any other reads someone else's (empty) account. */
  signatureType: number;
  earnings: Earning[];
  orders: OpenOrder[];
  trades: Trade[];
  positions: Position[];
  activity: ActivityRow[];
  /** The collateral balance on chain, in 6-decimal base units. */
  chainBalance: bigint;
  /** What /balance-allowance answers until /balance-allowance/update refreshes it from the chain. */
  cachedBalance: string;
  /** A wrong balance the CLOB keeps answering whatever the refresh (reports of doubled balances). */
  stuckBalance?: string;
}

/** pUSD, the CLOB V2 collateral token (https://docs.polymarket.com/v2-migration). */
export const PUSD = '0xC011a7E12a19f7B1f670d46F03B03f3342E82DFB';

/**
 * An account of its own: fresh credentials in the shapes Polymarket issues them (a UUID key, a
 * base64url secret, a hex passphrase, lower-case addresses), a proxy wallet (signature type 1) as
 * its funder, and nothing in it but what `facts` gives.
 */
export function fakeAccount(facts: Partial<FakeAccount> = {}): FakeAccount {
  const address = () => `0x${randomBytes(20).toString('hex')}`;
  return {
    apiKey: randomUUID(),
    secret: `${randomBytes(32).toString('base64url')}=`,
    passphrase: randomBytes(32).toString('hex'),
    address: address(),
    funder: address(),
    signatureType: 1,
    earnings: [],
    orders: [],
    trades: [],
    positions: [],
    activity: [],
    chainBalance: 0n,
    cachedBalance: '0',
    ...facts,
  };
}

// Builders of documented rows with realistic filler, so tests state only what matters to them.
let serial = 0;
const hex = (n: number, width: number) => `0x${n.toString(16).padStart(width, '0')}`;

export const conditionId = (n: number) => hex(0xc0de0000 + n, 64);

/** Market n's earnings on activity day `day`, in pUSD at rate 1 unless told otherwise. */
export function earning(day: string, n: number, earnings: number, { asset = PUSD, rate = 1, sponsored = false } = {}): Earning {
  return { day, condition_id: conditionId(n), asset_address: asset, earnings, asset_rate: rate, sponsored };
}

/** An activity row of the account; `size` is `usdc_size` unless told otherwise (a tip's amount is its `size`). */
export function activity(fields: Partial<ActivityRow> & Pick<ActivityRow, 'type' | 'timestamp' | 'usdc_size'>, account: Pick<FakeAccount, 'funder'>): ActivityRow {
  serial++;
  return {
    proxy_wallet: account.funder, condition_id: '', size: fields.usdc_size, transaction_hash: hex(0xabc00000 + serial, 64), price: 0, token_id: '',
    side: '', outcome_index: 999, title: '', slug: '', icon: '', event_slug: '', outcome: '', name: 'maker', pseudonym: 'Quiet-Maker', bio: '',
    profile_image: '', profile_image_optimized: '', ...fields,
  };
}

export function openOrder(market: string, account: Pick<FakeAccount, 'funder' | 'apiKey'>): OpenOrder {
  serial++;
  return {
    id: hex(0x0d000000 + serial, 64), status: 'ORDER_STATUS_LIVE', owner: account.apiKey, maker_address: account.funder, market,
    asset_id: String(1e20 + serial), side: 'BUY', original_size: '100', size_matched: '0', price: '0.45', outcome: 'YES',
    expiration: '0', order_type: 'GTC', associate_trades: [], created_at: 1_700_000_000,
  };
}

/** A fill of the account's order: as maker (its resting order was hit) or as taker (it crossed the book). */
export function trade(market: string, side: 'MAKER' | 'TAKER', matchTime: number, account: Pick<FakeAccount, 'funder' | 'apiKey'>): Trade {
  serial++;
  const other = hex(0xfeed0000 + serial, 40);
  const makerOrder = (maker: string) => ({ order_id: hex(0x0e000000 + serial, 64), owner: account.apiKey, maker_address: maker, matched_amount: '10', price: '0.5', fee_rate_bps: '0', asset_id: '1', outcome: 'YES', side: 'BUY' });
  return {
    id: `trade-${serial}`, taker_order_id: hex(0x0f000000 + serial, 64), market, asset_id: '1', side: 'BUY', size: '10', fee_rate_bps: '0',
    price: '0.5', status: 'TRADE_STATUS_CONFIRMED', match_time: String(matchTime), last_update: String(matchTime), outcome: 'YES',
    bucket_index: 0, owner: account.apiKey, maker_address: side === 'MAKER' ? account.funder : other, transaction_hash: hex(0x7a000000 + serial, 64),
    trader_side: side, maker_orders: side === 'MAKER' ? [makerOrder(account.funder)] : [makerOrder(other)],
  };
}

/** The account's position in market n: `size` shares worth `currentValue`, bought at 0.5 a share. */
export function position(n: number, size: number, currentValue: number, account: Pick<FakeAccount, 'funder'>, status: 'OPEN' | 'REDEEMABLE' | 'CLOSED' = 'OPEN'): Position {
  const entry = size / 2;
  const percent = entry > 0 ? ((currentValue - entry) / entry) * 100 : 0;
  const tokenId = (side: number) => `${side}${String(n).padStart(20, '0')}`;
  return {
    proxy_wallet: account.funder, token_id: tokenId(2), condition_id: conditionId(n), current_size: size, avg_price: 0.5,
    entry_cost_usdc: entry, entry_fees_usdc: 0, total_cost_usdc: entry, current_price: size > 0 ? currentValue / size : 0, current_value: currentValue,
    total_size: size, realized_pnl: 0, unrealized_pnl: currentValue - entry, total_pnl: currentValue - entry, percent_pnl: percent,
    percent_realized_pnl: percent, status, redeemable: status === 'REDEEMABLE', mergeable: false, negative_risk: false,
    archived: false, title: `Market ${n}`, slug: `market-${n}`, icon: '', event_id: String(n), event_slug: `event-${n}`, outcome: 'Yes', outcome_index: 0,
    opposite_outcome: 'No', opposite_token_id: tokenId(3), end_date: '2027-01-01', last_event_at: 1_700_000_000, first_entry_at: 1_700_000_000,
    name: 'maker', profile_image: '', verified: false,
  };
}
