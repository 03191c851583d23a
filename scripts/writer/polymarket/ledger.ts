// What each Data API activity type means for the account's cash, and the trading cost of a day by
// the equity-delta formula. Types: https://docs.polymarket.com/api-reference/core/get-user-activity
//
//   trading_pnl  = (cash₁ + inventory₁) − (cash₀ + inventory₀) − income − deposits + withdrawals
//   trading_cost = −trading_pnl
//
// between two capital snapshots. The cost therefore holds everything the inventory did between them:
// spread captured and lost on fills, fees, merges and redemptions, and the mark-to-market change of
// inventory still held. A gain is a negative cost.

/** income: cash that arrives for providing liquidity or holding, not from a change of inventory;
 * transfer: money the owner moves in or out; trading: an exchange of cash and outcome tokens. */
export type ActivityKind = 'income' | 'transfer' | 'trading';

export const ACTIVITY_KINDS: Readonly<Record<string, ActivityKind>> = {
  REWARD: 'income',
  YIELD: 'income',
  REFERRAL_REWARD: 'income',
  // Rebates are paid out of the fee pool for trading as maker or taker; like rewards, they are income
  // that does not come from the inventory's value, so both sit outside the trading cost alike.
  MAKER_REBATE: 'income',
  TAKER_REBATE: 'income',
  DEPOSIT: 'transfer',
  WITHDRAWAL: 'transfer',
  TRADE: 'trading',
  SPLIT: 'trading',
  MERGE: 'trading',
  REDEEM: 'trading',
  CONVERSION: 'trading',
};

export interface Flow { type: string; usdcSize: number }
export interface Equity { cash: number; inventory: number }

export type CostResult =
  | { kind: 'cost'; usd: number; income: number; deposits: number; withdrawals: number }
  | { kind: 'provisional'; unknownTypes: string[] };

/** The trading cost between two snapshots; provisional while any row has a type this table does not know. */
export function tradingCost(before: Equity, after: Equity, flows: Flow[]): CostResult {
  const unknown = [...new Set(flows.filter((f) => !(f.type in ACTIVITY_KINDS)).map((f) => f.type))];
  if (unknown.length > 0) return { kind: 'provisional', unknownTypes: unknown.sort() };
  let income = 0;
  let deposits = 0;
  let withdrawals = 0;
  for (const f of flows) {
    if (ACTIVITY_KINDS[f.type] === 'income') income += f.usdcSize;
    else if (f.type === 'DEPOSIT') deposits += Math.abs(f.usdcSize);
    else if (f.type === 'WITHDRAWAL') withdrawals += Math.abs(f.usdcSize);
  }
  const pnl = after.cash + after.inventory - (before.cash + before.inventory) - income - deposits + withdrawals;
  return { kind: 'cost', usd: -pnl, income, deposits, withdrawals };
}
