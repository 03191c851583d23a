// The writer as a component: pick the configured source, take the writer lock (waiting as a standby
// while another writer holds it) and run its loop through the lock's session until stopped. A writer
// that loses the lock stops writing at once and waits as a standby again.
// Used by `npm run writer -- run` and by `npm start`, which runs it beside the stack.
import type { WriterConfig } from '../config/writer.ts';
import { runLoop } from './cycle.ts';
import { DemoSource, seedDemoHistory } from './demo.ts';
import { openWriterDb, type WriterDb } from './db.ts';
import { LockLost, RENEW_EVERY_MS } from './lock.ts';
import { acquireWriterLock, LOST_LOCK_BACKOFF_MS } from './lock-acquire.ts';
import type { Logger } from './log.ts';
import { LogSigner, readStoredOrigin } from './log-signer.ts';
import { SealedOpenings } from './openings.ts';
import { PolymarketSource } from './polymarket/source.ts';
import { appendAndSign, signLogWith } from './signed-commit.ts';
import type { Source } from './source.ts';
import { recordPolicy, Witnessing } from './witnessing.ts';

export function makeSource(cfg: WriterConfig, log: Logger): Source | undefined {
  if (cfg.source === 'demo') return new DemoSource();
  if (cfg.source === 'polymarket') {
    const pm = cfg.polymarket!;
    log.addSecrets(pm.apiKey, pm.secret, pm.passphrase, pm.address, pm.funder);
    return new PolymarketSource(pm, new SealedOpenings(cfg.openingsKey, cfg.transfersDir, log), log);
  }
  return undefined;
}

/** The log's signer, set for every write of this process, and its witnessing under LOG_POLICY (none without a policy). */
export interface LogDuties {
  signer: LogSigner;
  witnessing: Witnessing | undefined;
}

/**
 * Sets up the log's signer and witnessing from the configuration; none without LOG_SIGNING_KEY. The
 * log's origin is settled from the database (settleLog) when it can be reached now, so that a
 * conflicting LOG_ORIGIN or a policy that does not name the log stops a command before it writes;
 * otherwise at the writer's next step that reaches it.
 */
export async function prepareLog(cfg: WriterConfig, log: Logger): Promise<LogDuties | undefined> {
  if (!cfg.log) {
    log.warn('LOG_SIGNING_KEY is not set: nights enter the transparency log unsigned, and the site serves none of them (run `npm run keys`)');
    return undefined;
  }
  const signer = await LogSigner.create(cfg.log.signingKey, cfg.log.origins, cfg.log.stateFile, log);
  signLogWith(signer);
  const witnessing = cfg.log.policyFile ? await Witnessing.load(cfg.log.policyFile, signer, log) : undefined;
  const duties = { signer, witnessing };
  const db = openWriterDb(cfg.databaseUrl);
  try {
    const stored = await readStoredOrigin(db).then((origin) => ({ origin }), () => undefined);
    if (stored) await settleLog(stored.origin, duties);
  } finally {
    await db.destroy();
  }
  return duties;
}

/**
 * Takes the origin the real log's first checkpoint fixed (null while none is signed) as the log's,
 * and checks that the witness policy names the log under it. Throws with a sentence when LOG_ORIGIN
 * names another origin or the policy does not name the log.
 */
async function settleLog(stored: string | null, duties: LogDuties): Promise<void> {
  duties.signer.settle(stored);
  await duties.witnessing?.check();
}

/**
 * What a writer does for the log besides its writes: settles the log's origin, records the policy in
 * force (or that there is none), signs what was appended unsigned, and asks the witnesses once
 * (unless `askWitnesses` is false: a running writer asks them beside its loop). False when the log's
 * new entries are written on one node (replication.ts): nothing is signed then.
 */
export async function logDuties(db: WriterDb, duties: LogDuties | undefined, { askWitnesses = true } = {}): Promise<boolean> {
  if (!duties) return true;
  await settleLog(await readStoredOrigin(db), duties);
  await (duties.witnessing ? duties.witnessing.record(db) : recordPolicy(db, null));
  const held = await appendAndSign(db);
  if (askWitnesses) await duties.witnessing?.round(db);
  return held;
}

export interface RunningWriter {
  /** Resolves when the loop has ended (stopped, or the demo source found real data). */
  done: Promise<void>;
  stop(): Promise<void>;
}

export function startWriter(cfg: WriterConfig, log: Logger): RunningWriter {
  const controller = new AbortController();
  const source = makeSource(cfg, log);
  const done = (async () => {
    if (!source) {
      log.info('WRITER_SOURCE=none: the writer does not run; data comes only from `npm run writer -- import`.');
      return;
    }
    const duties = await prepareLog(cfg, log);
    let firstAskAfterMs = 0;
    while (!controller.signal.aborted) {
      const session = await acquireWriterLock(cfg.databaseUrl, cfg.name, log, { signal: controller.signal, logEveryMs: cfg.standbyLogMs, firstAskAfterMs });
      if (!session) break;
      if (controller.signal.aborted) {
        await session.release();
        break;
      }
      let outcome: Awaited<ReturnType<typeof runLoop>> = 'lock lost';
      // Witnessing runs beside the loop for as long as this session does.
      const sessionOver = new AbortController();
      const signal = AbortSignal.any([controller.signal, session.lost, sessionOver.signal]);
      let witnessing: Promise<void> | undefined;
      try {
        if (source.name === 'demo') await seedDemoHistory(session.db, log, cfg.name);
        await logDuties(session.db, duties, { askWitnesses: false }).catch(async (error: Error & { code?: unknown }) => {
          // A database error (a statement timeout behind a commit that waits for a standby cut off, on a
          // primary that is itself cut off) costs this session, not the writer: it asks for the lock again.
          if (error instanceof LockLost || typeof error.code !== 'string') throw error;
          await session.lapse(`its first writes failed: ${error.message}`);
          throw new LockLost(`the writer gave the lock up (its first writes failed: ${error.message})`);
        });
        witnessing = duties?.witnessing?.run(session.db, signal);
        outcome = await runLoop({ db: session.db, source, log, writer: cfg.name }, {
          intervalMs: cfg.intervalMs,
          heartbeatMs: cfg.heartbeatMs,
          signal,
          lease: { renew: () => session.renew(), lapse: (why) => session.lapse(why), everyMs: RENEW_EVERY_MS, stallMs: cfg.stallMs },
        });
      } catch (error) {
        if (!(error instanceof LockLost)) throw error;
      } finally {
        sessionOver.abort();
        await witnessing;
        await session.release();
      }
      if (outcome === 'real data') return;
      if (controller.signal.aborted) break;
      log.warn('lost the writer lock: writing nothing until it holds the lock again, which it asks for after a pause that lets a standby take over',
        { writer: cfg.name, reason: session.lostBecause, pause_seconds: LOST_LOCK_BACKOFF_MS / 1000 });
      firstAskAfterMs = LOST_LOCK_BACKOFF_MS;
    }
    log.info('writer stopped', { writer: cfg.name });
  })();
  return {
    done,
    async stop() {
      controller.abort();
      await done.catch(() => {});
    },
  };
}
