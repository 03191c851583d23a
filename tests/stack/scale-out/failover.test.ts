// Losing a machine under POSTGRES_HA=pg_auto_failover. The standby's first: reads move to the primary
// and never hang. Then the primary's: its postgres and its keeper are killed with SIGKILL (and kept
// down, as a dead machine stays down) while the writer is in the middle of a transaction.
// pg_auto_failover promotes the standby; the writer reconnects through its multi-host URL and writes
// again; no commit the writer saw acknowledged is lost; reads never hang; the transparency log never
// forks and no node serves a smaller log than it did; while the new primary runs alone an import is
// written on one node and neither acknowledged nor signed (exit 3); the old primary rejoins as a
// standby, where a writer refuses the lock, and the nights are then signed. The figures measured here are the ones docs/scale-out.md gives.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, todayUtc } from '../../../contract/dates.ts';
import { API_PATHS, SITE_PATHS } from '../../../contract/paths.ts';
import { ROOT_DIR } from '../../../config/checkout.ts';
import type { HaDatabase } from '../../../stack/ha.ts';
import { EXIT_ONE_NODE, ONE_NODE } from '../../../writer/replication.ts';
import { query } from '../../support/db.ts';
import { haProbes, sleep, startHaStack, until } from '../../support/failover.ts';
import { fakeAccount } from '../../support/fake-polymarket-account.ts';
import { FakePolymarket, writerEnv as polymarketEnv } from '../../support/fake-polymarket.ts';
import type { TestStack } from '../../support/stack.ts';
import { cliEnv, runCli, startCli } from '../../support/writer.ts';

const run = promisify(execFile);
const today = todayUtc();
const HEARTBEAT_SECONDS = 2;
/** How long the test instrument holds each heartbeat's transaction open, so a kill can land inside one. */
const HEARTBEAT_HOLD_SECONDS = 1.5;

let stack: TestStack;
let ha: HaDatabase;
let dir: string;
let fake: FakePolymarket;
const started: ReturnType<typeof startCli>[] = [];

const site = () => `http://${stack.cfg.bindHost}:${stack.cfg.sitePort}`;
const { api, primaryIndex, postgrestSessions, stateOf } = haProbes(() => stack);

/** The writer CLI's environment: every node in one multi-host URL, and one signer state file across the failover. */
const writerEnv = (extra: Record<string, string> = {}) => cliEnv(stack, {
  WRITER_DATABASE_URL: stack.db.urlFor('stats_writer'),
  LOG_SIGNER_STATE: path.join(dir, 'log-signer.json'),
  ...extra,
});

/** Final nights (three days old and more) imported through the writer CLI: each import signs a larger checkpoint. */
async function importNights(from: number, to: number): Promise<void> {
  const events = [];
  for (let i = from; i >= to; i--) events.push({ type: 'payout', date: addDays(today, -i), usd: 20 + (i % 9) + 0.25 });
  const result = await runCli(['import', '-'], writerEnv(), events.map((e) => JSON.stringify(e)).join('\n') + '\n');
  expect(result.code, result.stdout + result.stderr).toBe(0);
}

const writable = async (i: number) =>
  (await query<{ ro: string }>(ha.nodeUrl(i), "select current_setting('transaction_read_only') as ro"))[0]?.ro === 'off';

/** The newest real checkpoint a database node holds, read on that node alone. */
const nodeCheckpoint = async (i: number) =>
  (await query<{ size: string; note: string }>(ha.nodeUrl(i), 'select size, note from stats.log_checkpoint where not is_demo order by size desc limit 1'))[0];

/** The Go reference check (golang.org/x/mod/sumdb/tlog): the log as served now, and that it extends `oldFile`. */
async function tlogcheck(vkey: string, oldFile: string): Promise<{ size: number; extends?: number }> {
  const { stdout } = await run('go', ['run', './tests/go/tlogcheck', '-log', site() + SITE_PATHS.LOG.replace(/\/$/, ''), '-vkey', vkey, '-old', oldFile], {
    cwd: ROOT_DIR,
    env: { ...process.env, GO111MODULE: 'off', GOPATH: '/usr/share/gocode', GOCACHE: path.join(tmpdir(), 'public-stats-go-cache') },
  });
  return JSON.parse(stdout) as { size: number; extends?: number };
}

interface Read { path: string; status: number | 'hung'; retryAfter: string | null; json: boolean; ms: number }

/**
 * Reads the service every 250 ms until stopped, as a client would: /api/stats on the site host and
 * landing_health on the API host, each given 15 s before it counts as hung.
 */
function pollReads(): { stop(): Promise<Read[]> } {
  let polling = true;
  const reads: Read[] = [];
  const done = (async () => {
    while (polling) {
      for (const [origin, p, headers] of [[site(), SITE_PATHS.SITE_STATS, {}], [api(), API_PATHS.HEALTH, { apikey: stack.cfg.ANON_KEY }]] as const) {
        const t0 = Date.now();
        try {
          const res = await fetch(origin + p, { headers, signal: AbortSignal.timeout(15_000) });
          const body = await res.text();
          let json = true;
          try { JSON.parse(body); } catch { json = false; }
          reads.push({ path: p, status: res.status, retryAfter: res.headers.get('retry-after'), json, ms: Date.now() - t0 });
        } catch {
          reads.push({ path: p, status: 'hung', retryAfter: null, json: false, ms: Date.now() - t0 });
        }
      }
      await sleep(250);
    }
  })();
  return { stop: async () => { polling = false; await done; return reads; } };
}

/** Every read answered: a 200, or a JSON 503 with Retry-After; none hung. Returns the statuses counted, for the log. */
function expectAnswered(reads: Read[]): string {
  expect(reads.length).toBeGreaterThan(10);
  expect(reads.filter((r) => !(r.status === 200 || (r.status === 503 && r.json && r.retryAfter !== null)))).toEqual([]);
  const counts = new Map<string, number>();
  for (const r of reads) counts.set(`${r.path} ${r.status}`, (counts.get(`${r.path} ${r.status}`) ?? 0) + 1);
  return `${[...counts].map(([what, n]) => `${n} × ${what}`).join(', ')}, slowest ${Math.max(...reads.map((r) => r.ms))} ms`;
}

/** Node `i`'s machine lost: its postmaster and its keeper's process group killed, the keeper kept down until started again. */
async function loseNode(i: number): Promise<number> {
  const postmaster = Number(readFileSync(path.join(stack.cfg.dataDir, 'ha', `node${i + 1}`, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const keeper = ha.nodes[i]!.child!.process.pid!;
  const at = Date.now();
  process.kill(postmaster, 'SIGKILL');
  process.kill(-keeper, 'SIGKILL');
  await ha.nodes[i]!.stop();
  return at;
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'public-stats-failover-'));
  stack = await startHaStack();
  ha = stack.ha!;
  // Test instrument: every heartbeat holds its transaction open a moment, so the kill below lands
  // inside a writer transaction rather than between two.
  await query(stack.db.adminUrl, `
    create function public.hold_heartbeat() returns trigger language plpgsql as $$
    begin perform pg_sleep(${HEARTBEAT_HOLD_SECONDS}); return null; end $$;
    create trigger hold_heartbeat after insert on stats.heartbeat for each statement execute function public.hold_heartbeat();`);
  await importNights(60, 20);
  // The writer that runs through the failover reads its account from a local fake of Polymarket's APIs.
  fake = await new FakePolymarket(fakeAccount()).start();
}, 300_000);

afterAll(async () => {
  for (const w of started) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
  await Promise.all(started.map((w) => w.result));
  await fake?.stop();
  await stack?.destroy();
  rmSync(dir, { recursive: true, force: true });
});

describe('automatic failover (pg_auto_failover)', () => {
  it('reads from the standby, and from the primary while the standby is lost', async () => {
    const primary = await primaryIndex();
    const standby = 1 - primary;
    await fetch(api() + API_PATHS.HEALTH, { headers: { apikey: stack.cfg.ANON_KEY } });
    expect(await postgrestSessions(standby)).toBeGreaterThan(0);
    expect(await postgrestSessions(primary)).toBe(0);

    const reads = pollReads();
    await sleep(1000);
    const lostAt = await loseNode(standby);
    // PostgREST's sessions on the lost standby fail; it connects anew, and prefer-standby finds only the primary.
    await until('PostgREST reading from the primary', async () => (await postgrestSessions(primary)) > 0, 60_000, 250);
    const fellBackMs = Date.now() - lostAt;
    await sleep(3000);
    const answered = expectAnswered(await reads.stop());
    console.log(`standby lost: PostgREST on the primary ${fellBackMs} ms after; reads ${answered}`);
    const health = await (await fetch(api() + API_PATHS.HEALTH, { headers: { apikey: stack.cfg.ANON_KEY } })).json() as { data: { replica_streaming: boolean | null } };
    // Answered by the primary now: no replica figures.
    expect(health.data.replica_streaming).toBeNull();

    // Back, it catches up as a standby, and the primary replicates synchronously again.
    await ha.nodes[standby]!.start();
    await until('the standby to replicate again', async () => (await stateOf(standby))?.reported === 'secondary' && (await stateOf(primary))?.reported === 'primary', 180_000, 500);
  }, 300_000);

  it('promotes the standby when the primary\'s postgres and keeper are killed mid-transaction; no acknowledged commit is lost, reads never hang, the log never forks', async () => {
    const vkey = /note verifier key \(C2SP signed-note\) is `([^`]+)`/.exec(await (await fetch(site() + SITE_PATHS.LLMS_TXT)).text())![1]!;
    const writer = startCli(['run'], writerEnv({
      ...polymarketEnv(fake), WRITER_NAME: 'ha-writer', WRITER_HEARTBEAT_SECONDS: String(HEARTBEAT_SECONDS), WRITER_LOG_LEVEL: 'debug',
    }));
    started.push(writer);
    writer.child.stdin!.end();
    const lines = () => writer.stdout().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, any>);
    await until('the writer to hold the lock and write heartbeats', async () => lines().filter((l) => l.msg === 'heartbeat done').length >= 2, 60_000);

    // Pollers, from before the kill until the end: the service's reads, and the log as every source serves it.
    let polling = true;
    const served = new Map<string, { size: number; note: string }[]>();
    const see = (source: string, size: number, note: string) => {
      const seen = served.get(source) ?? [];
      if (seen.at(-1)?.note !== note) seen.push({ size, note });
      served.set(source, seen);
    };
    const reads = pollReads();
    const pollLog = (async () => {
      while (polling) {
        const res = await fetch(site() + SITE_PATHS.LOG_CHECKPOINT, { signal: AbortSignal.timeout(15_000) }).catch(() => undefined);
        if (res?.status === 200) {
          const note = await res.text();
          see('site', Number(note.split('\n')[1]), note);
        }
        for (const i of [0, 1]) {
          const c = await nodeCheckpoint(i).catch(() => undefined);
          if (c) see(`node${i + 1}`, Number(c.size), c.note);
        }
        await sleep(300);
      }
    })();

    // The kill lands while the writer's backend is inside a transaction on the primary.
    const old = await primaryIndex();
    expect(old).toBeGreaterThanOrEqual(0);
    await until('a writer transaction in flight on the primary', async () =>
      (await query(ha.nodeUrl(old), "select 1 from pg_stat_activity where application_name = 'stats-writer ha-writer' and xact_start is not null and state = 'active'")).length > 0, 30_000, 20);
    const acknowledgedBefore = lines().filter((l) => l.msg === 'heartbeat done').length;
    // The log as the primary held it at the kill: 41 nights, and the wallet entry of the Polymarket source's commitment once the writer has run.
    const sizeAtKill = Number((await nodeCheckpoint(old))!.size);
    // A dead machine stays down: its keeper is not restarted until the test brings it back.
    const killedAt = await loseNode(old);
    const standby = 1 - old;

    await until('the standby to take writes', () => writable(standby), 120_000, 250);
    const promotedMs = Date.now() - killedAt;
    const resumed = await until('a heartbeat on the new primary', async () =>
      (await query<{ at: Date }>(ha.nodeUrl(standby), "select max(at) as at from stats.heartbeat where writer = 'ha-writer' and at > $1", [new Date(killedAt)]))[0]?.at, 180_000, 250);
    const heartbeatsResumedMs = resumed.getTime() - killedAt;
    await sleep(3000);
    polling = false;
    const answered = expectAnswered(await reads.stop());
    await pollLog;
    console.log(`failover: standby writable ${promotedMs} ms after the kill; heartbeats again after ${heartbeatsResumedMs} ms; `
      + `${acknowledgedBefore} heartbeats acknowledged before it; reads ${answered}`);
    expect(acknowledgedBefore).toBeGreaterThan(0);
    expect(promotedMs).toBeLessThanOrEqual(60_000);
    expect(heartbeatsResumedMs).toBeLessThanOrEqual(90_000);

    // Every heartbeat the writer saw committed before the kill is on the new primary (the kill may
    // have taken the one in flight, never one it was told had committed).
    const [kept] = await query<{ n: string }>(ha.nodeUrl(standby), "select count(*) as n from stats.heartbeat where writer = 'ha-writer' and at <= $1", [new Date(killedAt)]);
    expect(Number(kept!.n)).toBeGreaterThanOrEqual(acknowledgedBefore);
    expect(lines().some((l) => /lost the writer lock/.test(l.msg))).toBe(true);

    // The log, as every source served it: sizes never went back, and (after the writer stops and more
    // nights are signed on the new primary) each checkpoint served is a prefix of the newest, by Go's tlog.
    writer.child.kill('SIGTERM');
    await writer.result;
    // With the old primary down, the new one runs alone (wait_primary): an import is stored there but
    // neither acknowledged nor signed, and says so. Once the old primary is back as its standby, the
    // nights are acknowledged and signed, the one that waited among them.
    const alone = await runCli(['import', '-'], writerEnv(), `${JSON.stringify({ type: 'payout', date: addDays(today, -19), usd: 20 + (19 % 9) + 0.25 })}\n`);
    expect(alone.stdout + alone.stderr).toMatch(new RegExp(`the import was ${ONE_NODE}`));
    expect(alone.code).toBe(EXIT_ONE_NODE);
    await ha.nodes[old]!.start();
    await until('the old primary to rejoin as a standby', async () => (await stateOf(old))?.reported === 'secondary' && (await stateOf(standby))?.reported === 'primary', 180_000, 500);
    await importNights(19, 3);
    // Every entry the new primary holds: the 58 nights, and the wallet entry the Polymarket source's
    // commitment added while the writer ran.
    const held = Number((await query<{ n: string }>(ha.nodeUrl(standby), 'select max(idx) + 1 as n from stats.log_entry'))[0]!.n);
    expect(held).toBeGreaterThanOrEqual(58);
    // Signed on the new primary, and held by its standby, the old primary.
    await until('the old primary to hold the newest checkpoint', async () => (await nodeCheckpoint(old))?.size === String(held), 30_000, 250);
    const newest = await until('the site to serve the newest checkpoint', async () => {
      const note = await (await fetch(site() + SITE_PATHS.LOG_CHECKPOINT)).text();
      return Number(note.split('\n')[1]) === held && note;
    }, 30_000);
    expect(Number(newest.split('\n')[1])).toBe(held);
    const all = new Map<string, number>();
    for (const [source, seen] of served) {
      expect(seen.length, `${source} served a checkpoint`).toBeGreaterThan(0);
      const sizes = seen.map((s) => s.size);
      expect(sizes, `sizes ${source} served`).toEqual([...sizes].sort((a, b) => a - b));
      for (const s of seen) all.set(s.note, s.size);
    }
    expect(sizeAtKill).toBeGreaterThanOrEqual(41);
    expect([...all.values()]).toContain(sizeAtKill);
    for (const [note, size] of all) {
      const file = path.join(dir, `served-${size}.checkpoint`);
      writeFileSync(file, note);
      const check = await tlogcheck(vkey, file);
      expect(check).toMatchObject({ size: held, extends: size });
    }
    const health = await (await fetch(api() + API_PATHS.HEALTH, { headers: { apikey: stack.cfg.ANON_KEY } })).json() as { log: { halted: string | null; size: number } };
    expect(health.log).toMatchObject({ halted: null, size: held });

    // The old primary, back as a standby of the new one, holds the log, and a writer pointed at it refuses the lock.
    const [rejoined] = await query<{ r: boolean }>(ha.nodeUrl(old), 'select pg_is_in_recovery() as r');
    expect(rejoined!.r).toBe(true);
    const refused = await runCli(['sign'], writerEnv({ WRITER_DATABASE_URL: ha.nodeUrl(old, 'stats_writer') }));
    expect(refused.code, refused.stdout + refused.stderr).not.toBe(0);
    expect(refused.stdout + refused.stderr).toMatch(/recovery|standby|read-only|read-write/i);
  }, 600_000);

});
