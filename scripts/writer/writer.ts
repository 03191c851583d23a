// The writer as a component: pick the configured source and run its loop until stopped.
// Used by `npm run writer -- run` and by `npm start`, which runs it beside the stack.
import type { WriterConfig } from './config.ts';
import { runLoop } from './cycle.ts';
import { openWriterDb, type WriterDb } from './db.ts';
import { DemoSource, seedDemoHistory } from './demo.ts';
import type { Logger } from './log.ts';
import { PolymarketSource } from './polymarket/source.ts';
import type { Source } from './source.ts';

export function makeSource(cfg: WriterConfig, log: Logger): Source | undefined {
  if (cfg.source === 'demo') return new DemoSource();
  if (cfg.source === 'polymarket') {
    const pm = cfg.polymarket!;
    log.addSecrets(pm.apiKey, pm.secret, pm.passphrase, pm.address, pm.funder);
    return new PolymarketSource(pm, log);
  }
  return undefined;
}

export interface RunningWriter {
  /** Resolves when the loop has ended (stopped, or the demo source found real data). */
  done: Promise<void>;
  stop(): Promise<void>;
}

export function startWriter(cfg: WriterConfig, log: Logger, db: WriterDb = openWriterDb(cfg.databaseUrl)): RunningWriter {
  const controller = new AbortController();
  const source = makeSource(cfg, log);
  const done = (async () => {
    try {
      if (!source) {
        log.info('WRITER_SOURCE=none: the writer does not run; data comes only from `npm run writer -- import`.');
        return;
      }
      if (source.name === 'demo') await seedDemoHistory(db, log);
      await runLoop({ db, source, log }, { intervalMs: cfg.intervalMs, heartbeatMs: cfg.heartbeatMs, signal: controller.signal });
    } finally {
      await db.destroy();
    }
  })();
  return {
    done,
    async stop() {
      controller.abort();
      await done.catch(() => {});
    },
  };
}
