// One writer cycle and the long-running loop. Each figure is fetched and written on its own, so a
// failing source call loses only that figure; the heartbeat is written regardless, which keeps it
// truthful: a writer whose data calls all fail is alive, and health shows its data going stale.
import { addDays, utcDate } from '../../contract/dates.ts';
import type { WriterDb } from './db.ts';
import { LockLost } from './lock.ts';
import type { Logger } from './log.ts';
import type { Source } from './source.ts';
import * as store from './store.ts';

export interface CycleContext {
  db: WriterDb;
  source: Source;
  log: Logger;
  /** The name its heartbeats carry (WriterConfig.name). */
  writer?: string;
}

export interface TaskResult { task: string; ok: boolean; error?: string }

/** Writes through the rule of the source: demo rows only into a demo database, real rows purge demo ones. */
function write<T>(ctx: CycleContext, fn: (trx: store.Trx, isDemo: boolean) => Promise<T>): Promise<T> {
  return ctx.source.name === 'demo'
    ? store.demoWrite(ctx.db, (trx) => fn(trx, true))
    : store.realWrite(ctx.db, 'polymarket', (trx) => fn(trx, false));
}

async function task(ctx: CycleContext, name: string, fn: () => Promise<string | void>): Promise<TaskResult> {
  try {
    const note = await fn();
    ctx.log.debug(`${name} done`, note ? { note } : {});
    return { task: name, ok: true };
  } catch (error) {
    // Not a figure's failure: the writer must stop writing altogether.
    if (error instanceof store.RealDataPresent || error instanceof LockLost) throw error;
    ctx.log.warn(`${name} failed`, { error: (error as Error).message });
    return { task: name, ok: false, error: (error as Error).message };
  }
}

export async function heartbeat(ctx: CycleContext, now?: Date): Promise<TaskResult> {
  return task(ctx, 'heartbeat', async () => {
    const at = now ?? (await store.serverNow(ctx.db));
    await write(ctx, (trx, isDemo) => store.upsertHeartbeats(trx, [{ at, writer: ctx.writer ?? null }], isDemo));
  });
}

/**
 * Accrual, breadth and capital observed now; the last two settled nights (a night settles at
 * 00:00 UTC on its payout date, and Polymarket may revise it); the trading cost of the last two
 * settled days, recomputed on every cycle because the Data API indexes activity with a lag (a changed
 * value is a correction, and the old one is audited). `now` defaults to the database server's clock.
 */
export async function runCycle(ctx: CycleContext, now?: Date): Promise<TaskResult[]> {
  const at = now ?? (await store.serverNow(ctx.db));
  const today = utcDate(at);
  const { source } = ctx;
  const results: TaskResult[] = [];
  if (source.prepare) await source.prepare().catch((error: Error) => ctx.log.warn('source preparation failed', { error: error.message }));
  results.push(await task(ctx, 'accrual', async () => {
    const a = await source.accrual(at);
    await write(ctx, (trx, d) => store.upsertAccruals(trx, [{ at, ...a }], d));
  }));
  results.push(await task(ctx, 'breadth', async () => {
    const markets = await source.breadth(at, ctx.db);
    await write(ctx, (trx, d) => store.upsertBreadth(trx, [{ at, markets_quoted_24h: markets }], d));
  }));
  results.push(await task(ctx, 'capital', async () => {
    const started = Date.now();
    const c = await source.capital(at, ctx.db);
    if (c === null) return 'held back';
    // Stamped when its reads completed: the boundary snapshots of the trading cost must not claim an
    // earlier time than the balances they hold.
    const readAt = now ? new Date(at.getTime() + (Date.now() - started)) : await store.serverNow(ctx.db);
    await write(ctx, (trx, d) => store.upsertCapital(trx, [{ at: readAt, ...c }], d));
  }));
  for (const date of [addDays(today, -1), today]) {
    results.push(await task(ctx, `payout ${date}`, async () => {
      const usd = await source.payout(date, today);
      if (usd === null) return 'no payout reported yet';
      await write(ctx, (trx, d) => store.upsertPayouts(trx, [{ date, usd }], d));
    }));
  }
  // The cost of activity day D is dated D+1, like the payout of that day's rewards, so the returns
  // window sets each day's rewards against the same day's costs.
  for (const date of [addDays(today, -1), today]) {
    results.push(await task(ctx, `trading cost ${date}`, async () => {
      const usd = await source.tradingCost(addDays(date, -1), ctx.db);
      if (usd === null) return 'not computable';
      await write(ctx, (trx, d) => store.upsertTradingCosts(trx, [{ date, usd }], d));
    }));
  }
  const failed = results.filter((r) => !r.ok).map((r) => r.task);
  ctx.log.info('cycle done', { source: source.name, ok: results.length - failed.length, failed });
  return results;
}

/**
 * Runs until `signal` aborts, the demo source finds real data, or the writer lock is lost: a heartbeat
 * every heartbeatMs and a full cycle every intervalMs, on separate timers, so a slow cycle (retries,
 * timeouts) never delays the heartbeat past "alive".
 */
export async function runLoop(ctx: CycleContext, opts: { intervalMs: number; heartbeatMs: number; signal: AbortSignal }): Promise<'stopped' | 'real data' | 'lock lost'> {
  // Stops both timers on the caller's signal, when the demo source finds real data, or when the lock is lost.
  const stop = new AbortController();
  opts.signal.addEventListener('abort', () => stop.abort(), { once: true });
  if (opts.signal.aborted) stop.abort();
  let ended: 'real data' | 'lock lost' | undefined;
  const sleep = (ms: number) => new Promise<void>((resolve) => {
    // A stop that came during the step has fired already: its listener would never run.
    if (stop.signal.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    stop.signal.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, { once: true });
  });
  const every = async (ms: number, step: () => Promise<unknown>) => {
    while (!stop.signal.aborted) {
      try {
        await step();
      } catch (error) {
        if (error instanceof store.RealDataPresent || error instanceof LockLost) {
          ended ??= error instanceof LockLost ? 'lock lost' : 'real data';
          if (error instanceof store.RealDataPresent) ctx.log.warn('real data is present: the demo source stops here', { reason: error.message });
          stop.abort();
          return;
        }
        // Even the database being away must not end the loop: log it and try again next time.
        ctx.log.error('writer step failed', { error: (error as Error).message });
      }
      await sleep(ms);
    }
  };
  ctx.log.info('writer running', { writer: ctx.writer, source: ctx.source.name, interval_minutes: opts.intervalMs / 60_000 });
  await Promise.all([every(opts.heartbeatMs, () => heartbeat(ctx)), every(opts.intervalMs, () => runCycle(ctx))]);
  return ended ?? 'stopped';
}
