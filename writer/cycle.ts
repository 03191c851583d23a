// One writer cycle and the long-running loop. Each figure is fetched and written on its own, so a
// failing source call loses only that figure; the heartbeat is written regardless, which keeps it
// truthful: a writer whose data calls all fail is alive, and health shows its data going stale.
import { addDays, utcDate } from '../contract/dates.ts';
import type { WriterDb } from './db.ts';
import { LockLost } from './lock.ts';
import type { Logger } from './log.ts';
import { commitNight } from './commitments.ts';
import { ONE_NODE, WrittenOnOneNode } from './replication.ts';
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
    // Stored, but not acknowledged: no "done" until a standby holds it.
    if (error instanceof WrittenOnOneNode) ctx.log.warn(`${name} ${ONE_NODE}`);
    else ctx.log.warn(`${name} failed`, { error: (error as Error).message });
    return { task: name, ok: false, error: (error as Error).message };
  }
}

/** Writes a heartbeat; its debug line ("heartbeat done") names the heartbeat's time, so a reader of the log knows which row it acknowledged. */
export async function heartbeat(ctx: CycleContext, now?: Date): Promise<TaskResult> {
  return task(ctx, 'heartbeat', async () => {
    const at = now ?? (await store.serverNow(ctx.db));
    await write(ctx, (trx, isDemo) => store.upsertHeartbeats(trx, [{ at, writer: ctx.writer ?? null }], isDemo));
    return at.toISOString();
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
  // The reward transfers of the nights not yet final, asked again on every cycle until the night enters
  // the log (three days after its date), so a batch mined late still makes its commitment.
  for (const date of [addDays(today, -2), addDays(today, -1), today]) {
    results.push(await task(ctx, `reward transfers ${date}`, async () => {
      const found = await source.rewardTransfers(date, today);
      const committed = await write(ctx, (trx, d) => commitNight(trx, source, date, today, d, found));
      return committed ? undefined : 'logged already';
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

/** How runLoop keeps the writer lock's lease (WriterSession.renew and lapse). */
export interface LeaseKeeping {
  renew(): Promise<void>;
  lapse(why: string): Promise<void>;
  everyMs: number;
  /** A step running longer than this has stalled: the writer gives the lock up (WriterConfig.stallMs). */
  stallMs: number;
}

/**
 * Runs until `signal` aborts, the demo source finds real data, or the writer lock is lost: a heartbeat
 * every heartbeatMs and a full cycle every intervalMs, on separate timers, so a slow cycle (retries,
 * timeouts) never delays the heartbeat past "alive". With `lease`, it renews the lock's lease while
 * its steps make progress; once one has run longer than lease.stallMs it gives the lock up instead,
 * so a standby takes over from a writer stuck in a step (its heartbeats alone would keep the lease).
 */
export async function runLoop(ctx: CycleContext, opts: { intervalMs: number; heartbeatMs: number; signal: AbortSignal; lease?: LeaseKeeping }): Promise<'stopped' | 'real data' | 'lock lost'> {
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
  /** When each step under way began. */
  const running = new Set<{ since: number }>();
  const every = async (ms: number, step: () => Promise<unknown>) => {
    while (!stop.signal.aborted) {
      const under = { since: Date.now() };
      running.add(under);
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
      } finally {
        running.delete(under);
      }
      await sleep(ms);
    }
  };
  // Resolves when the lease was given up for a stalled step: the loop ends without waiting for that step.
  let gaveUp!: () => void;
  const givenUp = new Promise<void>((resolve) => { gaveUp = resolve; });
  const keepLease = async (lease: LeaseKeeping) => {
    for (;;) {
      await sleep(lease.everyMs);
      if (stop.signal.aborted) return;
      const stalledMs = Date.now() - Math.min(Infinity, ...[...running].map((r) => r.since));
      if (stalledMs > lease.stallMs) {
        const seconds = Math.round(stalledMs / 1000);
        ctx.log.error('a writer step has made no progress for too long: giving up the writer lock so that a standby takes over', { writer: ctx.writer, stalled_seconds: seconds });
        ended ??= 'lock lost';
        await lease.lapse(`a step made no progress for ${seconds} s`);
        stop.abort();
        gaveUp();
        return;
      }
      try {
        await lease.renew();
      } catch (error) {
        if (error instanceof LockLost) {
          ended ??= 'lock lost';
          stop.abort();
          return;
        }
        ctx.log.warn('renewing the writer lock\'s lease failed', { error: (error as Error).message });
      }
    }
  };
  ctx.log.info('writer running', { writer: ctx.writer, source: ctx.source.name, interval_minutes: opts.intervalMs / 60_000 });
  const loops = Promise.all([
    every(opts.heartbeatMs, () => heartbeat(ctx)),
    every(opts.intervalMs, () => runCycle(ctx)),
    opts.lease && keepLease(opts.lease),
  ]);
  await Promise.race([loops, givenUp]);
  return ended ?? 'stopped';
}
