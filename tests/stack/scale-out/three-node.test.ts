// The three-node layout of the high-availability mode (POSTGRES_THIRD_NODE_PORT): a pg_auto_failover
// monitor, a primary and two standbys, number_sync_standbys 1, so every commit waits for one of the
// two standbys to flush it. With one standby down the primary stays synchronous with the other and
// writing goes on, each night imported and signed; with both down it holds every commit rather than
// turning asynchronous (pg_auto_failover 2.0 moves the primary to wait_primary only when
// number_sync_standbys is 0); and with the primary lost, a standby that holds every acknowledged
// night takes over. The nodes run on this machine, on loopback, as `npm start` runs them.
import path from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, todayUtc } from '../../../contract/dates.ts';
import { freePort } from '../../../stack/processes.ts';
import { query } from '../../support/db.ts';
import { haProbes, loseNode, sleep, startHaStack, until } from '../../support/failover.ts';
import type { TestStack } from '../../support/stack.ts';
import { cliEnv, runCli, startCli } from '../../support/writer.ts';

let stack: TestStack;
let dir: string;
const { primaryIndex, stateOf } = haProbes(() => stack);
const today = todayUtc();
let serial = 100;

const monitorUrl = () => `postgres://autoctl_node@${stack.cfg.bindHost}:${stack.ha!.ports.monitor}/pg_auto_failover`;
const writerEnv = () => cliEnv(stack, { WRITER_DATABASE_URL: stack.db.urlFor('stats_writer'), LOG_SIGNER_STATE: path.join(dir, 'log-signer.json') });
const nightLine = (days: number) => `${JSON.stringify({ type: 'payout', date: addDays(today, -days), usd: 10 + (days % 13) + 0.5 })}\n`;
const syncNames = async (i: number) => (await query<{ s: string }>(stack.ha!.nodeUrl(i), "select current_setting('synchronous_standby_names') as s"))[0]!.s;
const latestSize = async (i: number) => Number((await query<{ n: string | null }>(stack.ha!.nodeUrl(i), 'select max(size) as n from stats.log_checkpoint where not is_demo'))[0]!.n ?? 0);
const holds = async (i: number, date: string) => (await query(stack.ha!.nodeUrl(i), 'select 1 from stats.payout where date = $1', [date])).length === 1;

/** Imports one new final night through the writer CLI; resolves with its exit code and the night's date. */
async function importNight(): Promise<{ code: number | null; date: string; output: string }> {
  const days = serial++;
  const run = await runCli(['import', '-'], writerEnv(), nightLine(days));
  return { code: run.code, date: addDays(today, -days), output: run.stdout + run.stderr };
}

/**
 * Watches the primary `i` every 250 ms until stopped: every synchronous_standby_names it had, and every
 * state the monitor reported or assigned it.
 */
function watchPrimary(i: number): { stop(): Promise<{ names: Set<string>; states: Set<string> }> } {
  let watching = true;
  const names = new Set<string>();
  const states = new Set<string>();
  const done = (async () => {
    while (watching) {
      await syncNames(i).then((n) => names.add(n), () => {});
      const state = await stateOf(i).catch(() => undefined);
      if (state) states.add(state.reported).add(state.assigned);
      await sleep(250);
    }
  })();
  return { stop: async () => { watching = false; await done; return { names, states }; } };
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'public-stats-three-node-'));
  stack = await startHaStack({ POSTGRES_THIRD_NODE_PORT: String(await freePort()) });
}, 400_000);

afterAll(async () => {
  await stack?.destroy();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 120_000);

describe('the three-node layout (two standbys, number_sync_standbys 1)', () => {
  let primary = -1;
  let standbys: number[] = [];

  it('runs a primary and two standbys; every commit waits for either standby', async () => {
    await until('a primary and two standbys', async () => (await stack.ha!.states()).map((s) => s.reported).sort().join() === 'primary,secondary,secondary', 120_000, 500);
    const [formation] = await query<{ n: number }>(monitorUrl(), "select number_sync_standbys as n from pgautofailover.formation where formationid = 'default'");
    expect(formation!.n).toBe(1);
    primary = await primaryIndex();
    standbys = [0, 1, 2].filter((i) => i !== primary);
    expect(await syncNames(primary)).toMatch(/^ANY 1 \(pgautofailover_standby_\d+, pgautofailover_standby_\d+\)$/);
    expect((await query<{ c: string }>(stack.ha!.nodeUrl(primary), "select current_setting('synchronous_commit') as c"))[0]!.c).toBe('on');
    // Every client's URL lists the three nodes.
    for (const role of ['stats_writer', 'authenticator'] as const) expect(stack.db.urlFor(role).split('@')[1]!.split('/')[0]!.split(',')).toHaveLength(3);
    const first = await importNight();
    expect(first.code, first.output).toBe(0);
  }, 60_000);

  it('keeps writing and signing with one standby down, synchronous with the other throughout', async () => {
    const [lost, kept] = standbys as [number, number];
    const watch = watchPrimary(primary);
    try {
      const sizeBefore = await latestSize(primary);
      await loseNode(stack, lost);
      // The monitor takes the lost standby out of the quorum (catchingup), and keeps the primary a primary.
      await until('the monitor to see the standby gone', async () => (await stateOf(lost))?.assigned === 'catchingup', 60_000, 250);
      const written: string[] = [];
      for (let n = 0; n < 4; n++) {
        const started = Date.now();
        const night = await importNight();
        expect(night.code, night.output).toBe(0);
        expect(Date.now() - started).toBeLessThan(30_000);
        written.push(night.date);
      }
      const { names, states } = await watch.stop();
      // Never asynchronous: every value the primary had names a standby, and the monitor never moved it to wait_primary.
      expect([...names].filter((n) => !/^ANY 1 \(pgautofailover_standby_\d+(, pgautofailover_standby_\d+)?\)$/.test(n))).toEqual([]);
      expect([...states].filter((s) => s !== 'primary' && s !== 'apply_settings')).toEqual([]);
      // Each night signed, and on the standby that stayed.
      expect(await latestSize(primary)).toBeGreaterThanOrEqual(sizeBefore + written.length);
      for (const date of written) await until(`night ${date} on the standby that stayed`, () => holds(kept, date), 30_000);
    } finally {
      await watch.stop();
    }
  }, 180_000);

  it('holds a commit with both standbys down rather than turning asynchronous, and lets it through once one is back', async () => {
    const [lost, kept] = standbys as [number, number];
    const watch = watchPrimary(primary);
    try {
      await loseNode(stack, kept);
      await until('the monitor to see the second standby gone', async () => (await stateOf(kept))?.assigned === 'catchingup', 60_000, 250);
      const days = serial++;
      const date = addDays(today, -days);
      const held = startCli(['import', '-'], writerEnv());
      held.child.stdin!.end(nightLine(days));
      let returned = false;
      void held.result.then(() => { returned = true; });
      // The commit waits for a standby: 15 s with none, the import still under way.
      await until('the import\'s commit to wait for a standby', async () => !returned &&
        Number((await query<{ n: string }>(stack.ha!.nodeUrl(primary), "select count(*) as n from pg_stat_activity where wait_event = 'SyncRep'"))[0]!.n) > 0, 30_000, 250);
      await sleep(15_000);
      expect(returned).toBe(false);
      const { names, states } = await watch.stop();
      expect([...names].filter((n) => !n.startsWith('ANY 1 ('))).toEqual([]);
      expect([...states].filter((s) => s !== 'primary' && s !== 'apply_settings')).toEqual([]);
      // One standby back: the commit goes through, and the night is on it.
      await stack.ha!.nodes[lost]!.start();
      const result = await held.result;
      expect(result.code, result.stdout + result.stderr).toBe(0);
      await until(`night ${date} on the standby that came back`, () => holds(lost, date), 60_000);
    } finally {
      await watch.stop();
      for (const i of standbys) await stack.ha!.nodes[i]!.start();
    }
    await until('both standbys back in the quorum', async () => (await stack.ha!.states()).filter((s) => s.reported === 'secondary' && s.assigned === 'secondary').length === 2, 180_000, 500);
  }, 300_000);

  it('fails over to a standby holding every acknowledged night when the primary is lost', async () => {
    const nights = await query<{ date: string }>(stack.ha!.nodeUrl(primary), "select to_char(date, 'YYYY-MM-DD') as date from stats.payout order by date");
    const size = await latestSize(primary);
    const lostAt = await loseNode(stack, primary);
    const promoted = await until('a standby to take writes', async () => {
      for (const i of standbys) {
        const [row] = await query<{ ro: string }>(stack.ha!.nodeUrl(i), "select current_setting('transaction_read_only') as ro").catch(() => []);
        if (row?.ro === 'off') return i + 1;
      }
      return undefined;
    }, 120_000, 250) - 1;
    const promotedAt = Date.now();
    // Until the other standby follows it, the new primary runs as wait_primary, asynchronous: the
    // layout keeps commits synchronous with a standby down, not in that window (the writer's own rule does).
    const watch = watchPrimary(promoted);
    await until('the new primary and the other standby, synchronous again', async () => {
      const states = await stack.ha!.states();
      return states.filter((s) => s.reported === s.assigned && (s.reported === 'primary' || s.reported === 'secondary')).length === 2
        && (await syncNames(promoted)) !== '';
    }, 180_000, 100);
    const synchronousAt = Date.now();
    const window = await watch.stop();
    console.log(`three-node failover: node ${promoted + 1} took writes ${promotedAt - lostAt} ms after the primary was lost; its states ${[...window.states].join(', ')}; `
      + `synchronous_standby_names ${[...window.names].map((n) => JSON.stringify(n)).join(', ')}, named a standby ${synchronousAt - promotedAt} ms after it took writes`);
    const after = await query<{ date: string }>(stack.ha!.nodeUrl(promoted), "select to_char(date, 'YYYY-MM-DD') as date from stats.payout order by date");
    expect(after.map((n) => n.date)).toEqual(expect.arrayContaining(nights.map((n) => n.date)));
    expect(await latestSize(promoted)).toBeGreaterThanOrEqual(size);
    // The writer goes on there, and the log is signed on, not halted.
    const night = await importNight();
    expect(night.code, night.output).toBe(0);
    expect(await latestSize(promoted)).toBeGreaterThan(size);
    expect((await query(stack.ha!.nodeUrl(promoted), 'select 1 from stats.log_halt'))).toEqual([]);
  }, 300_000);
});
