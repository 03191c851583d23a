// Every write the writer makes. Each one is an idempotent upsert inside a transaction that first
// locks the settings row: that serialises concurrent writers (an import beside the loop), and it is
// where the rule that demo and real data never mix is enforced.
// Every such transaction commits through committing (signed-commit.ts), which signs the log after.
import { sql, type Transaction } from 'kysely';
import { DEMO_TABLES } from '../contract/tables.ts';
import type { StatsTables, WriterDb } from './db.ts';
import type { EventFields } from './events.ts';
import { committing } from './signed-commit.ts';

export type RealSource = 'polymarket' | 'import';
export type Trx = Transaction<StatsTables>;

// The rows are the import format's events (events.ts), whichever source made them.
export type Payout = EventFields<'payout'>;
export type TradingCost = EventFields<'trading_cost'>;
export type Accrual = EventFields<'accrual'>;
export type Breadth = EventFields<'breadth'>;
export type Capital = EventFields<'capital'>;
/** `writer`: the name of the writer that is alive; none for an imported heartbeat. */
export type Heartbeat = EventFields<'heartbeat'> & { writer?: string | null };

/** Raised when the demo source finds real data: it stops rather than mix demo rows into it. */
export class RealDataPresent extends Error {
  constructor() {
    super('The database holds real data, so the demo source writes nothing (set WRITER_SOURCE=polymarket or none).');
  }
}

/** Numbers go to Postgres as text so numeric keeps exactly the value given. */
export const num = (n: number): string => String(n);

async function lockSettings(trx: Trx) {
  return trx.selectFrom('stats.settings').select('data_source').forUpdate().executeTakeFirstOrThrow();
}

/** True when any row is real (not demo) or a real source has written. */
export async function hasRealData(db: WriterDb | Trx): Promise<boolean> {
  const settings = await db.selectFrom('stats.settings').select('data_source').executeTakeFirst();
  if (settings?.data_source) return true;
  for (const name of DEMO_TABLES) {
    const row = await db.selectFrom(`stats.${name}` as const).select(sql`1`.as('one')).where('is_demo', '=', false).limit(1).executeTakeFirst();
    if (row) return true;
  }
  return false;
}

/**
 * Runs `fn` as a real write: the first one removes every demo row in the same transaction, and the
 * settings record which real source wrote last.
 */
export async function realWrite<T>(db: WriterDb, source: RealSource, fn: (trx: Trx) => Promise<T>): Promise<T> {
  return committing(db, async (trx) => {
    const settings = await lockSettings(trx);
    if (settings.data_source === null) {
      await sql`select stats.purge_demo()`.execute(trx);
    }
    if (settings.data_source !== source) await trx.updateTable('stats.settings').set({ data_source: source }).execute();
    return fn(trx);
  });
}

/** Runs `fn` as a demo write, only while the database holds no real data. */
export async function demoWrite<T>(db: WriterDb, fn: (trx: Trx) => Promise<T>): Promise<T> {
  return committing(db, async (trx) => {
    await lockSettings(trx);
    if (await hasRealData(trx)) throw new RealDataPresent();
    return fn(trx);
  });
}

// The WHERE on each DO UPDATE makes a repeated write a no-op: no row version, no moved updated_at.

export async function upsertPayouts(trx: Trx, rows: Payout[], isDemo = false): Promise<void> {
  if (rows.length === 0) return;
  await trx.insertInto('stats.payout')
    .values(rows.map((r) => ({ date: r.date, usd: num(r.usd), is_demo: isDemo })))
    .onConflict((oc) => oc.column('date')
      .doUpdateSet({ usd: sql`excluded.usd` })
      .where(sql<boolean>`payout.usd is distinct from excluded.usd`))
    .execute();
}

export async function upsertTradingCosts(trx: Trx, rows: TradingCost[], isDemo = false): Promise<void> {
  if (rows.length === 0) return;
  await trx.insertInto('stats.trading_cost')
    .values(rows.map((r) => ({ date: r.date, usd: num(r.usd), is_demo: isDemo })))
    .onConflict((oc) => oc.column('date')
      .doUpdateSet({ usd: sql`excluded.usd` })
      .where(sql<boolean>`trading_cost.usd is distinct from excluded.usd`))
    .execute();
}

export async function upsertAccruals(trx: Trx, rows: Accrual[], isDemo = false): Promise<void> {
  if (rows.length === 0) return;
  await trx.insertInto('stats.accrual')
    .values(rows.map((r) => ({ observed_at: r.at, usd: num(r.usd), markets: r.markets, is_demo: isDemo })))
    .onConflict((oc) => oc.column('observed_at')
      .doUpdateSet({ usd: sql`excluded.usd`, markets: sql`excluded.markets` })
      .where(sql<boolean>`(accrual.usd, accrual.markets) is distinct from (excluded.usd, excluded.markets)`))
    .execute();
}

export async function upsertBreadth(trx: Trx, rows: Breadth[], isDemo = false): Promise<void> {
  if (rows.length === 0) return;
  await trx.insertInto('stats.breadth')
    .values(rows.map((r) => ({ observed_at: r.at, markets_quoted_24h: r.markets_quoted_24h, is_demo: isDemo })))
    .onConflict((oc) => oc.column('observed_at')
      .doUpdateSet({ markets_quoted_24h: sql`excluded.markets_quoted_24h` })
      .where(sql<boolean>`breadth.markets_quoted_24h is distinct from excluded.markets_quoted_24h`))
    .execute();
}

export async function upsertCapital(trx: Trx, rows: Capital[], isDemo = false): Promise<void> {
  if (rows.length === 0) return;
  await trx.insertInto('stats.capital')
    .values(rows.map((r) => ({ observed_at: r.at, cash_usd: num(r.cash_usd), inventory_usd: num(r.inventory_usd), positions: r.positions, is_demo: isDemo })))
    .onConflict((oc) => oc.column('observed_at')
      .doUpdateSet({ cash_usd: sql`excluded.cash_usd`, inventory_usd: sql`excluded.inventory_usd`, positions: sql`excluded.positions` })
      .where(sql<boolean>`(capital.cash_usd, capital.inventory_usd, capital.positions)
        is distinct from (excluded.cash_usd, excluded.inventory_usd, excluded.positions)`))
    .execute();
}

export async function upsertHeartbeats(trx: Trx, rows: Heartbeat[], isDemo = false): Promise<void> {
  if (rows.length === 0) return;
  await trx.insertInto('stats.heartbeat')
    .values(rows.map((r) => ({ at: r.at, is_demo: isDemo, writer: r.writer ?? null })))
    .onConflict((oc) => oc.column('at').doNothing())
    .execute();
}

/**
 * Records markets seen quoted (keyed digests, never ids) at their latest sighting, drops those last
 * seen before the window, and returns how many were seen within it.
 */
export async function recordQuotedMarkets(trx: Trx, sightings: { digest: Buffer; at: Date }[], now: Date, windowMs: number): Promise<number> {
  // One row per digest: a statement may not upsert the same row twice.
  const latest = new Map<string, { digest: Buffer; at: Date }>();
  for (const s of sightings) {
    const known = latest.get(s.digest.toString('hex'));
    if (!known || known.at < s.at) latest.set(s.digest.toString('hex'), s);
  }
  if (latest.size > 0) {
    await trx.insertInto('stats.quoted_market')
      .values([...latest.values()].map((s) => ({ digest: s.digest, last_seen_at: s.at })))
      .onConflict((oc) => oc.column('digest').doUpdateSet({ last_seen_at: sql`greatest(quoted_market.last_seen_at, excluded.last_seen_at)` }))
      .execute();
  }
  const since = new Date(now.getTime() - windowMs);
  await trx.deleteFrom('stats.quoted_market').where('last_seen_at', '<=', since).execute();
  const row = await trx.selectFrom('stats.quoted_market').select(sql<number>`count(*)::int`.as('n'))
    .where('last_seen_at', '>', since).where('last_seen_at', '<=', now).executeTakeFirstOrThrow();
  return row.n;
}

/** The database server's clock: observations are stamped with it, so a skewed host clock does not matter. */
export async function serverNow(db: WriterDb): Promise<Date> {
  const { rows } = await sql<{ now: Date }>`select now() as now`.execute(db);
  return rows[0]!.now;
}

/** The capital reading held back as implausible, if any (stats.capital_held). */
export interface HeldCapital { cash_usd: number; at_stake_usd: number; readings: number; first_read_at: Date; last_read_at: Date }

export async function heldCapital(db: WriterDb | Trx): Promise<HeldCapital | undefined> {
  const row = await db.selectFrom('stats.capital_held').select(['cash_usd', 'at_stake_usd', 'readings', 'first_read_at', 'last_read_at']).executeTakeFirst();
  return row && { ...row, cash_usd: Number(row.cash_usd), at_stake_usd: Number(row.at_stake_usd) };
}

/** Records the reading held back now, replacing the one before. */
export async function holdCapital(trx: Trx, held: HeldCapital): Promise<void> {
  const values = { cash_usd: num(held.cash_usd), at_stake_usd: num(held.at_stake_usd), readings: held.readings, first_read_at: held.first_read_at, last_read_at: held.last_read_at };
  await trx.insertInto('stats.capital_held').values({ id: true, ...values })
    .onConflict((oc) => oc.column('id').doUpdateSet(values)).execute();
}

/** Forgets the held-back reading: a reading was published, or the readings stopped agreeing. */
export async function releaseHeldCapital(trx: Trx): Promise<void> {
  await trx.deleteFrom('stats.capital_held').execute();
}

/** Whether the night already has an entry in the log. */
export async function nightLogged(trx: Trx, date: string): Promise<boolean> {
  return Boolean(await trx.selectFrom('stats.log_entry').select('idx').where('date', '=', date).limit(1).executeTakeFirst());
}

/** Every wallet commitment recorded, oldest first: the last is the one in force. */
export async function walletCommitments(trx: Trx): Promise<string[]> {
  return (await trx.selectFrom('stats.wallet_commitment').select('commitment').orderBy('recorded_at').execute()).map((r) => r.commitment);
}

/** Records a new wallet commitment, which the log then enters as a wallet entry of its own. */
export async function recordWalletCommitment(trx: Trx, commitment: string, isDemo: boolean): Promise<void> {
  await trx.insertInto('stats.wallet_commitment').values({ commitment, is_demo: isDemo }).execute();
}

/** The night's commitment to its reward transfers; a night asked again with other transfers gets the new one. */
export async function upsertNightTransfers(trx: Trx, date: string, commitment: string, isDemo: boolean): Promise<void> {
  await trx.insertInto('stats.night_transfers').values({ date, commitment, is_demo: isDemo })
    .onConflict((oc) => oc.column('date').doUpdateSet({ commitment: sql`excluded.commitment` })
      .where(sql<boolean>`night_transfers.commitment is distinct from excluded.commitment`))
    .execute();
}
