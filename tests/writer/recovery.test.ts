// The writer and a standby server: a streaming replica of a private stack's database (in recovery,
// as the standby of a failover pair is). Through a list of hosts the writer finds the primary
// (target_session_attrs=read-write or primary); pointed at the standby alone it takes no writer lock
// there, though Postgres would grant one, and says why.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase } from '../../db-client/pg-connect.ts';
import { LOCK_TIMEOUTS, STANDBY_ADVICE, WRITER_LOCK_KEY } from '../../writer/lock.ts';
import { query } from '../support/db.ts';
import { startTestReplica, startTestStack, type TestReplica, type TestStack } from '../support/stack.ts';
import { cliEnv, runCli, startCli } from '../support/writer.ts';

let stack: TestStack;
let replica: TestReplica;
let primaryUrl: URL;
let standbyUrl: URL;

/** The writer role's URL over the standby's and the primary's host, in that order. */
const bothHosts = (params: string) => `postgres://${primaryUrl.username}:${primaryUrl.password}@${standbyUrl.host},${primaryUrl.host}${primaryUrl.pathname}${params}`;
const writerLocks = (url: string) => query(url, `select pid from pg_locks where locktype = 'advisory' and classid = $1 and objid = $2 and objsubid = 2`, [...WRITER_LOCK_KEY]);

beforeAll(async () => {
  stack = await startTestStack();
  replica = await startTestReplica(stack);
  primaryUrl = new URL(stack.db.urlFor('stats_writer'));
  standbyUrl = new URL(replica.urlFor('stats_writer'));
}, 180_000);

afterAll(async () => {
  await replica?.destroy();
  await stack?.destroy();
});

describe('a standby server', () => {
  it('is passed over under read-write and primary, and taken under any', async () => {
    const portOf = async (url: string) => {
      const client = await connectDatabase(url, { applicationName: 'recovery-test', timeouts: LOCK_TIMEOUTS });
      try {
        return (await client.query<{ port: number; recovery: boolean }>('select inet_server_port() as port, pg_is_in_recovery() as recovery')).rows[0];
      } finally {
        await client.end();
      }
    };
    expect(await portOf(bothHosts('?target_session_attrs=read-write'))).toEqual({ port: Number(primaryUrl.port), recovery: false });
    expect(await portOf(bothHosts('?target_session_attrs=primary'))).toEqual({ port: Number(primaryUrl.port), recovery: false });
    expect(await portOf(bothHosts(''))).toEqual({ port: Number(standbyUrl.port), recovery: true });
    await expect(connectDatabase(`${standbyUrl.href}?target_session_attrs=read-write`, { applicationName: 'recovery-test', timeouts: LOCK_TIMEOUTS }))
      .rejects.toThrow(`${standbyUrl.host}: it is a standby (in recovery)`);
  });

  it('a one-shot command pointed at it takes no lock, writes nothing and says why', async () => {
    const once = await runCli(['once'], cliEnv(stack, { WRITER_SOURCE: 'demo', WRITER_DATABASE_URL: standbyUrl.href, WRITER_NAME: 'on-standby' }));
    expect(once.code, once.stdout + once.stderr).toBe(1);
    expect(once.stdout).toContain(`once: ${STANDBY_ADVICE}.`);
    expect(await writerLocks(replica.adminUrl)).toEqual([]);
    expect(await query(stack.db.adminUrl, 'select count(*)::int as n from stats.heartbeat')).toEqual([{ n: 0 }]);
  });

  it('a running writer pointed at it waits for a primary, holding no lock there', async () => {
    const run = startCli(['run'], cliEnv(stack, { WRITER_SOURCE: 'demo', WRITER_DATABASE_URL: standbyUrl.href, WRITER_NAME: 'run-on-standby', WRITER_HEARTBEAT_SECONDS: '1' }));
    run.child.stdin!.end();
    try {
      const deadline = Date.now() + 15_000;
      while (!run.stdout().includes(STANDBY_ADVICE) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      // It asks every second: a few more rounds, none of which may take the lock.
      await new Promise((r) => setTimeout(r, 3_000));
      expect(await writerLocks(replica.adminUrl)).toEqual([]);
    } finally {
      run.child.kill('SIGTERM');
    }
    const result = await run.result;
    const said = result.lines.find((l) => typeof l.msg === 'string' && l.msg.startsWith(STANDBY_ADVICE));
    expect(said).toMatchObject({ level: 'warn', writer: 'run-on-standby' });
    expect(result.lines.filter((l) => l.msg === 'holding the writer lock: this writer writes')).toEqual([]);
  });

  it('given both hosts with target_session_attrs=read-write, a writer writes on the primary', async () => {
    const once = await runCli(['once'], cliEnv(stack, { WRITER_SOURCE: 'demo', WRITER_DATABASE_URL: bothHosts('?target_session_attrs=read-write'), WRITER_NAME: 'via-list' }));
    expect(once.code, once.stdout + once.stderr).toBe(0);
    expect(await query(stack.db.adminUrl, "select count(*)::int as n from stats.heartbeat where writer = 'via-list'")).toEqual([{ n: 1 }]);
    const status = await runCli(['status'], cliEnv(stack, { WRITER_DATABASE_URL: bothHosts('?target_session_attrs=read-write') }));
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toHaveProperty('active_writer', null);
  });

  // Last: it stops the stack's primary for good.
  it('after the primary stops and the standby is promoted, a running writer finds the new primary through its list and writes there', async () => {
    const url = `postgres://${primaryUrl.username}:${primaryUrl.password}@${primaryUrl.host},${standbyUrl.host}${primaryUrl.pathname}?target_session_attrs=read-write`;
    const run = startCli(['run'], cliEnv(stack, { WRITER_SOURCE: 'demo', WRITER_DATABASE_URL: url, WRITER_NAME: 'failover', WRITER_HEARTBEAT_SECONDS: '1', WRITER_INTERVAL_MINUTES: String(2 / 60) }));
    run.child.stdin!.end();
    const heartbeatsOn = async (adminUrl: string) => (await query<{ n: number }>(adminUrl, "select count(*)::int as n from stats.heartbeat where writer = 'failover'"))[0]!.n;
    const until = async (what: string, probe: () => Promise<boolean>, timeoutMs = 30_000) => {
      const deadline = Date.now() + timeoutMs;
      while (!(await probe())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${run.stdout()}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    try {
      await until('a heartbeat on the primary', async () => (await heartbeatsOn(stack.db.adminUrl)) > 0);
      await stack.db.stop();
      await query(replica.adminUrl, 'select pg_promote()');
      const before = await heartbeatsOn(replica.adminUrl);
      await until('heartbeats on the promoted standby', async () => (await heartbeatsOn(replica.adminUrl)) >= before + 2);
    } finally {
      run.child.kill('SIGTERM');
    }
    const result = await run.result;
    const msgs = result.lines.map((l) => l.msg);
    const lost = msgs.indexOf('lost the writer lock: writing nothing until it holds the lock again, which it asks for after a pause that lets a standby take over');
    expect(lost).toBeGreaterThan(0);
    expect(msgs.slice(lost)).toContain('holding the writer lock: this writer writes');
    expect(await writerLocks(replica.adminUrl)).toEqual([]);
  }, 90_000);
});
