// A database node's disk fills up, under POSTGRES_HA=pg_auto_failover on this machine: each node's data
// directory is a tmpfs of its own (tests/support/nemesis-disk.ts), and a file fills it and keeps it
// full until space returns. The writer runs throughout (`run`, the fake Polymarket, a heartbeat every
// 0.25 s, so its heartbeats need a new page of their table within a minute) and nights are imported as
// an operator does.
//   The standby's disk: it can no longer take the primary's WAL, and the primary writes on alone. Only
//   what two nodes hold is signed or acknowledged, so nights imported meanwhile are stored and not
//   signed, the import does not report them as written, and health is degraded; once space returns the
//   standby catches up and signing resumes.
//   The primary's disk: every write that needs space fails with Postgres' "No space left on device",
//   which the import and the running writer report; once the heartbeats need space they stop, and
//   health turns degraded a minute later (writer_alive_minutes); once space returns everything resumes.
// Throughout, every night an import acknowledged and every heartbeat the writer logged as done is on
// the primary at the end, and on its standby.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, todayUtc } from '../../../contract/dates.ts';
import { API_PATHS } from '../../../contract/paths.ts';
import { idsOf } from '../../../stack/processes.ts';
import { EXIT_ONE_NODE, ONE_NODE } from '../../../writer/replication.ts';
import { query } from '../../support/db.ts';
import { haProbes, startHaStack, until } from '../../support/failover.ts';
import { fakeAccount } from '../../support/fake-polymarket-account.ts';
import { FakePolymarket, writerEnv as polymarketEnv } from '../../support/fake-polymarket.ts';
import { fillDisk, mountTmpfs, moveOntoTmpfs, unmount } from '../../support/nemesis-disk.ts';
import type { TestStack } from '../../support/stack.ts';
import { cliEnv, runCli, startCli } from '../../support/writer.ts';

/** Each node's disk: room for its cluster and some WAL, small enough to fill in a moment. */
const DISK_MB = 320;
const today = todayUtc();

let stack: TestStack;
let dataDir: string;
let fake: FakePolymarket;
let writer: ReturnType<typeof startCli> | undefined;
const { api, primaryIndex, stateOf } = haProbes(() => stack);
/** Every night an import acknowledged (exit 0). */
const acknowledged: string[] = [];

const nodeDir = (i: number) => path.join(dataDir, 'ha', `node${i + 1}`);
const env = (extra: Record<string, string> = {}) => cliEnv(stack, { WRITER_DATABASE_URL: stack.db.urlFor('stats_writer'), LOG_SIGNER_STATE: path.join(dataDir, 'log-signer.json'), ...extra });
const writerLines = () => (writer?.stdout() ?? '').split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, any>);
let lastHealth: unknown;
const health = async () => {
  lastHealth = await (await fetch(api() + API_PATHS.HEALTH, { headers: { apikey: stack.cfg.ANON_KEY } })).json();
  return (lastHealth as { status: string }).status;
};
const latestSize = async (i: number) => Number((await query<{ n: string | null }>(stack.ha!.nodeUrl(i), 'select max(size) as n from stats.log_checkpoint where not is_demo'))[0]!.n ?? 0);
const entries = async (i: number) => Number((await query<{ n: string }>(stack.ha!.nodeUrl(i), 'select count(*) as n from stats.log_entry where not is_demo'))[0]!.n);
const stored = async (i: number, dates: string[]) => (await query<{ date: string }>(stack.ha!.nodeUrl(i), "select to_char(date, 'YYYY-MM-DD') as date from stats.payout where to_char(date, 'YYYY-MM-DD') = any($1)", [dates])).map((r) => r.date);

/** Imports the final nights `days` days ago; records those acknowledged. */
async function importNights(days: number[]): Promise<{ code: number | null; output: string; dates: string[] }> {
  const dates = days.map((d) => addDays(today, -d));
  const run = await runCli(['import', '-'], env(), dates.map((date, i) => JSON.stringify({ type: 'payout', date, usd: 12 + (days[i]! % 7) + 0.5 })).join('\n') + '\n');
  if (run.code === 0) acknowledged.push(...dates);
  return { code: run.code, output: run.stdout + run.stderr, dates };
}

/** One primary and one caught-up standby, as the monitor assigned them. */
const settled = () => until('a primary and its caught-up standby', async () => {
  const states = await stack.ha!.states();
  return states.every((s) => s.reported === s.assigned) && states.map((s) => s.reported).sort().join() === 'primary,secondary';
}, 240_000, 500);

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'public-stats-disk-full-'));
  chmodSync(dataDir, 0o755);
  const ids = process.getuid?.() === 0 ? idsOf('postgres') : {};
  // The first node is made in its tmpfs; the second, a copy the first start makes, is moved onto one.
  mountTmpfs(nodeDir(0), DISK_MB, ids);
  stack = await startHaStack({ DATA_DIR: dataDir });
  await stack.ha!.nodes[1]!.stop();
  moveOntoTmpfs(nodeDir(1), DISK_MB, ids);
  await stack.ha!.nodes[1]!.start();
  await settled();
  // Health says a writer is gone after one minute without a heartbeat (5 by default), so a stopped writer shows within the test.
  await query(stack.db.adminUrl, 'update stats.settings set writer_alive_minutes = 1');
  fake = await new FakePolymarket(fakeAccount()).start();
  writer = startCli(['run'], env({ ...polymarketEnv(fake), WRITER_NAME: 'disk-writer', WRITER_HEARTBEAT_SECONDS: '0.25', WRITER_INTERVAL_MINUTES: '0.1', WRITER_LOG_LEVEL: 'debug' }));
  writer.child.stdin!.end();
  await until('health ok, the writer writing', async () => (await health()) === 'ok', 120_000, 1000);
}, 600_000);

afterAll(async () => {
  writer?.child.kill('SIGKILL');
  await writer?.result;
  await fake?.stop();
  await stack?.stop();
  for (const i of [0, 1]) unmount(nodeDir(i));
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}, 120_000);

describe('a full disk', () => {
  it('on the standby: the primary stores nights alone, signs and acknowledges none of them, says degraded, and signs them once the standby has them', async () => {
    const primary = await primaryIndex();
    const standby = 1 - primary;
    const sizeBefore = await latestSize(primary);
    const disk = fillDisk(nodeDir(standby));
    const filledAt = Date.now();
    const imports: Awaited<ReturnType<typeof importNights>>[] = [];
    try {
      await until('the standby out of the quorum', async () => (await stateOf(standby))?.assigned === 'catchingup', 120_000, 500);
      const outAfter = Date.now() - filledAt;
      for (const days of [200, 201, 202]) imports.push(await importNights([days]));
      console.log(`disk full on the standby: out of the quorum after ${outAfter} ms, reported ${(await stateOf(standby))?.reported}; the primary ${(await stateOf(primary))?.reported}; imports: ${
        imports.map((r) => `exit ${r.code} ${r.output.trim().split('\n').at(-1)}`).join(' | ')}`);
      for (const run of imports) {
        // Stored on the primary, and reported as such: on one node, not acknowledged.
        expect(await stored(primary, run.dates)).toEqual(run.dates);
        expect(run.code, run.output).toBe(EXIT_ONE_NODE);
        expect(run.output).toContain(ONE_NODE);
        expect(run.output).not.toMatch(/nothing was written/);
      }
      expect(await latestSize(primary), 'a checkpoint signed while only the primary held its entries').toBe(sizeBefore);
      await until('health degraded', async () => (await health()) === 'degraded', 30_000, 500);
    } finally {
      disk.release();
    }
    const releasedAt = Date.now();
    await settled();
    const settledAfter = Date.now() - releasedAt;
    // Signing resumes: every entry under a checkpoint, and every night on the standby.
    await until('every entry signed', async () => (await latestSize(primary)) === (await entries(primary)), 120_000, 500);
    console.log(`space back on the standby: caught up (secondary) after ${settledAfter} ms, every entry signed after ${Date.now() - releasedAt} ms`);
    const waited = imports.flatMap((r) => r.dates);
    await until('every night on the standby', async () => (await stored(standby, [...acknowledged, ...waited])).length === acknowledged.length + waited.length, 60_000, 1000);
  }, 600_000);

  it('on the primary: writes fail with "No space left on device", which the writer reports; health turns degraded; everything resumes once space returns', async () => {
    const primary = await primaryIndex();
    const days = Array.from({ length: 200 }, (_, i) => 300 + i);
    const mark = writerLines().length;
    const disk = fillDisk(nodeDir(primary));
    try {
      const failed = await importNights(days);
      expect(failed.code, failed.output).toBe(1);
      expect(failed.output).toMatch(/No space left on device/);
      expect(failed.output).toMatch(/nothing was written/);
      expect(await stored(primary, failed.dates)).toEqual([]);
      const filledAt = Date.now();
      const reported = await until('the running writer to report the full disk', async () =>
        writerLines().slice(mark).find((l) => /No space left on device/.test(JSON.stringify(l))), 120_000, 500);
      const beatFailed = await until('a heartbeat to fail for want of space', async () =>
        writerLines().slice(mark).find((l) => l.msg === 'heartbeat failed' && /No space left on device/.test(String(l.error))), 120_000, 500);
      await until('health degraded', async () => (await health()) === 'degraded', 180_000, 1000).catch(async (error: Error) => {
        const during = writerLines().slice(mark);
        throw new Error(`${error.message}: ${during.filter((l) => l.msg === 'heartbeat done').length} heartbeats done and ${during.filter((l) => l.msg === 'heartbeat failed').length} failed since the disk filled, the last: ${
          JSON.stringify(during.filter((l) => /heartbeat/.test(String(l.msg))).slice(-3))}; health: ${JSON.stringify(lastHealth)}; states: ${JSON.stringify(await stack.ha!.states())}`);
      });
      console.log(`disk full on the primary: the writer reported it after ${Date.parse(reported.ts) - filledAt} ms (${JSON.stringify(reported)}), `
        + `its heartbeats failed from ${Date.parse(beatFailed.ts) - filledAt} ms, health degraded after ${Date.now() - filledAt} ms`);
    } finally {
      disk.release();
    }
    await settled();
    const since = writerLines().length;
    await until('a heartbeat again', async () => writerLines().slice(since).some((l) => l.msg === 'heartbeat done'), 120_000, 1000);
    const again = await importNights(days);
    expect(again.code, again.output).toBe(0);
    const now = await primaryIndex();
    expect(await latestSize(now)).toBe(await entries(now));
    await until('health ok again', async () => (await health()) === 'ok', 120_000, 1000);
  }, 900_000);

  it('lost nothing acknowledged: every night and every heartbeat, on the primary and its standby', async () => {
    const primary = await primaryIndex();
    expect((await stored(primary, acknowledged)).sort()).toEqual([...new Set(acknowledged)].sort());
    const beats = writerLines().filter((l) => l.msg === 'heartbeat done').map((l) => new Date(String(l.note)).toISOString());
    const onPrimary = new Set((await query<{ at: Date }>(stack.ha!.nodeUrl(primary), "select at from stats.heartbeat where writer = 'disk-writer'")).map((r) => r.at.toISOString()));
    expect(beats.filter((b) => !onPrimary.has(b))).toEqual([]);
    await until('the standby to hold them too', async () => (await stored(1 - primary, acknowledged)).length === new Set(acknowledged).size, 60_000, 1000);
  }, 120_000);
});
