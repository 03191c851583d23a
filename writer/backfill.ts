// `backfill --since YYYY-MM-DD`: settled nights from a date, one request per night. Each night is
// its own transaction and nights already recorded are skipped, so an interrupted backfill resumes
// where it stopped; the last two nights are always asked again because Polymarket may revise them.
import { addDays, utcDate } from '../contract/dates.ts';
import type { WriterDb } from './db.ts';
import { LockLost } from './lock.ts';
import type { Logger } from './log.ts';
import { commitNight } from './commitments.ts';
import type { Source } from './source.ts';
import * as store from './store.ts';

export interface BackfillResult { nights: number; written: number; skipped: number; empty: number; failed: string[] }

export async function backfill(db: WriterDb, source: Source, since: string, log: Logger): Promise<BackfillResult> {
  const today = utcDate(await store.serverNow(db));
  // E.g. reads the server's clock so signatures are not rejected for skew; without it the local clock serves.
  await source.prepare?.().catch((error: Error) => log.warn('source preparation failed', { error: error.message }));
  if (since > today) throw new Error(`--since ${since} lies after today (${today}).`);
  const known = new Set((await db.selectFrom('stats.payout').select('date').where('date', '>=', since).where('is_demo', '=', false).execute()).map((r) => r.date));
  const recheckFrom = addDays(today, -1);
  const dates: string[] = [];
  for (let d = since; d <= today; d = addDays(d, 1)) dates.push(d);
  const result: BackfillResult = { nights: dates.length, written: 0, skipped: 0, empty: 0, failed: [] };
  let done = 0;
  for (const date of dates) {
    done++;
    if (known.has(date) && date < recheckFrom) {
      result.skipped++;
    } else {
      try {
        const usd = await source.payout(date, today);
        if (usd === null) result.empty++;
        else {
          // A night is written with its commitment, or not at all: a night that entered the log
          // without one would never gain it.
          const transfers = await source.rewardTransfers(date, today);
          await store.realWrite(db, 'polymarket', async (trx) => {
            await store.upsertPayouts(trx, [{ date, usd }]);
            await commitNight(trx, source, date, today, false, transfers);
          });
          result.written++;
        }
      } catch (error) {
        if (error instanceof LockLost) throw error;
        // One night failing (after its retries) does not stop the others; a re-run picks it up.
        result.failed.push(date);
        log.warn('backfill night failed', { date, error: (error as Error).message });
      }
    }
    if (done % 10 === 0 || done === dates.length) {
      log.info('backfill progress', { done, of: dates.length, date, written: result.written, skipped: result.skipped, empty: result.empty, failed: result.failed.length });
    }
  }
  return result;
}
