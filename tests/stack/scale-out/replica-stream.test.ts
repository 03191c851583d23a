// The read replica's link with its primary: copied once; cut off, it says so at once and its slot keeps
// what the primary writes, so it catches up; past the slot's cap the primary gives the slot up and the
// replica, started again, copies it anew; a copy that cannot be made says why and leaves nothing behind.
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SITE_PATHS } from '../../../contract/paths.ts';
import { REPLICATION_ROLE, SLOT_WAL_CAP } from '../../../stack/database.ts';
import { freePort, waitUntil } from '../../../stack/processes.ts';
import { DEFAULT_REPLICA_SLOT, openReplica } from '../../../stack/replica.ts';
import { supervise } from '../../../stack/supervisor.ts';
import { query } from '../../support/db.ts';
import { apiOf, one, replicaTools, signsOfLife, siteOf, startReplicaSetup, stopReplicaSetup, today, type Health } from '../../support/replica.ts';
import type { TestNode, TestReplica, TestStack } from '../../support/stack.ts';

let stack: TestStack;
let replica: TestReplica;
let node: TestNode;
const { importEvents, healthVia } = replicaTools(() => stack);

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
  ({ stack, replica, node } = await startReplicaSetup());
}, 180_000);

afterAll(() => stopReplicaSetup({ stack, replica, node }));

describe('a streaming read replica', () => {
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
