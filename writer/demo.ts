// The demo source: deterministic synthetic figures (they depend only on the date and time), so a
// fresh `npm start` shows a living service. Rows are marked is_demo, and it writes only into a
// database without real data (store.demoWrite enforces that).
import { usd6 } from '../contract/audit/commitment.ts';
import { DEMO_WALLET, demoDay, demoEarnings, demoNightTransfers, demoPayout, DemoVault } from '../contract/audit/demo.ts';
import { addDays, DAY_MS, midnightMs, utcDate } from '../contract/dates.ts';
import { commitNight } from './commitments.ts';
import { openWriterDb, type WriterDb } from './db.ts';
import { demoOpenings } from './openings.ts';
import type { Logger } from './log.ts';
import { ONE_NODE, WrittenOnOneNode } from './replication.ts';
import type { CapitalFigures, NightTransfers, Source } from './source.ts';
import * as store from './store.ts';

const HISTORY_NIGHTS = 45;

const mod = (a: number, m: number) => ((a % m) + m) % m;

function capitalOn(date: string): CapitalFigures {
  const n = demoDay(date);
  return { cash_usd: usd6(6200 + 180 * Math.sin(n * 0.5)), inventory_usd: usd6(1450 + 220 * Math.cos(n * 0.7)), positions: 14 + mod(n, 9) };
}

export class DemoSource implements Source {
  readonly name = 'demo' as const;
  readonly openings = demoOpenings(new DemoVault());

  async accrual(now: Date) {
    const today = utcDate(now);
    const elapsed = (now.getTime() - midnightMs(today)) / DAY_MS;
    return { usd: usd6(demoEarnings(today) * elapsed), markets: 18 + mod(demoDay(today), 7) };
  }

  async breadth(now: Date) {
    return 31 + mod(demoDay(utcDate(now)), 9);
  }

  async capital(now: Date) {
    return capitalOn(utcDate(now));
  }

  async payout(payoutDate: string) {
    return demoPayout(payoutDate);
  }

  async tradingCost(date: string, _db: WriterDb) {
    return usd6(9 + 7 * Math.sin(demoDay(date) * 1.3));
  }

  async rewardTransfers(payoutDate: string, today: string): Promise<NightTransfers | null> {
    if (payoutDate > today) return null;
    return { wallet: DEMO_WALLET, transfers: demoNightTransfers(payoutDate) };
  }
}

/**
 * Loads the demo history (45 nights, daily capital, today's accruals so far, breadth, heartbeat)
 * when the database holds no data at all. Returns whether it wrote anything. `writer` names the
 * heartbeat when a writer loads it.
 */
export async function seedDemoHistory(db: WriterDb, log?: Logger, writer?: string): Promise<boolean> {
  const demo = new DemoSource();
  const now = await store.serverNow(db);
  const today = utcDate(now);
  try {
    return await store.demoWrite(db, async (trx) => {
      const any = await trx.selectFrom('stats.payout').select('date').limit(1).executeTakeFirst()
        ?? await trx.selectFrom('stats.heartbeat').select('at').limit(1).executeTakeFirst();
      if (any) return false;
      const payouts: store.Payout[] = [];
      const costs: store.TradingCost[] = [];
      const capital: store.Capital[] = [];
      for (let i = 0; i < HISTORY_NIGHTS; i++) {
        const date = addDays(today, -i);
        payouts.push({ date, usd: await demo.payout(date) });
        // dated like the payout: the cost of the activity day before
        costs.push({ date, usd: await demo.tradingCost(addDays(date, -1), db) });
        // The day's last snapshot, a minute before midnight: the window's capital base reads these.
        capital.push({ at: new Date(midnightMs(date) + DAY_MS - 60_000), ...capitalOn(date) });
      }
      capital[0] = { at: now, ...capitalOn(today) };
      const accruals: store.Accrual[] = [];
      for (let t = midnightMs(today); t <= now.getTime(); t += 5 * 60_000) {
        accruals.push({ at: new Date(t), ...(await demo.accrual(new Date(t))) });
      }
      await store.upsertPayouts(trx, payouts, true);
      await store.upsertTradingCosts(trx, costs, true);
      await store.upsertCapital(trx, capital, true);
      await store.upsertAccruals(trx, accruals, true);
      await store.upsertBreadth(trx, [{ at: now, markets_quoted_24h: await demo.breadth(now) }], true);
      await store.upsertHeartbeats(trx, [{ at: now, writer }], true);
      for (const p of payouts) await commitNight(trx, demo, p.date, today, true);
      log?.info('loaded the demo history', { nights: payouts.length, accruals: accruals.length });
      return true;
    });
  } catch (error) {
    if (error instanceof store.RealDataPresent) return false;
    // Loaded, on a failover group's primary alone: signed once a standby holds it.
    if (error instanceof WrittenOnOneNode) {
      log?.warn(`the demo history is ${ONE_NODE}`);
      return true;
    }
    throw error;
  }
}

/** seedDemoHistory over a connection of its own, as `npm run writer -- seed-demo` runs it. */
export async function seedDemoIfEmpty(databaseUrl: string): Promise<boolean> {
  const db = openWriterDb(databaseUrl);
  try {
    return await seedDemoHistory(db);
  } finally {
    await db.destroy();
  }
}
