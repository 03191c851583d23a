// One writer, with a standby that takes over: real writer processes (the CLI, `run`) against a private
// stack. Every statement that writes a data table is recorded, with the session's application_name
// (which names the writer) and the database's clock, by statement triggers this test adds to its own
// database (tests/support/write-audit.ts), so each write is attributed to the writer that made it,
// whatever the writer logs.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { addDays, todayUtc } from '../../contract/dates.ts';
import { APPLICATION_NAME_PREFIX, WRITER_LOCK_KEY } from '../../writer/lock.ts';
import { installWriteAudit, lockHolders as lockHoldersOf, resetAudited } from '../support/write-audit.ts';
import { query } from '../support/db.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { earning, fakeAccount } from '../support/fake-polymarket-account.ts';
import { FakePolymarket, writerEnv } from '../support/fake-polymarket.ts';
import { cliEnv, runCli, startWriterRun, until, type WriterRun } from '../support/writer.ts';

const T = todayUtc();
const STANDBY_LOG_SECONDS = 3;

let stack: TestStack;
const started: WriterRun[] = [];

function writer(name: string | undefined, env: Record<string, string | undefined>): WriterRun {
  const w = startWriterRun(name, env);
  started.push(w);
  return w;
}

const logged = (w: WriterRun, msg: string, from = 0) => w.lines().slice(from).find((l) => l.msg === msg);
const dbNow = async () => (await query<{ t: Date }>(stack.db.adminUrl, 'select clock_timestamp() as t'))[0]!.t;
const heartbeats = () => query<{ at: Date; writer: string | null }>(stack.db.adminUrl, 'select at, writer from stats.heartbeat where writer is not null order by at');
const firstHeartbeatOf = async (name: string, after: Date) =>
  (await query<{ at: Date }>(stack.db.adminUrl, 'select min(at) as at from stats.heartbeat where writer = $1 and at > $2', [name, after]))[0]!.at ?? undefined;
/** Every write statement since the test began: when, on which table, and which writer's session made it. */
const writes = () => query<{ at: Date; tbl: string; op: string; app: string }>(stack.db.adminUrl, 'select at, tbl, op, app from public.write_audit order by at');
const appOf = (name: string) => `${APPLICATION_NAME_PREFIX}${name}`;
const lockHolders = () => lockHoldersOf(stack.db.adminUrl);

beforeAll(async () => {
  stack = await startTestStack();
  await installWriteAudit(stack.db.adminUrl);
}, 120_000);

beforeEach(() => resetAudited(stack));

afterAll(async () => {
  for (const w of started) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
  await Promise.all(started.map((w) => w.result));
  await stack?.destroy();
});

describe('one writer, with a standby', () => {
  it('the standby waits and says so; it takes over after kill -9 and after a dropped connection; the old writer never writes after losing the lock', async () => {
    const env = cliEnv(stack, {
      WRITER_SOURCE: 'demo', WRITER_INTERVAL_MINUTES: String(2 / 60), WRITER_HEARTBEAT_SECONDS: '1',
      WRITER_STANDBY_LOG_SECONDS: String(STANDBY_LOG_SECONDS),
    });
    const testStart = await dbNow();

    // The first writer, with no WRITER_NAME: it draws a random name, which its heartbeats carry.
    const a = writer(undefined, env);
    const holding = await until('the first writer to hold the lock', () => logged(a, 'holding the writer lock: this writer writes'));
    a.name = holding.writer;
    expect(a.name).toMatch(/^writer-[0-9a-f]{8}$/);
    await until('a heartbeat named after the first writer', async () => (await heartbeats()).some((h) => h.writer === a.name));
    expect((await lockHolders()).map((h) => h.app)).toEqual([appOf(a.name)]);

    // A second writer anywhere waits as a standby and says so, naming the active one.
    const b = writer('standby-b', env);
    const waiting = await until('the standby to say it waits', () => logged(b, 'another writer holds the writer lock: waiting as standby'));
    expect(waiting).toMatchObject({ writer: 'standby-b', active: a.name });

    // One-shot commands do not write beside a running writer: they say who holds the lock and exit 1.
    const once = await runCli(['once'], { ...env, WRITER_NAME: 'oneshot' });
    expect(once.code, once.stdout + once.stderr).toBe(1);
    expect(once.stdout).toContain(`another writer (${a.name}) holds the writer lock: once writes nothing while it runs`);
    const status = await runCli(['status'], env);
    expect(JSON.parse(status.stdout).active_writer).toBe(a.name);
    const health = await fetch(`${stack.cfg.apiUrl}/rest/v1/rpc/landing_health`, { headers: { apikey: stack.cfg.ANON_KEY } }).then((r) => r.json()) as Record<string, any>;
    expect(health.writer).toMatchObject({ alive: true, name: a.name });

    // While it waits it says so now and then (every WRITER_STANDBY_LOG_SECONDS), not on every try
    // (it asks every second).
    await new Promise((r) => setTimeout(r, 2.5 * STANDBY_LOG_SECONDS * 1000));
    const said = b.lines().filter((l) => /waiting as standby/.test(l.msg));
    const waitedSeconds = (Date.now() - Date.parse(said[0]!.ts)) / 1000;
    expect(said.length).toBeGreaterThanOrEqual(3);
    expect(said.length).toBeLessThanOrEqual(Math.floor(waitedSeconds / STANDBY_LOG_SECONDS) + 1);
    const gaps = said.slice(1).map((l, i) => Date.parse(l.ts) - Date.parse(said[i]!.ts));
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(STANDBY_LOG_SECONDS * 1000 - 100);
    expect(said.at(-1)).toMatchObject({ msg: 'still waiting as standby', active: a.name });
    // …and has written nothing, nor has the one-shot.
    expect((await writes()).filter((w) => w.app !== appOf(a.name))).toEqual([]);

    // The active writer's lock connection is dropped: the standby takes over, the old one stops writing.
    // droppedAt: just before the connection was dropped; goneAt: once its backend had ended.
    const [dropped] = await query<{ at: Date; pid: number }>(stack.db.adminUrl, `select clock_timestamp() as at, l.pid, pg_terminate_backend(l.pid) as ok
      from pg_locks l where l.locktype = 'advisory' and l.classid = $1 and l.objid = $2 and l.objsubid = 2 and l.granted`, [...WRITER_LOCK_KEY]);
    const droppedAt = dropped!.at;
    await until('the dropped backend to end', async () => (await query(stack.db.adminUrl, 'select 1 from pg_stat_activity where pid = $1', [dropped!.pid])).length === 0);
    const goneAt = await dbNow();
    const bFirst = await until('the standby\'s first heartbeat', () => firstHeartbeatOf('standby-b', droppedAt));
    const takeoverAfterDrop = bFirst.getTime() - droppedAt.getTime();
    expect(takeoverAfterDrop).toBeLessThan(30_000);
    const lost = await until('the old writer to say it lost the lock', () => logged(a, 'lost the writer lock: writing nothing until it holds the lock again, which it asks for after a pause that lets a standby take over'));
    const aLines = a.lines();
    const lostAt = aLines.indexOf(lost);
    await until('the old writer to wait as a standby', () => a.lines().slice(lostAt).find((l) => l.msg === 'another writer holds the writer lock: waiting as standby'));
    expect(a.lines().slice(lostAt).find((l) => l.msg === 'another writer holds the writer lock: waiting as standby')).toMatchObject({ active: 'standby-b' });
    // A few of the new writer's cycles and heartbeats go by.
    await until('three cycles of the new writer', () => b.lines().filter((l) => l.msg === 'cycle done').length >= 3);

    // The new writer is killed outright: the old one, waiting, takes over again.
    // killedAt: just before the kill; deadAt: once the process had exited and its lock was free.
    const killedAt = await dbNow();
    b.child.kill('SIGKILL');
    await b.result;
    await until('the killed writer\'s lock to be released', async () => !(await lockHolders()).some((h) => h.app === appOf('standby-b')));
    const deadAt = await dbNow();
    const aAgain = await until('the first writer\'s heartbeat after the kill', () => firstHeartbeatOf(a.name, killedAt));
    const takeoverAfterKill = aAgain.getTime() - killedAt.getTime();
    expect(takeoverAfterKill).toBeLessThan(30_000);
    await until('a cycle of the first writer after the kill', async () => (await writes()).some((w) => w.app === appOf(a.name) && w.tbl === 'accrual' && w.at > killedAt));
    const stoppedAt = await dbNow();
    a.child.kill('SIGTERM');
    const aRun = await a.result;
    expect(aRun.code).toBe(0);
    expect(aRun.lines.at(-1)).toMatchObject({ msg: 'writer stopped', writer: a.name });
    expect(await lockHolders()).toEqual([]);
    console.log(`takeover: ${takeoverAfterDrop} ms after the dropped connection, ${takeoverAfterKill} ms after kill -9`);

    // Attribution of every write: only the lock's holder wrote, at every moment.
    const all = await writes();
    expect(new Set(all.map((w) => w.app))).toEqual(new Set([appOf(a.name), appOf('standby-b')]));
    const byA = all.filter((w) => w.app === appOf(a.name));
    const byB = all.filter((w) => w.app === appOf('standby-b'));
    expect(byA.filter((w) => w.at > goneAt && w.at < killedAt)).toEqual([]); // the old writer wrote nothing after losing the lock
    expect(byB.filter((w) => w.at < droppedAt || w.at > deadAt)).toEqual([]); // the standby wrote only while it held it
    expect(byB.length).toBeGreaterThan(0);
    expect(byA.filter((w) => w.at > deadAt).length).toBeGreaterThan(0);
    const hb = await heartbeats();
    expect(hb.filter((h) => h.writer === a.name && h.at > droppedAt && h.at < killedAt)).toEqual([]);
    expect(hb.filter((h) => h.writer === 'standby-b' && (h.at < droppedAt || h.at > deadAt))).toEqual([]);
    expect(new Set(hb.map((h) => h.writer))).toEqual(new Set([a.name, 'standby-b']));
    expect(hb.every((h) => h.at >= testStart && h.at <= stoppedAt)).toBe(true);

    // No night skipped, nothing written twice: 45 consecutive nights, each recorded once and never
    // rewritten; the transparency log holds each final night once, in order.
    const nights = await query<{ date: string; rewritten: boolean }>(stack.db.adminUrl, 'select date, updated_at <> recorded_at as rewritten from stats.payout order by date');
    expect(nights.map((n) => n.date)).toEqual(Array.from({ length: 45 }, (_, i) => addDays(T, i - 44)));
    expect(nights.filter((n) => n.rewritten)).toEqual([]);
    const costs = await query<{ date: string }>(stack.db.adminUrl, 'select date from stats.trading_cost where updated_at = recorded_at order by date');
    expect(costs.map((c) => c.date)).toEqual(nights.map((n) => n.date));
    expect(await query(stack.db.adminUrl, 'select (select count(*)::int from stats.payout_correction) as p, (select count(*)::int from stats.trading_cost_correction) as c')).toEqual([{ p: 0, c: 0 }]);
    const log = await query<{ idx: string; date: string | null; kind: string | null; supersedes: string | null }>(stack.db.adminUrl,
      `select idx, date, entry::jsonb ->> 'kind' as kind, entry::jsonb ->> 'supersedes' as supersedes from stats.log_entry order by idx`);
    expect(log.map((e) => Number(e.idx))).toEqual(log.map((_, i) => i));
    // The wallet is committed once, first, however often the writers took turns.
    expect(log.filter((e) => e.kind !== null)).toEqual([{ idx: '0', date: null, kind: 'wallet', supersedes: null }]);
    expect(log.slice(1).map((e) => e.date)).toEqual(Array.from({ length: 42 }, (_, i) => addDays(T, i - 44)));
    expect(log.filter((e) => e.supersedes !== null)).toEqual([]);
  }, 120_000);
});

describe('the Polymarket source across a takeover', () => {
  const account = () => fakeAccount({
    // Activity days T-2 and T-1 are paid as the nights dated T-1 and T.
    earnings: [earning(addDays(T, -2), 1, 30.5), earning(addDays(T, -1), 1, 41.25), earning(T, 2, 3)],
    chainBalance: 5_000_000_000n,
    cachedBalance: '5000000000',
  });

  it('a writer killed before it reached the nights: the standby writes each of them once', async () => {
    const fake = await new FakePolymarket(account()).start();
    try {
      const env = cliEnv(stack, {
        ...writerEnv(fake),
        POLYMARKET_TIMEOUT_MS: '30000', POLYMARKET_RETRY_BASE_MS: '20', POLYMARKET_RETRIES: '2',
        WRITER_INTERVAL_MINUTES: String(2 / 60), WRITER_HEARTBEAT_SECONDS: '1',
      });
      // The first writer hangs in its breadth read (after the accrual, before the nights).
      fake.fail('/data/orders', { status: 0, delayMs: 20_000 });
      const first = writer('pm-first', env);
      await until('the first writer inside its breadth read', () => fake.requests.some((r) => r.path === '/data/orders'));
      const second = writer('pm-second', env);
      await until('the second writer to wait', () => logged(second, 'another writer holds the writer lock: waiting as standby'));
      // A backfill beside the running writer fails clearly and asks Polymarket nothing.
      const asked = fake.requests.length;
      const backfill = await runCli(['backfill', '--since', addDays(T, -3)], { ...env, WRITER_NAME: 'pm-backfill' });
      expect(backfill.code).toBe(1);
      expect(backfill.stdout).toContain('another writer (pm-first) holds the writer lock: backfill writes nothing while it runs; stop it (and its standby) first');
      expect(fake.requests.slice(asked).filter((r) => r.path === '/rewards/user/total')).toEqual([]);
      expect(await query(stack.db.adminUrl, 'select count(*)::int as n from stats.payout')).toEqual([{ n: 0 }]);

      const killedAt = await dbNow();
      first.child.kill('SIGKILL');
      await first.result;
      const deadAt = await dbNow();
      const took = await until('the second writer\'s first heartbeat', () => firstHeartbeatOf('pm-second', killedAt));
      expect(took.getTime() - killedAt.getTime()).toBeLessThan(30_000);
      console.log(`takeover (polymarket source): ${took.getTime() - killedAt.getTime()} ms after kill -9`);
      await until('two cycles of the second writer', () => second.lines().filter((l) => l.msg === 'cycle done').length >= 2);
      second.child.kill('SIGTERM');
      expect((await second.result).code).toBe(0);

      const nights = await query<{ date: string; usd: number; rewritten: boolean }>(stack.db.adminUrl,
        'select date, usd::float8 as usd, updated_at <> recorded_at as rewritten from stats.payout order by date');
      expect(nights).toEqual([{ date: addDays(T, -1), usd: 30.5, rewritten: false }, { date: T, usd: 41.25, rewritten: false }]);
      expect(await query(stack.db.adminUrl, 'select count(*)::int as n from stats.payout_correction')).toEqual([{ n: 0 }]);
      // The killed writer wrote before the kill only; every night came from the second writer.
      const all = await writes();
      expect(all.filter((w) => w.app === appOf('pm-first') && w.at > deadAt)).toEqual([]);
      // (The first writer's first write removed the demo rows there were none of: a DELETE on every table.)
      const nightWrites = all.filter((w) => w.tbl === 'payout' && w.op !== 'DELETE');
      expect(nightWrites.length).toBeGreaterThanOrEqual(4); // two nights in each of two cycles
      expect(nightWrites.filter((w) => w.app !== appOf('pm-second'))).toEqual([]);
      expect(all.filter((w) => w.app === appOf('pm-first')).map((w) => w.tbl)).toEqual(expect.arrayContaining(['heartbeat', 'accrual']));
    } finally {
      await fake.stop();
    }
  }, 90_000);
});
