// What every data source provides. The cycle (cycle.ts) asks for each figure separately, so one
// failing call costs only that figure.
import type { WriterDb } from './db.ts';
import type { Openings } from './openings.ts';

export interface CapitalFigures { cash_usd: number; inventory_usd: number; positions: number }

/** The reward transfers credited for a night: the wallet they paid, and each transaction with its amount in base units. */
export interface NightTransfers { wallet: string; transfers: { tx: string; amount: bigint }[] }

export interface Source {
  readonly name: 'demo' | 'polymarket';
  /** Called at the start of each cycle (e.g. to read the server's clock); a failure is only logged. */
  prepare?(): Promise<void>;
  /** Today's reward accrual so far and how many markets it comes from. */
  accrual(now: Date): Promise<{ usd: number; markets: number }>;
  /** Markets quoted in the 24 hours before `now`. */
  breadth(now: Date, db: WriterDb): Promise<number>;
  /** Capital now; null when the reading is held back as implausible. */
  capital(now: Date, db: WriterDb): Promise<CapitalFigures | null>;
  /** The payout that settled at 00:00 UTC on `payoutDate`; null when the source has none (yet). */
  payout(payoutDate: string, today: string): Promise<number | null>;
  /** Cost of unwinding inventory on the settled UTC day `date`; null when it cannot be computed (yet). */
  tradingCost(date: string, db: WriterDb): Promise<number | null>;
  /** Where this source's commitments to reward transfers come from and their openings are kept (writer/openings.ts). */
  readonly openings: Openings;
  /** The reward transfers credited for the night dated `payoutDate`; null while the night has not come. */
  rewardTransfers(payoutDate: string, today: string): Promise<NightTransfers | null>;
}
