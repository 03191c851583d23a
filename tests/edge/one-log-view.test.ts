// One view of the transparency log, whichever edge worker answers: the stack runs the edge with the
// worker count `npm start` gives it (one per core), the writer writes, and two readers poll the site
// every 250 ms as a follower of the account would, across the demo data giving way to the first real
// import and across a later write. Once any answer has named a checkpoint (an answer's Log-Checkpoint
// field) or served one (/log/checkpoint), no answer to a request made after that serves an older
// checkpoint of that log or a 404 for it, and every checkpoint named is served at its size.
import { availableParallelism } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, todayUtc } from '../../contract/dates.ts';
import { logOrigin, logPrefix, SITE_PATHS } from '../../contract/paths.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { cliEnv, runCli } from '../support/writer.ts';

const POLL_MS = 250;
const READERS = 2;

let stack: TestStack;
beforeAll(async () => {
  // What `npm start` runs: one edge worker per core, the warm keeper every 2 s.
  stack = await startTestStack({ seedDemo: true, env: { EDGE_WORKERS: String(availableParallelism()), EDGE_WARM_SECONDS: '2' } });
}, 120_000);
afterAll(async () => { await stack?.destroy(); });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A checkpoint's origin and size, from its first two lines. */
const headOf = (note: string) => { const [origin, size] = note.split('\n'); return { origin: origin!, size: Number(size) }; };

/** The origin and size a Log-Checkpoint field names (origin="…", size=…, root=:…:). */
function named(field: string | null): { origin: string; size: number } | undefined {
  const origin = /origin="([^"]*)"/.exec(field ?? '')?.[1];
  const size = /size=(\d+)/.exec(field ?? '')?.[1];
  return origin && size ? { origin, size: Number(size) } : undefined;
}

/** A checkpoint served: when its request was sent and its answer arrived, to which reader, at which path. */
interface Seen { sentAt: number; at: number; reader: number; what: string; origin: string; size: number }

describe('two readers polling while the writer writes, the edge with one worker per core', () => {
  it('never see the log go back or a 404 for a checkpoint an answer named, and every named checkpoint is served', async () => {
    const site = stack.cfg.siteUrl;
    const demoOrigin = logOrigin(stack.cfg, true);
    const realOrigin = logOrigin(stack.cfg, false);
    /** Per log: the largest checkpoint any answer has named or served so far, and when its answer arrived. */
    const known = new Map<string, { size: number; at: number }>();
    const failures: string[] = [];
    const served: Seen[] = [];
    let polls = 0;
    let namedGoingBack = 0;
    let stop = false;

    /** Checks an answer about the log against what was known when its request was sent. */
    const saw = (reader: number, what: string, head: { origin: string; size: number }, sentAt: number, kind: 'named' | 'served') => {
      const before = known.get(head.origin);
      if (kind === 'served' && before && before.at < sentAt && head.size < before.size) {
        failures.push(`reader ${reader}: ${what} served ${head.origin} at ${head.size} after an answer had named or served ${before.size}`);
      }
      if (kind === 'named' && before && before.at < sentAt && head.size < before.size) namedGoingBack++;
      if (!before || head.size > before.size) known.set(head.origin, { size: head.size, at: Date.now() });
    };

    const read = async (reader: number) => {
      const lastNamed = new Map<string, number>();
      while (!stop) {
        polls++;
        let sentAt = Date.now();
        const stats = await fetch(site + SITE_PATHS.SITE_STATS);
        await stats.arrayBuffer();
        const name = named(stats.headers.get('log-checkpoint'));
        if (name) saw(reader, SITE_PATHS.SITE_STATS, name, sentAt, 'named');
        if (name) lastNamed.set(name.origin, name.size);

        sentAt = Date.now();
        const checkpoint = await fetch(site + SITE_PATHS.LOG_CHECKPOINT);
        const text = await checkpoint.text();
        if (checkpoint.status !== 200) failures.push(`reader ${reader}: ${SITE_PATHS.LOG_CHECKPOINT} answered ${checkpoint.status}: ${text}`);
        else {
          const head = headOf(text);
          saw(reader, SITE_PATHS.LOG_CHECKPOINT, head, sentAt, 'served');
          served.push({ sentAt, at: Date.now(), reader, what: new URL(checkpoint.url).pathname, ...head });
        }

        // Every checkpoint this reader was named, fetched again at every poll: it must stay served.
        for (const [origin, size] of lastNamed) {
          const path = `${logPrefix(origin === demoOrigin)}checkpoint/${size}`;
          const res = await fetch(site + path);
          const body = await res.text();
          if (res.status !== 200) failures.push(`reader ${reader}: ${path}, named by a Log-Checkpoint field, answered ${res.status}: ${body}`);
          else if (headOf(body).origin !== origin || headOf(body).size !== size) failures.push(`reader ${reader}: ${path} served ${body.split('\n').slice(0, 2).join(' ')}`);
        }
        await sleep(POLL_MS);
      }
    };

    const importLines = async (events: object[]) => {
      const run = await runCli(['import', '-'], cliEnv(stack), events.map((e) => JSON.stringify(e)).join('\n') + '\n');
      expect(run.code, run.stderr).toBe(0);
      return Date.now();
    };
    /** How long after `since` every reader had been served `origin` at `size` or beyond. */
    const servedAfter = async (origin: string, size: number, since: number) => {
      const firstFor = (reader: number) => served.find((s) => s.reader === reader && s.origin === origin && s.size >= size && s.at >= since);
      const readerIds = Array.from({ length: READERS }, (_, i) => i + 1);
      while (readerIds.some((reader) => !firstFor(reader))) await sleep(50);
      return Math.max(...readerIds.map((reader) => firstFor(reader)!.at - since));
    };

    const readers = Array.from({ length: READERS }, (_, i) => read(i + 1));
    try {
      await sleep(2000);
      expect(served.some((s) => s.origin === demoOrigin && s.what === `${SITE_PATHS.LOG_DEMO}checkpoint`)).toBe(true);

      // The first real import: the demo data and their log give way to the real ones.
      const today = todayUtc();
      const nights = Array.from({ length: 10 }, (_, i) => ({ type: 'payout', date: addDays(today, -(13 - i)), usd: 10 + i + 0.25 }));
      const switched = await importLines(nights);
      const toReal = await servedAfter(realOrigin, nights.length, switched);
      await sleep(3000);

      // A later write: a correction of a logged night appends an entry, and the log grows by one.
      const grown = await importLines([{ type: 'payout', date: nights[0]!.date, usd: 99.99 }]);
      const toGrown = await servedAfter(realOrigin, nights.length + 1, grown);
      await sleep(3000);
      stop = true;
      await Promise.all(readers);

      console.info(`${polls} polls by ${READERS} readers every ${POLL_MS} ms; every reader was served the real log within ${toReal} ms of the first real import's end, the grown log within ${toGrown} ms of the write's end; ${namedGoingBack} answers named an older checkpoint than one named or served before them`);
      expect(failures).toEqual([]);
      expect(known.get(realOrigin)?.size).toBe(nights.length + 1);
      // The readers saw the demo log, then the real one, and no request sent after the real one was first served was answered with the demo log.
      const firstReal = served.find((s) => s.origin === realOrigin)!;
      expect(served.indexOf(firstReal)).toBeGreaterThan(0);
      expect(served.filter((s) => s.origin === demoOrigin && s.sentAt > firstReal.at)).toEqual([]);
    } finally {
      stop = true;
      await Promise.allSettled(readers);
    }
  }, 180_000);
});
