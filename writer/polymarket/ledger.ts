// What each Data API activity type means for the account's cash, and the trading cost of a day by
// the equity-delta formula. Types: https://docs.polymarket.com/api-reference/feeds/list-account-activity
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
  // A user-to-user pUSD transfer, not a trade-settlement leg; `side` carries its direction (IN
  // received, OUT sent) and `size` its amount (https://docs.polymarket.com/api-reference/feeds/list-account-activity).
  // Money moved by someone, like a deposit or a withdrawal: outside the trading cost.
  TIP: 'transfer',
  TRADE: 'trading',
  SPLIT: 'trading',
  MERGE: 'trading',
  REDEEM: 'trading',
  CONVERSION: 'trading',
  // "A position migrated from the legacy protocol to protocol v2", its amount "the migrated position
  // value" (Polymarket/ts-sdk packages/bindings/src/data/activity.ts, MigrationActivity): outcome
  // tokens exchanged for outcome tokens, so no cash moves, and whatever value changes is inside
  // the change of inventory, like a conversion.
  MIGRATION: 'trading',
};

/** `side` of a TIP row received by the account and of one it sent. */
const TIP_IN = 'IN';
const TIP_OUT = 'OUT';
/** Two readings of one amount agree within this (6-decimal rounding). */
const SAME_AMOUNT = 1e-6;

export interface Flow { type: string; usdcSize: number; size?: number; side?: string }

/**
 * A TIP's signed amount (positive received, negative sent), or undefined when its effect cannot be
 * known: a direction other than IN or OUT, or a `size` (the documented amount) that disagrees with
 * its `usdcSize`.
 */
export function tipAmount(f: Flow): number | undefined {
  const amount = Math.abs(f.size ?? Number.NaN);
  if (!Number.isFinite(amount) || Math.abs(amount - Math.abs(f.usdcSize)) > SAME_AMOUNT) return undefined;
  if (f.side === TIP_IN) return amount;
  if (f.side === TIP_OUT) return -amount;
  return undefined;
}
export interface Equity { cash: number; inventory: number }

/** deposits and withdrawals: money moved in and out by someone, tips received and sent included. */
export type CostResult =
  | { kind: 'cost'; usd: number; income: number; deposits: number; withdrawals: number }
  | { kind: 'provisional'; unknownTypes: string[] };

/**
 * The trading cost between two snapshots; provisional while any row's effect cannot be known: a type
 * this table does not know, or a TIP without a readable direction and amount (its type is named).
 * Tips received count with the deposits, tips sent with the withdrawals.
 */
export function tradingCost(before: Equity, after: Equity, flows: Flow[]): CostResult {
  const unknown = [...new Set(flows.filter((f) => !(f.type in ACTIVITY_KINDS) || (f.type === 'TIP' && tipAmount(f) === undefined)).map((f) => f.type))];
  if (unknown.length > 0) return { kind: 'provisional', unknownTypes: unknown.sort() };
  let income = 0;
  let deposits = 0;
  let withdrawals = 0;
  for (const f of flows) {
    if (ACTIVITY_KINDS[f.type] === 'income') income += f.usdcSize;
    else if (f.type === 'DEPOSIT') deposits += Math.abs(f.usdcSize);
    else if (f.type === 'WITHDRAWAL') withdrawals += Math.abs(f.usdcSize);
    else if (f.type === 'TIP') {
      const tip = tipAmount(f)!;
      if (tip > 0) deposits += tip;
      else withdrawals -= tip;
    }
  }
  const pnl = after.cash + after.inventory - (before.cash + before.inventory) - income - deposits + withdrawals;
  return { kind: 'cost', usd: -pnl, income, deposits, withdrawals };
}
