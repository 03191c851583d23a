// The Polymarket source (reference/polymarket.md §7). Only counts and totals leave this module:
// condition ids are held in memory just long enough to count distinct markets.
import { sql } from 'kysely';
import type { PolymarketConfig } from '../config.ts';
import type { WriterDb } from '../db.ts';
import type { Logger } from '../log.ts';
import { usd6, type Source } from '../source.ts';
import { addDays, utcDate } from '../store.ts';
import { PolymarketClient } from './client.ts';

const DAY_MS = 86_400_000;
/** Positions smaller than one share are dust, not counted. */
export const POSITION_MIN_SIZE = 1;
/** A capital snapshot counts as the day boundary's equity when it lies at most this long before 00:00 UTC. */
export const BOUNDARY_TOLERANCE_MS = 30 * 60_000;
/** Cash that enters or leaves for reasons other than trading (reward-like income, transfers). */
const INCOME_TYPES = ['REWARD', 'MAKER_REBATE', 'YIELD', 'REFERRAL_REWARD'];
const TRANSFER_TYPES = ['DEPOSIT', 'WITHDRAWAL'];

export class PolymarketSource implements Source {
  readonly name = 'polymarket' as const;
  readonly client: PolymarketClient;
  /** Market id → last time it was seen quoted/traded/earning; private, never stored. */
  private readonly seen = new Map<string, number>();

  constructor(cfg: PolymarketConfig, log?: Logger) {
    this.client = new PolymarketClient(cfg, log);
  }

  async prepare(): Promise<void> {
    await this.client.syncClock();
  }

  private remember(markets: Iterable<string>, at: number) {
    for (const m of markets) this.seen.set(m, Math.max(at, this.seen.get(m) ?? 0));
  }

  /** Earnings of activity day `today` so far, and the markets earning today (earnings > 0). */
  async accrual(now: Date) {
    const today = utcDate(now);
    const usd = (await this.client.totalEarnings(today)) ?? 0;
    const markets = await this.client.earningMarkets(today);
    this.remember(markets, now.getTime());
    return { usd: usd6(usd), markets: markets.size };
  }

  /**
   * No endpoint lists the markets quoted over a past day, so this unions the markets with open
   * orders now, with fills in the last 24 h and with earnings today, and those this process saw in
   * the last 24 h; only the count leaves.
   */
  async breadth(now: Date) {
    const t = now.getTime();
    this.remember(await this.client.openOrderMarkets(), t);
    this.remember(await this.client.tradedMarkets(Math.floor((t - DAY_MS) / 1000)), t);
    this.remember(await this.client.earningMarkets(utcDate(now)), t);
    for (const [m, last] of this.seen) if (last <= t - DAY_MS) this.seen.delete(m);
    return this.seen.size;
  }

  /** Cash = collateral balance; inventory = Data API value of open positions; positions ≥ 1 share. */
  async capital() {
    const cash = await this.client.cashUsd();
    const inventory = await this.client.inventoryUsd();
    const positions = await this.client.positionCount(POSITION_MIN_SIZE);
    return { cash_usd: usd6(cash), inventory_usd: usd6(inventory), positions };
  }

  /** Earnings of activity day D are the payout dated D+1. */
  async payout(payoutDate: string) {
    const usd = await this.client.totalEarnings(addDays(payoutDate, -1));
    return usd === null ? null : usd6(usd);
  }

  /**
   * Trading cost of UTC day `date` by the equity-delta formula (reference §5):
   *   trading_pnl = (cash₁ + inv₁) − (cash₀ + inv₀) − income + withdrawals − deposits
   *   trading_cost = −trading_pnl
   * where snapshot 0 is the writer's last capital snapshot at most 30 minutes before the day's
   * 00:00 UTC and snapshot 1 the same before the next 00:00, and income (REWARD, MAKER_REBATE,
   * YIELD, REFERRAL_REWARD) and transfers (DEPOSIT, WITHDRAWAL) are the Data API activity between
   * the two snapshot times. A gain from unwinding is a negative cost. Null when a snapshot is missing.
   */
  async tradingCost(date: string, db: WriterDb) {
    const start = Date.parse(`${date}T00:00:00Z`);
    const s0 = await this.snapshotBefore(db, start);
    const s1 = await this.snapshotBefore(db, start + DAY_MS);
    if (!s0 || !s1 || s0.at >= s1.at) return null;
    const flows = await this.client.activity([...INCOME_TYPES, ...TRANSFER_TYPES], Math.floor(s0.at / 1000), Math.floor(s1.at / 1000));
    let income = 0;
    let deposits = 0;
    let withdrawals = 0;
    for (const f of flows) {
      if (INCOME_TYPES.includes(f.type)) income += f.usdcSize;
      else if (f.type === 'DEPOSIT') deposits += f.usdcSize;
      else if (f.type === 'WITHDRAWAL') withdrawals += Math.abs(f.usdcSize);
    }
    const pnl = s1.equity - s0.equity - income + withdrawals - deposits;
    return usd6(-pnl);
  }

  private async snapshotBefore(db: WriterDb, boundaryMs: number): Promise<{ at: number; equity: number } | undefined> {
    const row = await db.selectFrom('stats.capital')
      .select(['observed_at', sql<string>`cash_usd + inventory_usd`.as('equity')])
      .where('is_demo', '=', false)
      .where('observed_at', '<=', new Date(boundaryMs))
      .where('observed_at', '>', new Date(boundaryMs - BOUNDARY_TOLERANCE_MS))
      .orderBy('observed_at', 'desc').limit(1).executeTakeFirst();
    return row ? { at: row.observed_at.getTime(), equity: Number(row.equity) } : undefined;
  }
}
