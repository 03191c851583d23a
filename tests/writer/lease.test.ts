// The writer lock is a lease: a holder that stops making progress loses it to a standby, within the
// 30 s the service promises, by Postgres ending the holder's session (idle_session_timeout), and the
// old holder writes nothing afterwards, even once it runs again. Real writer processes (the CLI,
// `run`) against a private stack; every write statement is recorded with the session's
// application_name (which names the writer) and the database's clock by statement triggers this test
// adds, so each write is attributed to its writer whatever the writer logs.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { todayUtc } from '../../contract/dates.ts';
import { APPLICATION_NAME_PREFIX } from '../../writer/lock.ts';
import { installWriteAudit, lockHolders as lockHoldersOf, resetAudited } from '../support/write-audit.ts';
import { query } from '../support/db.ts';
import { earning, fakeAccount } from '../support/fake-polymarket-account.ts';
import { FakePolymarket, writerEnv } from '../support/fake-polymarket.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { cliEnv, startWriterRun, until, type WriterRun } from '../support/writer.ts';

const T = todayUtc();
/** What the service promises: a standby writes within this long of the holder's stall. */
const TAKEOVER_LIMIT_MS = 30_000;

let stack: TestStack;
const started: WriterRun[] = [];

function writer(name: string, env: Record<string, string | undefined>): WriterRun {
  const w = startWriterRun(name, env);
  started.push(w);
  return w;
}

const logged = (w: WriterRun, msg: string | RegExp) => w.lines().find((l) => (typeof msg === 'string' ? l.msg === msg : msg.test(l.msg)));
const dbNow = async () => (await query<{ t: Date }>(stack.db.adminUrl, 'select clock_timestamp() as t'))[0]!.t;
const heartbeatsOf = (name: string, after: Date) =>
  query<{ at: Date }>(stack.db.adminUrl, 'select at from stats.heartbeat where writer = $1 and at > $2 order by at', [name, after]);
const writesOf = (name: string, after: Date) =>
  query<{ at: Date; tbl: string }>(stack.db.adminUrl, 'select at, tbl from public.write_audit where app = $1 and at > $2 order by at', [`${APPLICATION_NAME_PREFIX}${name}`, after]);
const lockHolders = async () => (await lockHoldersOf(stack.db.adminUrl)).map((h) => h.app);
const sessionsOf = async (name: string) =>
  (await query(stack.db.adminUrl, 'select pid from pg_stat_activity where application_name = $1', [`${APPLICATION_NAME_PREFIX}${name}`])).length;
const LOST = 'lost the writer lock: writing nothing until it holds the lock again, which it asks for after a pause that lets a standby take over';

beforeAll(async () => {
  stack = await startTestStack();
  await installWriteAudit(stack.db.adminUrl);
}, 120_000);

beforeEach(() => resetAudited(stack));

/** Ends every writer a test started; a stopped one is continued first, so none outlives its test. */
async function endWriters() {
  for (const w of started.splice(0)) {
    if (w.child.exitCode === null && w.child.signalCode === null) {
      w.child.kill('SIGCONT');
      w.child.kill('SIGKILL');
    }
    await w.result;
  }
}

afterEach(endWriters);

afterAll(async () => {
  await endWriters();
  await stack?.destroy();
});

describe('the writer lock is a lease', () => {
  it('a stopped holder (kill -STOP) loses it to the standby within 30 s; continued, it writes nothing and says it lost the lock', async () => {
    const env = cliEnv(stack, { WRITER_SOURCE: 'demo', WRITER_INTERVAL_MINUTES: String(2 / 60), WRITER_HEARTBEAT_SECONDS: '1' });
    const a = writer('lease-a', env);
    await until('the first writer to hold the lock', () => logged(a, 'holding the writer lock: this writer writes'));
    const b = writer('lease-b', env);
    await until('the second writer to wait as standby', () => logged(b, 'another writer holds the writer lock: waiting as standby'));
    // The holder is at work: heartbeats and cycles.
    const aStart = await dbNow();
    await until('three heartbeats of the holder', async () => (await heartbeatsOf(a.name, aStart)).length >= 3);
    await until('a cycle of the holder', () => logged(a, 'cycle done'));

    const stoppedAt = await dbNow();
    try {
      a.child.kill('SIGSTOP');
      const bFirst = await until('the standby\'s first heartbeat', async () => (await heartbeatsOf(b.name, stoppedAt))[0]?.at, TAKEOVER_LIMIT_MS + 5_000);
      const takeoverMs = bFirst.getTime() - stoppedAt.getTime();
      console.log(`takeover: ${takeoverMs} ms after kill -STOP of the holder`);
      expect(takeoverMs).toBeLessThanOrEqual(TAKEOVER_LIMIT_MS);
      // The server ended the stopped holder's session: the lock is the standby's, and the old holder has no session left.
      expect(await lockHolders()).toEqual([`${APPLICATION_NAME_PREFIX}${b.name}`]);
      expect(await sessionsOf(a.name)).toBe(0);
    } finally {
      a.child.kill('SIGCONT');
    }
    const continuedAt = await dbNow();

    // Continued, its timers fire at once (heartbeat, lease renewal): it says it lost the lock, and why.
    const lost = await until('the old holder to say it lost the lock', () => logged(a, LOST), 15_000);
    expect(lost.writer).toBe(a.name);
    expect(lost.reason).toMatch(/idle-session timeout/);
    await until('the old holder to wait as standby behind the new one', () =>
      a.lines().slice(a.lines().indexOf(lost)).find((l) => l.msg === 'another writer holds the writer lock: waiting as standby' && l.active === b.name), 15_000);
    // Several of its heartbeat intervals go by.
    await new Promise((r) => setTimeout(r, 5_000));

    expect(await heartbeatsOf(a.name, stoppedAt)).toEqual([]);
    expect(await writesOf(a.name, stoppedAt)).toEqual([]);
    // The new holder was not disturbed: it kept the lock and went on writing after the old one woke.
    expect(await lockHolders()).toEqual([`${APPLICATION_NAME_PREFIX}${b.name}`]);
    expect((await heartbeatsOf(b.name, continuedAt)).length).toBeGreaterThan(0);
    expect(a.child.exitCode).toBeNull();
  }, 90_000);

  it('a live holder stuck in a step gives the lock up to the standby after WRITER_STALL_SECONDS, though its heartbeats go on', async () => {
    const fake = await new FakePolymarket(fakeAccount({
      earnings: [earning(T, 1, 12.5)], chainBalance: 5_000_000_000n, cachedBalance: '5000000000',
    })).start();
    try {
      const env = cliEnv(stack, {
        ...writerEnv(fake),
        POLYMARKET_TIMEOUT_MS: '120000', POLYMARKET_RETRY_BASE_MS: '20', POLYMARKET_RETRIES: '2',
        WRITER_INTERVAL_MINUTES: String(2 / 60), WRITER_HEARTBEAT_SECONDS: '1', WRITER_STALL_SECONDS: '4',
      });
      // The first breadth read hangs for a minute: the cycle that makes it is stuck.
      fake.fail('/data/orders', { status: 0, delayMs: 60_000 });
      const a = writer('stuck-a', env);
      await until('the first writer inside its breadth read', () => fake.requests.some((r) => r.path === '/data/orders'));
      const stuckAt = await dbNow();
      const b = writer('stuck-b', env);
      await until('the second writer to wait as standby', () => logged(b, 'another writer holds the writer lock: waiting as standby'));
      // Its heartbeats go on beside the stuck cycle...
      await until('a heartbeat of the stuck writer', async () => (await heartbeatsOf(a.name, stuckAt)).length > 0);
      // ...yet it gives the lock up once the cycle has run too long.
      const gaveUp = await until('the stuck writer to give the lock up', () => logged(a, /^a writer step has made no progress for too long/), 20_000);
      expect(gaveUp.stalled_seconds).toBeGreaterThanOrEqual(4);
      const lost = await until('the stuck writer to say it lost the lock', () => logged(a, LOST), 10_000);
      expect(lost.reason).toMatch(/a step made no progress for \d+ s/);
      const bFirst = await until('the standby\'s first heartbeat', async () => (await heartbeatsOf(b.name, stuckAt))[0]?.at);
      await until('a cycle of the new holder', () => logged(b, 'cycle done'));
      expect(await lockHolders()).toEqual([`${APPLICATION_NAME_PREFIX}${b.name}`]);
      // Nothing of the stuck writer after the standby's first write.
      await new Promise((r) => setTimeout(r, 3_000));
      expect(await writesOf(a.name, bFirst)).toEqual([]);
      expect(a.child.exitCode).toBeNull();
    } finally {
      await fake.stop();
    }
  }, 90_000);
});
