// A read replica serving the API role: a second node (PostgREST, edge, nginx) over a streaming
// replica made by pg_basebackup -R from the stack's primary, while the writer writes on the primary.
// Its answers catch up with the primary's, it says the same bytes as the primary's node once they
// have, and its health tells the truth about lag: with replay paused (pg_wal_replay_pause), a write
// on the primary makes the replica's lag grow and its status degrade; resumed, it recovers. `npm start`
// with NODE_DATABASE_URL serves it as a node. Its link with the primary: replica-stream.test.ts.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_PATHS, SITE_PATHS } from '../../../contract/paths.ts';
import { ROOT_DIR } from '../../../config/checkout.ts';
import { freePort, waitUntil } from '../../../stack/processes.ts';
import { CACHED_PATHS, CODINGS, expectSameAnswers } from '../../support/nodes.ts';
import { query } from '../../support/db.ts';
import { apiOf, one, replicaTools, signsOfLife, siteOf, startReplicaSetup, stopReplicaSetup, today, type Health } from '../../support/replica.ts';
import type { TestNode, TestReplica, TestStack } from '../../support/stack.ts';

let stack: TestStack;
let replica: TestReplica;
let node: TestNode;
const { importEvents, healthVia } = replicaTools(() => stack);
const statsVia = async (origin: string, init: RequestInit = {}) => {
  const res = await fetch(origin + API_PATHS.STATS, { ...init, headers: { apikey: stack.cfg.ANON_KEY, ...init.headers } });
  expect(res.status).toBe(200);
  return res.text();
};

beforeAll(async () => {
  ({ stack, replica, node } = await startReplicaSetup());
}, 180_000);

afterAll(() => stopReplicaSetup({ stack, replica, node }));

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
});
