// The Polymarket source. Only counts and totals leave this module: condition ids are turned into
// keyed digests before anything is stored, and addresses never leave the client.
import { createHmac } from 'node:crypto';
import { sql } from 'kysely';
import { addDays, DAY_MS, midnightMs, utcDate } from '../../contract/dates.ts';
import type { PolymarketConfig } from '../../config/writer.ts';
import type { WriterDb } from '../db.ts';
import type { Logger } from '../log.ts';
import { baseUnits, TX_HASH, usd6 } from '../../contract/audit/commitment.ts';
import type { Openings } from '../openings.ts';
import type { CapitalFigures, NightTransfers, Source } from '../source.ts';
import * as store from '../store.ts';
import { PolymarketClient } from './client.ts';
import { ACTIVITY_KINDS, tradingCost } from './ledger.ts';

/** Positions smaller than one share are dust, not counted (named in every request: the Data API's v2
 * dust floor is 0.1 share, https://docs.polymarket.com/api-reference/wallet/list-positions-for-a-user-or-market). */
export const POSITION_MIN_SIZE = 1;
/** A capital snapshot counts as the day boundary's equity when it lies at most this long before 00:00 UTC. */
export const BOUNDARY_TOLERANCE_MS = 30 * 60_000;
/** Rewards below this are not paid out: https://docs.polymarket.com/market-makers/liquidity-rewards */
export const MIN_PAYOUT_USD = 1;
/** A held-back capital reading is taken once this many readings in a row agree with it. */
const CONFIRMING_READINGS = 3;
/** A REWARD credit and its night's earnings agree within this (rounding of each row). */
export const CREDIT_TOLERANCE_USD = 0.01;

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, addSecrets() {} };
const seconds = (ms: number) => Math.floor(ms / 1000);

export class PolymarketSource implements Source {
  readonly name = 'polymarket' as const;
  readonly client: PolymarketClient;
  private readonly cfg: PolymarketConfig;
  private readonly log: Logger;
  /** Key of the market digests: derived from the API secret, which only the writer holds. */
  private readonly digestKey: Buffer;
  private readonly creditsChecked = new Set<string>();
  readonly openings: Openings;

  constructor(cfg: PolymarketConfig, openings: Openings, log: Logger = quiet) {
    this.cfg = cfg;
    this.openings = openings;
    this.log = log;
    this.client = new PolymarketClient(cfg, log);
    this.digestKey = createHmac('sha256', cfg.secret).update('public-stats quoted-market digest').digest();
  }

  /** The account's signature type (SIGNATURE_TYPE). */
  get signatureType(): number {
    return this.cfg.signatureType;
  }

  /** Whether cash is read on chain (POLYGON_RPC_URL) rather than from the CLOB. */
  get usesChain(): boolean {
    return Boolean(this.cfg.polygonRpcUrl);
  }

  async prepare(): Promise<void> {
    await this.client.syncClock();
  }

  /** Earnings of activity day `today` so far, and the markets earning today (earnings > 0). */
  async accrual(now: Date) {
    const today = utcDate(now);
    const usd = (await this.client.totalEarnings(today)) ?? 0;
    const markets = await this.client.earningMarkets(today);
    return { usd: usd6(usd), markets: markets.size };
  }

  /**
   * Markets quoted in the rolling 24 hours before `now`: those with resting orders now and those
   * where a resting order was filled, each stored as a keyed digest with the time it was last seen,
   * so the count survives restarts and single `once` runs.
   */
  async breadth(now: Date, db: WriterDb) {
    const t = now.getTime();
    const quotes = [...(await this.client.openOrderMarkets(t)), ...(await this.client.makerFillMarkets(seconds(t - DAY_MS)))];
    const sightings = quotes.filter((q) => q.at > t - DAY_MS).map((q) => ({
      digest: createHmac('sha256', this.digestKey).update(q.market.toLowerCase()).digest(),
      at: new Date(Math.min(q.at, t)),
    }));
    return store.realWrite(db, 'polymarket', (trx) => store.recordQuotedMarkets(trx, sightings, now, DAY_MS));
  }

  /** Cash (on chain when POLYGON_RPC_URL is set, else the CLOB's refreshed balance), inventory, positions. */
  async readCapital(): Promise<CapitalFigures> {
    let cash: number | undefined;
    if (this.cfg.polygonRpcUrl) {
      try {
        cash = await this.client.chainCashUsd(this.cfg.polygonRpcUrl);
      } catch (error) {
        this.log.warn('on-chain cash unreadable, using the CLOB balance', { error: (error as Error).message });
      }
    }
    cash ??= await this.client.clobCashUsd();
    const inventory = await this.client.data.inventoryUsd();
    const positions = await this.client.data.positionCount(POSITION_MIN_SIZE);
    return { cash_usd: usd6(cash), inventory_usd: usd6(inventory), positions };
  }

  /**
   * The capital reading, unless it is implausible: cash or at-stake moving by more than
   * CAPITAL_MAX_JUMP_SHARE since the previous snapshot with no transfer or trade in between (a stale
   * or doubled balance would otherwise corrupt two days of trading cost). Such a reading is held back
   * until CONFIRMING_READINGS readings in a row agree with it. The readings are counted in the
   * database (stats.capital_held), so a writer run once per cron tick, a restarted writer and a
   * standby that takes over count the same ones; only readings taken after the previous snapshot count.
   */
  async capital(now: Date, db: WriterDb): Promise<CapitalFigures | null> {
    const reading = await this.readCapital();
    const previous = await db.selectFrom('stats.capital').select(['observed_at', 'cash_usd', 'inventory_usd'])
      .where('is_demo', '=', false).where('observed_at', '<', now).orderBy('observed_at', 'desc').limit(1).executeTakeFirst();
    const held = await store.heldCapital(db);
    const publish = async () => {
      if (held) await store.realWrite(db, 'polymarket', (trx) => store.releaseHeldCapital(trx));
      return reading;
    };
    if (!previous) return publish();
    const share = this.cfg.capitalMaxJumpShare;
    const moved = (a: number, b: number) => Math.abs(a - b) > share * Math.max(Math.abs(b), 1);
    const cash = reading.cash_usd;
    const atStake = usd6(cash + reading.inventory_usd);
    const prevCash = Number(previous.cash_usd);
    const prevAtStake = usd6(prevCash + Number(previous.inventory_usd));
    if (!moved(cash, prevCash) && !moved(atStake, prevAtStake)) return publish();
    const flows = await this.client.data.activity(seconds(previous.observed_at.getTime()), seconds(now.getTime()) + 1);
    if (flows.some((f) => ACTIVITY_KINDS[f.type] === 'transfer' || ACTIVITY_KINDS[f.type] === 'trading')) return publish();
    const agrees = held !== undefined && held.first_read_at > previous.observed_at
      && !moved(cash, held.cash_usd) && !moved(atStake, held.at_stake_usd);
    const readings = agrees ? held.readings + 1 : 1;
    const fields = { cash_usd: cash, previous_cash_usd: prevCash, at_stake_usd: atStake, previous_at_stake_usd: prevAtStake, readings };
    if (readings >= CONFIRMING_READINGS) {
      this.log.warn('capital jump confirmed by consecutive readings: published', fields);
      return publish();
    }
    await store.realWrite(db, 'polymarket', (trx) => store.holdCapital(trx, {
      cash_usd: cash, at_stake_usd: atStake, readings, first_read_at: agrees ? held.first_read_at : now, last_read_at: now,
    }));
    this.log.warn('capital snapshot held back: it moved with no transfer or trade to explain it', fields);
    return null;
  }

  /**
   * The payout dated `payoutDate`: the earnings of the activity day before it, paid at 00:00 UTC of
   * the payout date (https://docs.polymarket.com/market-makers/liquidity-rewards). A night under the
   * $1 minimum is not paid, so it is 0. A night is reported once its activity day is over (the payout
   * date has come) and /rewards/user/total answered for that day: an answer without a row for it
   * (an empty list, or null) is a night without rewards, recorded as 0 rather than left out, so a gap
   * in the record always means the service has no figure (the route failed, or the writer did not
   * run). Earnings are reported while their day runs ("user earnings and live percentages per market
   * for a provided day", defaulting to today: https://docs.polymarket.com/api-reference/rewards/get-user-earnings-and-markets-configuration),
   * so a day with rewards has rows before it ends; should one still arrive later, the next cycle's ask
   * of the last two nights corrects the 0, audited. Null only for a payout date still to come.
   */
  async nightPayout(payoutDate: string, today: string): Promise<{ paid: number; earned: number } | null> {
    if (payoutDate > today) return null;
    const earned = (await this.client.totalEarnings(addDays(payoutDate, -1))) ?? 0;
    return { paid: earned < MIN_PAYOUT_USD ? 0 : usd6(earned), earned: usd6(earned) };
  }

  /** The night's payout; once its credit day is over, checked once against the REWARD credits of that day. */
  async payout(payoutDate: string, today: string): Promise<number | null> {
    const night = await this.nightPayout(payoutDate, today);
    if (night === null) return null;
    if (night.paid === 0 && night.earned > 0) this.log.info('night under the minimum payout: published as 0', { date: payoutDate, earnings_usd: night.earned });
    if (payoutDate < today && !this.creditsChecked.has(payoutDate)) {
      this.creditsChecked.add(payoutDate);
      const credited = (await this.rewardCredits(payoutDate, payoutDate)).get(payoutDate) ?? 0;
      if (Math.abs(credited - night.paid) > CREDIT_TOLERANCE_USD) {
        this.log.warn('payout differs from the REWARD credits of its night', { date: payoutDate, payout_usd: night.paid, credited_usd: usd6(credited) });
      }
    }
    return night.paid;
  }

  /** REWARD activity credited on each payout date from `from` to `to` (UTC days), in USD. */
  async rewardCredits(from: string, to: string): Promise<Map<string, number>> {
    const rows = await this.client.data.activity(seconds(midnightMs(from)), seconds(midnightMs(to) + DAY_MS), ['REWARD']);
    const out = new Map<string, number>();
    for (const r of rows) {
      if (r.type !== 'REWARD') continue;
      const date = utcDate(new Date(r.timestamp * 1000));
      out.set(date, (out.get(date) ?? 0) + r.usdcSize);
    }
    return out;
  }

  /**
   * The REWARD transfers of the night dated `payoutDate`: every REWARD row of the funder whose time
   * (the transfer's block time) falls on that UTC day. Polymarket pays liquidity rewards "directly to
   * maker addresses daily at midnight UTC" (https://docs.polymarket.com/market-makers/liquidity-rewards),
   * so the transfers of the payout dated D are mined from 00:00 UTC on D, the batch of sponsored rewards
   * a few minutes later; a row of the v2 feed carries the transaction's hash and its amount
   * (https://docs.polymarket.com/api-reference/feeds/list-account-activity). Null before the night has come.
   */
  async rewardTransfers(payoutDate: string, today: string): Promise<NightTransfers | null> {
    if (payoutDate > today) return null;
    const rows = await this.client.data.activity(seconds(midnightMs(payoutDate)), seconds(midnightMs(payoutDate) + DAY_MS), ['REWARD']);
    const transfers = rows.filter((r) => r.type === 'REWARD').map((r) => {
      const tx = r.transactionHash.toLowerCase();
      if (!TX_HASH.test(tx)) throw new Error(`a REWARD row of ${payoutDate} carries no transaction hash of 32 bytes`);
      return { tx, amount: baseUnits(r.usdcSize) };
    });
    return { wallet: this.cfg.funder, transfers };
  }

  /**
   * Trading cost of UTC day `date` by the equity-delta formula (ledger.ts), between the writer's last
   * capital snapshot at most 30 minutes before the day's 00:00 UTC and the same before the next one,
   * with every activity row between the two snapshot times. Null when a snapshot is missing, or while
   * a row of a type the writer does not know makes the day provisional.
   */
  async tradingCost(date: string, db: WriterDb) {
    const start = midnightMs(date);
    const s0 = await this.snapshotBefore(db, start);
    const s1 = await this.snapshotBefore(db, start + DAY_MS);
    if (!s0 || !s1 || s0.at >= s1.at) return null;
    const result = tradingCost(s0, s1, await this.client.data.activity(seconds(s0.at), seconds(s1.at)));
    if (result.kind === 'provisional') {
      this.log.warn('trading cost provisional: activity of unknown types', { date, types: result.unknownTypes });
      return null;
    }
    return usd6(result.usd);
  }

  private async snapshotBefore(db: WriterDb, boundaryMs: number): Promise<{ at: number; cash: number; inventory: number } | undefined> {
    const row = await db.selectFrom('stats.capital')
      .select(['observed_at', sql<string>`cash_usd`.as('cash'), sql<string>`inventory_usd`.as('inventory')])
      .where('is_demo', '=', false)
      .where('observed_at', '<=', new Date(boundaryMs))
      .where('observed_at', '>', new Date(boundaryMs - BOUNDARY_TOLERANCE_MS))
      .orderBy('observed_at', 'desc').limit(1).executeTakeFirst();
    return row ? { at: row.observed_at.getTime(), cash: Number(row.cash), inventory: Number(row.inventory) } : undefined;
  }
}
