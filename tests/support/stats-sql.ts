// Shared pieces of the SQL tests that read the public functions on a pinned clock: the clock, the
// records as of it, and nights of payouts written as the writer writes them.
import type pg from 'pg';
import { addDays } from '../../contract/dates.ts';

export const NOW = '2026-03-10T12:00:00Z'; // today = 2026-03-10: nights up to 2026-03-07 are final

export async function statsAt(client: pg.Client, now = NOW) {
  return (await client.query('select stats.stats_at($1) as r', [now])).rows[0].r;
}
export async function healthAt(client: pg.Client, now = NOW) {
  return (await client.query('select stats.health_at($1) as r', [now])).rows[0].r;
}

/** Payouts, each updated five minutes into its own date. */
export async function payouts(client: pg.Client, rows: [string, number | string][], demo = false) {
  for (const [date, usd] of rows) {
    await client.query('insert into stats.payout (date, usd, updated_at, is_demo) values ($1, $2, $3, $4)', [date, usd, `${date}T00:05:00Z`, demo]);
  }
}

/** n consecutive nights ending at `last`, usd = index + 1 (1 … n). */
export function nights(last: string, n: number): [string, number][] {
  return Array.from({ length: n }, (_, i) => [addDays(last, i - (n - 1)), i + 1]);
}
