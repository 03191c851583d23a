// Network partitions, for real, on one machine: the pg_auto_failover monitor and both Postgres nodes
// each in a network namespace of their own, two sides each with a writer and a reader of a node of the
// service, joined by bridges in a switch namespace (tests/support/partition-cluster.ts, netns.ts).
// Each scenario cuts the network (or kills the primary, or cuts the writers off from the witness)
// while both sides write and read, shows the fault did what it must (a dial across it fails while it
// is in force; the standby promoted, or every write held, or writes going on unwitnessed), heals it,
// waits for the old primary to come back as a standby, and checks the whole run's history so far
// (tests/support/partition-checker.ts): nothing acknowledged at any time lost, every checkpoint served,
// signed or cosigned a prefix of the surviving log, no overlapping acknowledgements, health answering
// 200 on both sides throughout, every reader alive, the log not halted, and signed and cosigned again.
// The times it measures are the table in docs/scale-out.md.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../../config/checkout.ts';
import { networkSupport } from '../../support/netns.ts';
import { checkHistory } from '../../support/partition-checker.ts';
import { PartitionCluster, until } from '../../support/partition-cluster.ts';
import { cutBetween } from '../../support/partition-cuts.ts';
import { readSurvivor, watchEvidence } from '../../support/partition-evidence.ts';
import { SIDES } from '../../support/partition-topology.ts';
import { READERS, roles, runScenario, toDb, toMonitor, toWitness, type Roles, type ScenarioReport, type ScenarioSpec } from '../../support/partition-scenario.ts';

let cluster: PartitionCluster;
let evidence: { stop(): void } | undefined;
const reports: ScenarioReport[] = [];
/** The backend whose checkpoint commit the crash scenario holds. */
let held: number | undefined;

/** The primary's whole side (its node, the active writer, the reader) against everything else. */
const primarySide = ({ primary }: Roles) => [primary.dbHost, primary.writer, primary.reader];
const otherSide = ({ standby }: Roles) => ['mon', standby.dbHost, standby.writer, standby.reader];

/**
 * Test instrument: while public.hold_checkpoint has a row, a transaction that stores a checkpoint waits
 * 3 s at its COMMIT (a deferred trigger), so a cut can land between the checkpoint and its commit.
 */
const HOLD = `create table public.hold_checkpoint (held boolean);
  create function public.hold_checkpoint() returns trigger language plpgsql security definer set search_path = pg_catalog as $$
  begin if exists (select from public.hold_checkpoint h) then perform pg_sleep(3); end if; return null; end $$;
  create constraint trigger hold_checkpoint after insert on stats.log_checkpoint deferrable initially deferred
    for each row execute function public.hold_checkpoint();`;

const SCENARIOS: Record<string, ScenarioSpec> = {
  silent: {
    name: 'the primary\'s side cut off from the monitor and the standby\'s, silently (link down)',
    fault: (c, r) => c.net.cutLink(primarySide(r)),
    faultMs: 120_000,
    expect: 'failover',
    dials: (c, { primary, standby }) => [toDb(c, standby.dbHost, primary), toDb(c, 'mon', primary), toMonitor(c, primary.dbHost)],
  },
  monitor: {
    name: 'the primary cut off from the monitor only (nftables drop)',
    fault: (c, { primary }) => c.net.cut([primary.dbHost], ['mon'], 'drop'),
    faultMs: 120_000,
    expect: 'failover',
    dials: (c, { primary }) => [toDb(c, 'mon', primary), toMonitor(c, primary.dbHost)],
  },
  standby: {
    name: 'the primary cut off from the standby only (nftables drop)',
    fault: (c, { primary, standby }) => c.net.cut([primary.dbHost], [standby.dbHost], 'drop'),
    faultMs: 60_000,
    expect: 'held',
    dials: (c, { primary, standby }) => [toDb(c, standby.dbHost, primary), toDb(c, primary.dbHost, standby)],
  },
  witness: {
    name: 'both writers cut off from the witness (nftables drop on the WAN)',
    fault: (c) => cutBetween(c.net, SIDES.map((s) => s.writer), ['wit']),
    faultMs: 25_000,
    expect: 'unwitnessed',
    dials: (c) => SIDES.map((s) => toWitness(c, s.writer)),
  },
  crash: {
    name: 'the silent cut while a checkpoint\'s commit waits, then the isolated primary\'s Postgres crashes and restarts',
    async fault(c, r) {
      await c.query(r.primary.db, 'insert into public.hold_checkpoint values (true)');
      held = await until('a checkpoint held at its commit on the primary', async () =>
        (await c.query<{ pid: number }>(r.primary.db, "select pid from pg_stat_activity where wait_event = 'PgSleep'"))[0]?.pid, 60_000, 50);
      return c.net.cutLink(primarySide(r));
    },
    async during(c, r) {
      // That very commit, its record written, waiting for the standby the cut took away.
      await until('the checkpoint\'s commit waiting for the standby', async () =>
        (await c.query(r.primary.db, "select 1 from pg_stat_activity where pid = $1 and wait_event = 'SyncRep'", [held])).length > 0, 30_000, 100);
      const pid = await c.crashPostgres(r.primary.db, held);
      c.recorder.note(`crashed ${r.primary.dbHost}'s backend ${pid} while a checkpoint's commit waited`);
      await until(`${r.primary.dbHost} restarted`, async () => (await c.nodeStatus(r.primary.db)) !== 'down', 60_000);
      c.recorder.note(`${r.primary.dbHost} restarted`);
      await until('the standby promoted', async () => (await c.nodeStatus(r.standby.db)) === 'writable', 120_000);
      await c.query(r.standby.db, 'delete from public.hold_checkpoint');
    },
    faultMs: 120_000,
    expect: 'failover',
    dials: (c, { primary, standby }) => [toDb(c, standby.dbHost, primary), toMonitor(c, primary.dbHost)],
  },
  reset: {
    name: 'the primary\'s side cut off from the monitor and the standby\'s, by resets (nftables reject)',
    fault: (c, r) => c.net.cut(primarySide(r), otherSide(r), 'reject'),
    faultMs: 120_000,
    expect: 'failover',
    dials: (c, { primary, standby }) => [toDb(c, standby.dbHost, primary), toMonitor(c, primary.dbHost)],
  },
  oneway: {
    name: 'everything the primary sends to the monitor and the standby dropped, one way (nftables drop)',
    fault: (c, { primary, standby }) => cutBetween(c.net, [primary.dbHost], ['mon', standby.dbHost], { oneWay: true }),
    faultMs: 120_000,
    expect: 'failover',
    dials: (c, { primary, standby }) => [toMonitor(c, primary.dbHost), toDb(c, primary.dbHost, standby)],
  },
  kill: {
    name: 'the primary\'s postgres and keeper killed (kill -9), its machine down until healed',
    async fault(c, { primary }) {
      await c.killDbNode(primary.db);
      return { description: 'kill', heal: () => c.startDbNode(primary.db) };
    },
    faultMs: 120_000,
    expect: 'failover',
    dials: (c, { primary, standby }) => [toDb(c, standby.dbHost, primary)],
  },
};

describe('network partitions', () => {
  beforeAll(async () => {
    const unsupported = networkSupport();
    if (unsupported) throw new Error(`network namespaces cannot be made here (${unsupported}): the partition tests need root and Debian's iproute2 and nftables (scripts/ensure-deps.sh --test installs them)`);
    cluster = await PartitionCluster.start();
    evidence = watchEvidence(cluster);
    const { primary } = await roles(cluster);
    await cluster.query(primary.db, HOLD);
  }, 300_000);

  afterAll(async () => {
    evidence?.stop();
    const dir = path.join(ROOT_DIR, 'test-output');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'partition-reports.json'), JSON.stringify(reports, null, 2));
    if (cluster) {
      writeFileSync(path.join(dir, 'partition-history.json'), JSON.stringify(cluster.recorder.history));
      writeFileSync(path.join(dir, 'partition-log.txt'), cluster.logs.join('\n'));
      await cluster.destroy();
    }
  }, 120_000);

  for (const [key, spec] of Object.entries(SCENARIOS)) {
    it(spec.name, async () => {
      const report = await runScenario(cluster, spec);
      reports.push(report);
      console.log(`${key}: ${JSON.stringify({ ...report, timeline: undefined }, null, 1)}\n${report.timeline.join('\n')}`);
      expect(report.effect, 'the fault did not do what it must').toEqual([]);
      expect(report.failures, 'the checker found').toEqual([]);
      expect(report.sizeAfter).toBeGreaterThan(report.sizeBefore);
      expect(report.cosignedSize).toBe(report.sizeAfter);
    }, 600_000);
  }

  it('keeps, at the end of the run, every write acknowledged in any scenario, every checkpoint served, signed or cosigned a prefix of its log, and every reader alive', async () => {
    const { primary } = await roles(cluster);
    const survivor = await until('the surviving primary read', () => readSurvivor(cluster, primary.db), 30_000);
    expect(cluster.recorder.history.signed.length, 'signed checkpoints recorded').toBeGreaterThan(0);
    expect(cluster.recorder.history.cosigned.length, 'cosigned checkpoints recorded').toBeGreaterThan(0);
    expect(await checkHistory(cluster.recorder.history, survivor, { readers: READERS })).toEqual([]);
  }, 60_000);
});
