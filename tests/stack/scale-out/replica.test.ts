// A read replica serving the API role: a second node (PostgREST, edge, nginx) over a streaming
// replica made by pg_basebackup -R from the stack's primary, while the writer writes on the primary.
// Its answers catch up with the primary's, it says the same bytes as the primary's node once they
// have, and its health tells the truth about lag: with replay paused (pg_wal_replay_pause), a write
// on the primary makes the replica's lag grow and its status degrade; resumed, it recovers. Cut off
// from the primary (its role may not log in, its walsender is ended), health says at once that it
// is not streaming; its slot keeps what the primary writes meanwhile, and reconnected it catches up.
// Past the slot's cap the primary gives the slot up, and the replica, started again, copies it anew.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, todayUtc } from '../../../contract/dates.ts';
import { API_PATHS, SITE_PATHS } from '../../../contract/paths.ts';
import { ROOT_DIR } from '../../../config/checkout.ts';
import { REPLICATION_ROLE, SLOT_WAL_CAP } from '../../../stack/database.ts';
import { freePort, waitUntil } from '../../../stack/processes.ts';
import { DEFAULT_REPLICA_SLOT, openReplica } from '../../../stack/replica.ts';
import { supervise } from '../../../stack/supervisor.ts';
import { CACHED_PATHS, CODINGS, expectSameAnswers } from '../../support/nodes.ts';
import { query } from '../../support/db.ts';
import { startTestNode, startTestReplica, startTestStack, type TestNode, type TestReplica, type TestStack } from '../../support/stack.ts';
import { cliEnv, runCli } from '../../support/writer.ts';

let stack: TestStack;
let replica: TestReplica;
let node: TestNode;
const today = todayUtc();

/** Writes through the real writer CLI (`npm run writer -- import -`), on the primary. */
async function importEvents(events: object[]) {
  const result = await runCli(['import', '-'], cliEnv(stack), events.map((e) => JSON.stringify(e)).join('\n') + '\n');
  expect(result.code, result.stderr).toBe(0);
}
const justNow = () => new Date(Date.now() - 1000).toISOString();
/** What keeps health "ok": a fresh accrual and a writer heartbeat. */
const signsOfLife = () => [{ type: 'accrual', at: justNow(), usd: 3.5, markets: 4 }, { type: 'heartbeat', at: justNow() }];

const one = async <T>(url: string, sql: string, values: unknown[] = []) => (await query<{ v: T }>(url, sql, values))[0]!.v;

type Health = { status: string; checked_at: string; data: { replica_lag_seconds: number | null; replica_streaming: boolean | null } | null };
const healthVia = async (apiOrigin: string): Promise<Health> =>
  (await fetch(apiOrigin + API_PATHS.HEALTH, { headers: { apikey: stack.cfg.ANON_KEY } })).json() as Promise<Health>;
const apiOf = (cfg: TestNode['cfg']) => `http://${cfg.bindHost}:${cfg.apiPort}`;
const siteOf = (cfg: TestNode['cfg']) => `http://${cfg.bindHost}:${cfg.sitePort}`;
const statsVia = async (origin: string, init: RequestInit = {}) => {
  const res = await fetch(origin + API_PATHS.STATS, { ...init, headers: { apikey: stack.cfg.ANON_KEY, ...init.headers } });
  expect(res.status).toBe(200);
  return res.text();
};

/** Whether the replica's WAL receiver streams, as the superuser sees it. */
const streams = () => one<boolean>(replica.adminUrl, `select exists (select from pg_stat_wal_receiver where status = 'streaming') as v`);
/** Cuts the replica off its primary: its role may no longer log in, and its walsender is ended. */
async function cutOff() {
  await query(stack.db.adminUrl, `alter role ${REPLICATION_ROLE} nologin`);
  await query(stack.db.adminUrl, 'select pg_terminate_backend(pid) from pg_stat_replication where usename = $1', [REPLICATION_ROLE]);
  await waitUntil('the replica to stop streaming', async () => !(await streams()), 10_000);
}
const reconnect = () => query(stack.db.adminUrl, `alter role ${REPLICATION_ROLE} login`);
type Slot = { active: boolean; wal_status: string | null; restart_lsn: string | null };
const slotOnPrimary = async () => (await query<Slot>(stack.db.adminUrl,
  'select active, wal_status, restart_lsn::text from pg_replication_slots where slot_name = $1', [DEFAULT_REPLICA_SLOT]))[0];
/** Fills `segments` WAL segments on the primary (a record each, then a switch), then checkpoints. */
async function writeWal(segments: number) {
  for (let i = 0; i < segments; i++) {
    await query(stack.db.adminUrl, `select pg_logical_emit_message(false, 'replica-test', 'filler')`);
    await query(stack.db.adminUrl, 'select pg_switch_wal()');
  }
  await query(stack.db.adminUrl, 'checkpoint');
}
const lastNightOn = async (url: string) => (await one<Record<string, unknown>>(url, 'select public.landing_stats() as v')).last_night_usd;

beforeAll(async () => {
  stack = await startTestStack();
  const events: object[] = [];
  for (let i = 40; i >= 1; i--) {
    const date = addDays(today, -i);
    events.push({ type: 'payout', date, usd: 30 + (i % 7) + 0.5 });
    if (i % 2) events.push({ type: 'trading_cost', date, usd: (i % 5) - 2 });
    events.push({ type: 'capital', at: `${date}T12:00:00Z`, cash_usd: 4000 + i, inventory_usd: 120.25, positions: 3 });
  }
  await importEvents([...events, ...signsOfLife()]);
  replica = await startTestReplica(stack);
  node = await startTestNode(stack, { authenticatorUrl: replica.urlFor('authenticator'), replica: true });
}, 180_000);

afterAll(async () => {
  await node?.destroy();
  await replica?.destroy();
  await stack?.destroy();
});

describe('a streaming read replica', () => {
  it('is a hot standby of the primary: it answers reads and refuses writes and LISTEN', async () => {
    expect(await one(stack.db.adminUrl, 'select pg_is_in_recovery() as v')).toBe(false);
    expect(await one(replica.adminUrl, 'select pg_is_in_recovery() as v')).toBe(true);
    // The copy carries the primary's roles and passwords: PostgREST's login works on it.
    expect(await one(replica.urlFor('authenticator'), 'select current_user as v')).toBe('authenticator');
    await expect(query(replica.adminUrl, `insert into stats.heartbeat values (now())`)).rejects.toThrow(/read-only transaction/);
    // Why the replica's PostgREST runs with its notification channel off.
    await expect(query(replica.adminUrl, 'listen pgrst')).rejects.toThrow(/cannot execute LISTEN during recovery/);
  });

  it("serves landing_stats through its own node by GET and by POST (a STABLE function runs read-only), equal to the primary's", async () => {
    const primary = JSON.parse(await statsVia(apiOf(stack.cfg)));
    expect(primary.daily).toHaveLength(16);
    expect(JSON.parse(await statsVia(apiOf(node.cfg)))).toEqual(primary);
    const posted = await statsVia(apiOf(node.cfg), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(JSON.parse(posted)).toEqual(primary);
    // And from its PostgREST directly, past the gateway's cache.
    const direct = await fetch(`http://${node.cfg.bindHost}:${node.cfg.postgrestPort}/rpc/landing_stats`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(direct.status).toBe(200);
    expect(await direct.json()).toEqual(primary);
  });

  it("shows a write made by the writer on the primary once it is replayed: its landing_stats then equals the primary's", async () => {
    const before = await statsVia(apiOf(node.cfg));
    await importEvents([{ type: 'payout', date: today, usd: 77.77 }, ...signsOfLife()]);
    const primary = await one<Record<string, unknown>>(stack.db.adminUrl, 'select public.landing_stats() as v');
    expect(primary).toMatchObject({ last_night_date: today, last_night_usd: 77.77 });
    await waitUntil('the replica to replay the write', async () =>
      JSON.stringify(await one(replica.adminUrl, 'select public.landing_stats() as v')) === JSON.stringify(primary), 20_000);
    // Through the replica's node (its gateway's 5 s microcache may first serve the record from before).
    await waitUntil("the replica's node to serve the new record", async () => JSON.parse(await statsVia(apiOf(node.cfg))).last_night_usd === 77.77, 20_000);
    const served = await statsVia(apiOf(node.cfg));
    expect(served).not.toBe(before);
    expect(JSON.parse(served)).toEqual(primary);
    // Caught up: no lag on the replica, and none is reported by the primary at all.
    expect((await healthVia(apiOf(node.cfg))).data!.replica_lag_seconds).toBe(0);
    expect((await healthVia(apiOf(stack.cfg))).data!.replica_lag_seconds).toBeNull();
  });

  it("answers every cached record in every coding with the primary node's bytes and validators, signed so that both verify", async () => {
    const compared = await expectSameAnswers(stack.cfg, node.cfg, { site: stack.cfg.siteUrl, api: stack.cfg.apiUrl });
    expect(compared).toBe(CACHED_PATHS.length * CODINGS.length);
  }, 60_000);

  it('says how far behind it is: with replay paused a write makes its lag grow and its status degrade; resumed, it recovers', async () => {
    // A bound of 2 s (a setting of the database, written on the primary like any other).
    await query(stack.db.adminUrl, 'update stats.settings set replica_lag_max_seconds = 2');
    await importEvents(signsOfLife());
    await waitUntil('the setting to reach the replica', async () => (await one(replica.adminUrl, 'select replica_lag_max_seconds as v from stats.settings')) === 2, 20_000);
    const ok = await healthVia(apiOf(node.cfg));
    expect(ok).toMatchObject({ status: 'ok', data: { replica_lag_seconds: 0 } });

    await query(replica.adminUrl, 'select pg_wal_replay_pause()');
    await waitUntil('replay to pause', async () => (await one(replica.adminUrl, 'select pg_get_wal_replay_pause_state() as v')) === 'paused', 10_000);
    await importEvents([{ type: 'payout', date: today, usd: 88.88 }, ...signsOfLife()]);
    const received = async () => one<boolean>(replica.adminUrl, 'select pg_last_wal_receive_lsn() > pg_last_wal_replay_lsn() as v');
    await waitUntil('the replica to receive the write it does not replay', received, 10_000);

    // The lag passes the bound and keeps growing while replay stays paused.
    let lagging: Health | undefined;
    await waitUntil('the replica to report its lag', async () => {
      lagging = await healthVia(apiOf(node.cfg));
      return lagging.status === 'degraded';
    }, 10_000);
    const first = lagging!.data!.replica_lag_seconds!;
    expect(first).toBeGreaterThan(2);
    await sleep(2100);
    const later = await healthVia(apiOf(node.cfg));
    expect(later.status).toBe('degraded');
    expect(later.data!.replica_lag_seconds!).toBeGreaterThanOrEqual(first + 2);
    // The replica still serves the record from before the write, while the primary has moved on.
    expect((await one<Record<string, unknown>>(replica.adminUrl, 'select public.landing_stats() as v')).last_night_usd).toBe(77.77);
    expect((await healthVia(apiOf(stack.cfg)))).toMatchObject({ status: 'ok', data: { replica_lag_seconds: null } });

    // With the clock pinned, the figure is exactly the age of the last replayed commit, and the bound is exact.
    const replayedAt = await one<Date>(replica.adminUrl, 'select pg_last_xact_replay_timestamp() as v');
    const at = (seconds: number) => one<Health>(replica.adminUrl, 'select stats.health_at($1) as v', [new Date(replayedAt.getTime() + seconds * 1000 + 500)]);
    expect(await at(10)).toMatchObject({ status: 'degraded', data: { replica_lag_seconds: 10 } });
    expect(await at(2)).toMatchObject({ status: 'ok', data: { replica_lag_seconds: 2 } });
    expect(await at(3)).toMatchObject({ status: 'degraded', data: { replica_lag_seconds: 3 } });

    // The site host of the replica's node says so too: /api/health, and the page in both forms.
    await waitUntil('the site host to report the lag', async () => {
      const site = await (await fetch(siteOf(node.cfg) + SITE_PATHS.SITE_HEALTH)).json() as Health;
      return site.status === 'degraded' && (site.data?.replica_lag_seconds ?? 0) > 2;
    }, 10_000);
    const page = await (await fetch(siteOf(node.cfg) + SITE_PATHS.HOME)).text();
    expect(page).toMatch(/Served by a read replica of the database whose data trails the primary by at most \d+ s\./);
    const markdown = await (await fetch(siteOf(node.cfg) + SITE_PATHS.INDEX_MD)).text();
    expect(markdown).toMatch(/- Served by a read replica of the database whose data trails the primary by at most \d+ s\./);

    await query(replica.adminUrl, 'select pg_wal_replay_resume()');
    await waitUntil('the replica to catch up and be ok again', async () => {
      const h = await healthVia(apiOf(node.cfg));
      return h.status === 'ok' && h.data?.replica_lag_seconds === 0;
    }, 20_000);
    expect((await one<Record<string, unknown>>(replica.adminUrl, 'select public.landing_stats() as v')).last_night_usd).toBe(88.88);
    expect(await one(replica.adminUrl, 'select public.landing_stats() as v')).toEqual(await one(stack.db.adminUrl, 'select public.landing_stats() as v'));
  }, 90_000);

  it('is served by `npm start` with NODE_DATABASE_URL: only a node (PostgREST, edge, nginx), which finds the replica a replica', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'public-stats-node-'));
    chmodSync(dir, 0o755);
    try {
      const envFile = path.join(dir, 'env');
      const run = async (fileLines: string[]) => {
        writeFileSync(envFile, fileLines.join('\n') + '\n');
        const env: Record<string, string> = {
          PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? dir, ENV_FILE: envFile, DATA_DIR: dir, NGINX_WORKERS: '1',
          NODE_DATABASE_URL: replica.urlFor('authenticator'),
        };
        for (const name of ['API_PORT', 'SITE_PORT', 'EDGE_PORT', 'POSTGREST_PORT', 'POSTGREST_ADMIN_PORT']) env[name] = String(await freePort());
        const child = spawn(process.execPath, [path.join(ROOT_DIR, 'stack', 'start.ts')], { cwd: ROOT_DIR, env, stdio: ['ignore', 'pipe', 'pipe'] });
        let output = '';
        child.stdout!.on('data', (c: Buffer) => { output += c.toString(); });
        child.stderr!.on('data', (c: Buffer) => { output += c.toString(); });
        const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
        return { child, env, exited, output: () => output };
      };

      // Without the first machine's keys and public URLs it refuses, and makes none up.
      const keyless = await run(['NGINX_WORKERS=1']);
      expect(await keyless.exited).toBe(1);
      expect(keyless.output().trim()).toBe('Start-up failed: NODE_DATABASE_URL runs one more node of a service that exists already, with its keys and public URLs, and JWT_SECRET, ANON_KEY, HTTP_SIG_PRIVATE_KEY, LOG_PUBLIC_KEY, SITE_URL, API_URL are not set: copy the first machine\'s .env here, then start again.');
      expect(readFileSync(envFile, 'utf8')).toBe('NGINX_WORKERS=1\n');

      // With them (the first machine's .env, copied), it serves the replica's records.
      const { cfg } = stack;
      const node = await run([`JWT_SECRET=${cfg.JWT_SECRET}`, `ANON_KEY=${cfg.ANON_KEY}`, `HTTP_SIG_PRIVATE_KEY=${cfg.HTTP_SIG_PRIVATE_KEY}`, `LOG_PUBLIC_KEY=${cfg.LOG_PUBLIC_KEY}`, `SITE_URL=${cfg.siteUrl}`, `API_URL=${cfg.apiUrl}`]);
      await waitUntil('the node to start', async () => node.output().includes('is running') || node.child.exitCode !== null, 60_000);
      expect(node.output()).toContain('Public Stats Service node is running (Ctrl-C stops it): PostgREST, the edge and nginx over a read replica');
      const recorded = JSON.parse(readFileSync(path.join(dir, 'processes.json'), 'utf8')) as { name: string }[];
      expect(recorded.map((g) => g.name).sort()).toEqual(['edge', 'nginx', 'postgrest']);
      const api = `http://127.0.0.1:${node.env.API_PORT}`;
      expect(JSON.parse(await statsVia(api))).toEqual(await one(stack.db.adminUrl, 'select public.landing_stats() as v'));
      expect((await healthVia(api)).data!.replica_lag_seconds).toBe(0);
      node.child.kill('SIGTERM');
      expect(await node.exited).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);

  it('is copied once: stopped and started again, it runs from its own cluster, still a standby', async () => {
    await replica.stop();
    await replica.start();
    expect(replica.logs.filter((line) => line.includes('copying the primary'))).toHaveLength(1);
    expect(await one(replica.adminUrl, 'select pg_is_in_recovery() as v')).toBe(true);
    await importEvents(signsOfLife());
    const writer = async (url: string) => JSON.stringify((await one<{ writer: unknown }>(url, 'select public.landing_health() as v')).writer);
    const primary = await writer(stack.db.adminUrl);
    await waitUntil('the restarted replica to stream the new heartbeat', async () => (await writer(replica.adminUrl)) === primary, 20_000);
  });

  it("says at once when it is cut off from its primary: not streaming, degraded, its lag the age of its last replayed commit; reconnected, it recovers", async () => {
    await query(stack.db.adminUrl, 'update stats.settings set replica_lag_max_seconds = 60');
    await importEvents(signsOfLife());
    // Streaming: read through landing_health, a definer function of stats_owner, which may not read the
    // WAL receiver's status itself.
    await waitUntil('the replica to be ok and streaming', async () => {
      const h = await healthVia(apiOf(node.cfg));
      return h.status === 'ok' && h.data?.replica_streaming === true && h.data.replica_lag_seconds === 0;
    }, 20_000);
    expect((await healthVia(apiOf(stack.cfg))).data).toMatchObject({ replica_streaming: null, replica_lag_seconds: null });

    await cutOff();
    try {
      await sleep(1100);
      // One probe of the API host (which does not cache health) tells.
      const cut = await healthVia(apiOf(node.cfg));
      expect(cut).toMatchObject({ status: 'degraded', data: { replica_streaming: false } });
      // Not 0, though all it received is replayed: the age of its last replayed commit, from before the cut.
      expect(cut.data!.replica_lag_seconds).toBeGreaterThanOrEqual(1);
      // With the clock pinned: well within the bound, and still degraded, for it is not streaming.
      const replayedAt = await one<Date>(replica.adminUrl, 'select pg_last_xact_replay_timestamp() as v');
      const pinned = await one<Health>(replica.adminUrl, 'select stats.health_at($1) as v', [new Date(replayedAt.getTime() + 30_500)]);
      expect(pinned).toMatchObject({ status: 'degraded', data: { replica_lag_seconds: 30, replica_streaming: false } });
      // The site host (past the edge's health cache) and the page say so too.
      await waitUntil('the site host to say the replica is not streaming', async () => {
        const site = await (await fetch(siteOf(node.cfg) + SITE_PATHS.SITE_HEALTH)).json() as Health;
        return site.status === 'degraded' && site.data?.replica_streaming === false;
      }, 15_000);
      await waitUntil('the page to say so', async () => (await (await fetch(siteOf(node.cfg) + SITE_PATHS.HOME)).text())
        .includes("Served by a read replica of the database that is not receiving the primary&#39;s changes; its data trails the primary by at most"), 15_000);
    } finally {
      await reconnect();
    }
    await waitUntil('the replica to stream again and be ok', async () => {
      const h = await healthVia(apiOf(node.cfg));
      return h.status === 'ok' && h.data?.replica_streaming === true && h.data.replica_lag_seconds === 0;
    }, 30_000);
  }, 90_000);

  it('keeps its slot on the primary while cut off, and catches up by itself with what the primary wrote meanwhile', async () => {
    expect(await slotOnPrimary()).toMatchObject({ active: true, wal_status: 'reserved' });
    await cutOff();
    try {
      await importEvents([{ type: 'payout', date: today, usd: 99.99 }, ...signsOfLife()]);
      // Segments enough, and a checkpoint, for the primary to recycle what the replica needs, but for the slot.
      await writeWal(3);
      const slot = (await slotOnPrimary())!;
      expect(slot).toMatchObject({ active: false, wal_status: 'reserved' });
      const files = await query<{ name: string }>(stack.db.adminUrl, 'select name from pg_ls_waldir()');
      const needed = await one<string>(stack.db.adminUrl, 'select pg_walfile_name($1::pg_lsn) as v', [slot.restart_lsn]);
      const current = await one<string>(stack.db.adminUrl, 'select pg_walfile_name(pg_current_wal_lsn()) as v');
      expect(current > needed).toBe(true);
      expect(files.map((f) => f.name)).toContain(needed);
      expect(await lastNightOn(replica.adminUrl)).not.toBe(99.99);
    } finally {
      await reconnect();
    }
    await waitUntil('the replica to catch up', async () => (await lastNightOn(replica.adminUrl)) === 99.99, 30_000);
    expect(await one(replica.adminUrl, 'select public.landing_stats() as v')).toEqual(await one(stack.db.adminUrl, 'select public.landing_stats() as v'));
    expect(await slotOnPrimary()).toMatchObject({ active: true, wal_status: 'reserved' });
    await waitUntil('the replica to be ok and streaming', async () => {
      const h = await healthVia(apiOf(node.cfg));
      return h.status === 'ok' && h.data?.replica_streaming === true;
    }, 20_000);
  }, 90_000);

  it('past the cap, the primary gives its slot up; started again, the replica copies the primary anew and streams', async () => {
    const copies = () => replica.logs.filter((line) => line.includes('copying the primary')).length;
    const before = copies();
    await cutOff();
    try {
      // A cap of 1 MB, smaller than one segment: the next checkpoint gives the slot up.
      await query(stack.db.adminUrl, `alter system set max_slot_wal_keep_size = '1MB'`);
      await query(stack.db.adminUrl, 'select pg_reload_conf()');
      await importEvents([{ type: 'payout', date: today, usd: 111.11 }, ...signsOfLife()]);
      await writeWal(3);
      expect(await slotOnPrimary()).toMatchObject({ active: false, wal_status: 'lost', restart_lsn: null });
    } finally {
      await query(stack.db.adminUrl, `alter system set max_slot_wal_keep_size = '${SLOT_WAL_CAP}'`);
      await query(stack.db.adminUrl, 'select pg_reload_conf()');
      await reconnect();
    }
    // Reconnected, it cannot catch up: the WAL it needs is gone.
    await sleep(8000);
    expect(await lastNightOn(replica.adminUrl)).not.toBe(111.11);
    expect(await one(replica.adminUrl, 'select pg_is_in_recovery() as v')).toBe(true);

    await replica.stop();
    await replica.start();
    expect(replica.logs.join('\n')).toContain(`db-replica: the primary has lost the slot ${DEFAULT_REPLICA_SLOT}, so this copy cannot catch up`);
    expect(copies()).toBe(before + 1);
    expect(await lastNightOn(replica.adminUrl)).toBe(111.11);
    expect(await slotOnPrimary()).toMatchObject({ active: true, wal_status: 'reserved' });
    // The old copy, moved aside, is gone once the new one is in place.
    const cluster = await one<string>(replica.adminUrl, "select current_setting('data_directory') as v");
    expect(readdirSync(path.dirname(cluster))).toEqual([path.basename(cluster)]);
    await importEvents(signsOfLife());
    await waitUntil('the new copy to stream and be ok', async () => {
      const h = await healthVia(apiOf(node.cfg));
      return h.status === 'ok' && h.data?.replica_streaming === true && h.data.replica_lag_seconds === 0;
    }, 30_000);
  }, 120_000);

  it('says why when it cannot copy the primary, and leaves no half-made copy', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'public-stats-replica-'));
    chmodSync(dir, 0o755);
    const logs: string[] = [];
    const log = (line: string) => logs.push(line);
    try {
      await expect(openReplica({ ...stack.cfg, dataDir: dir }, {
        primaryUrl: stack.db.adminUrl, replicationPassword: 'not-the-password', dir: path.join(dir, 'replica'), port: await freePort(), log,
        supervise: (name, launch) => supervise(name, launch, { log, onGiveUp: log }),
      })).rejects.toThrow(/postgres-replica exited during start-up/);
      expect(logs.join('\n')).toMatch(/password authentication failed for user "stats_replicator"/);
      expect(readdirSync(path.join(dir, 'replica'))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

