// The window pg_auto_failover leaves open with one standby, made on purpose: the standby is isolated, so
// the monitor makes the primary asynchronous (wait_primary, synchronous_standby_names empty) and its
// COMMITs return with one copy; nights are written there; then the primary is cut off from the
// monitor and the standby comes back with its WAL receiver paused (by the network: it connects, and
// receives nothing): the monitor makes it a secondary, which can be promoted, once it is within a WAL
// segment of the primary, though it never received those nights, and promotes it without them. The writer signs, sends to witnesses and acknowledges only what a standby that can
// take over holds (writer/replication.ts), so: nothing acknowledged is lost, no checkpoint anyone
// signed, cosigned or was served names an entry the standby lacked, and the log is not halted. On the
// cluster of the partition tests (tests/support/partition-cluster.ts), with their checker over the
// whole run's history.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../../config/checkout.ts';
import { ONE_NODE } from '../../../writer/replication.ts';
import { networkSupport } from '../../support/netns.ts';
import { checkHistory } from '../../support/partition-checker.ts';
import { PartitionCluster, until } from '../../support/partition-cluster.ts';
import { readSurvivor, watchEvidence } from '../../support/partition-evidence.ts';
import { READERS, steady, writerBesidePrimary } from '../../support/partition-scenario.ts';
import { HOSTS } from '../../support/partition-topology.ts';
import { stallReplication } from '../../support/replication-stall.ts';

let cluster: PartitionCluster;
let evidence: { stop(): void } | undefined;

const stateOf = async (node: number) => (await cluster.states()).find((s) => s.port === cluster.ha.ports.nodes[node]);
const one = async <T>(node: number, sql: string): Promise<T> => Object.values((await cluster.query(node, sql))[0]!)[0] as T;
/** The real log's entries, and the size of its latest checkpoint, on node `node`. */
const logOn = async (node: number) => (await cluster.query<{ entries: number; signed: number }>(node,
  'select (select count(*) from stats.log_entry where not is_demo)::int as entries, coalesce((select max(size) from stats.log_checkpoint where not is_demo), 0)::int as signed'))[0]!;

describe('a primary left alone by its standby (wait_primary), then lost', () => {
  beforeAll(async () => {
    const unsupported = networkSupport();
    if (unsupported) throw new Error(`network namespaces cannot be made here (${unsupported}): the partition tests need root and Debian's iproute2 and nftables (scripts/ensure-deps.sh --test installs them)`);
    cluster = await PartitionCluster.start();
    evidence = watchEvidence(cluster);
    // Partition runs take turns on the machine's namespaces: this one may first wait for another's end.
  }, 1_200_000);

  afterAll(async () => {
    evidence?.stop();
    if (!cluster) return;
    const dir = path.join(ROOT_DIR, 'test-output');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'wait-primary-history.json'), JSON.stringify(cluster.recorder.history));
    writeFileSync(path.join(dir, 'wait-primary-log.txt'), cluster.logs.join('\n'));
    await cluster.destroy();
  }, 120_000);

  it('loses nothing acknowledged, signs nothing the standby lacks, and does not halt the log', async () => {
    const { primary, standby } = await steady(cluster);
    await writerBesidePrimary(cluster, { primary, standby });
    const note = (what: string) => { cluster.recorder.note(what); console.log(`${new Date().toISOString()} ${what}`); };
    await cluster.importNight(primary);
    expect(cluster.recorder.history.nights.at(-1)?.outcome, 'a night imported while both nodes replicate').toBe('ok');

    // 1. The standby isolated from every other host: the primary goes on alone, asynchronously.
    const isolation = await cluster.net.cut([standby.dbHost], HOSTS.filter((h) => h.lan !== undefined && h.name !== standby.dbHost).map((h) => h.name), 'drop');
    note(`${standby.dbHost} isolated`);
    await until('the primary in wait_primary', async () => (await stateOf(primary.db))?.reported === 'wait_primary', 120_000, 500);
    // 2. No standby is waited for.
    expect(await one<string>(primary.db, 'show synchronous_standby_names')).toBe('');
    note(`${primary.dbHost} in wait_primary, synchronous_standby_names empty`);
    const alone = await logOn(primary.db);

    // 3. Nights written on the primary alone.
    const aloneFrom = Date.now();
    for (let i = 0; i < 3; i++) await cluster.importNight(primary);
    await sleep(3000);
    const written = cluster.recorder.history.nights.filter((n) => n.startedAt >= aloneFrom);
    const onPrimary = await logOn(primary.db);
    expect(onPrimary.entries, 'the nights entered the primary\'s log').toBe(alone.entries + written.length);
    // The rule's own effects are soft assertions: a run without it goes on to the failover, and fails on each.
    expect.soft(onPrimary.signed, 'a checkpoint of entries only the primary holds').toBe(alone.signed);
    expect.soft(written.filter((n) => n.outcome === 'ok'), 'nights acknowledged while only the primary held them').toEqual([]);
    expect.soft(cluster.logs.filter((l) => l.includes(`the import was ${ONE_NODE}`))).toHaveLength(written.length);
    expect.soft(cluster.logs.some((l) => l.includes(`[${primary.writerName}]`) && l.includes(`heartbeat ${ONE_NODE}`)), 'the writer says its heartbeats wait').toBe(true);

    // 4. The standby back, but its WAL receiver paused by the network: a connection from the
    // primary's port is dropped past its first 4 kB, so the receiver connects and its keeper's checks
    // of the primary pass, but no WAL arrives whole. Meanwhile the primary is cut off from the monitor.
    // The monitor makes the standby a secondary once it is within a WAL segment of what the primary
    // last reported; the primary, which no longer reports, stays in wait_primary (reporting, it would
    // be told to turn synchronous, and its keeper would wait for the standby to catch up first), and
    // once it is unhealthy the monitor promotes the standby.
    const stall = await stallReplication(cluster, standby, primary);
    const fromMonitor = await cluster.net.cut([primary.dbHost], ['mon'], 'drop');
    await isolation.heal();
    note(`${standby.dbHost} back, its replication stalled; ${primary.dbHost} cut off from the monitor`);
    await until('the standby a secondary', async () => {
      const state = await stateOf(standby.db);
      return state !== undefined && state.assigned !== 'catchingup' && state.reported !== 'catchingup';
    }, 180_000, 100);
    const onStandby = await logOn(standby.db);
    const beforeCut = await logOn(primary.db);
    note(`${standby.dbHost} ${(await stateOf(standby.db))?.reported} with ${onStandby.entries} entries; ${primary.dbHost} holds ${beforeCut.entries}, signed ${beforeCut.signed}`);
    expect(onStandby.entries, 'the standby lacks the nights written while it was away').toBeLessThan(beforeCut.entries);
    // Nothing the standby lacks is signed, stored or held by the witness.
    expect.soft(beforeCut.signed, 'the size the primary signed').toBeLessThanOrEqual(onStandby.entries);
    expect.soft(cluster.witnessState()?.size ?? 0, 'the size the witness cosigned').toBeLessThanOrEqual(onStandby.entries);
    expect.soft(Math.max(0, ...cluster.recorder.history.signed.map((s) => s.size)), 'the largest size a writer signed').toBeLessThanOrEqual(onStandby.entries);

    // 5. The primary, cut off from the monitor, unhealthy to it: the standby is promoted without the nights.
    await until('the standby promoted', async () => (await cluster.nodeStatus(standby.db)) === 'writable', 180_000, 500);
    note(`${standby.dbHost} takes writes`);
    await stall.heal();
    await sleep(10_000);
    await fromMonitor.heal();
    note('healed');
    const after = await steady(cluster, 300_000);
    expect(after.primary.dbHost).toBe(standby.dbHost);

    // Signing resumes on the survivor: a night imported there is acknowledged, signed and cosigned.
    await cluster.importNight(after.primary);
    expect.soft(cluster.recorder.history.nights.at(-1)?.outcome, 'a night imported once both nodes replicate again').toBe('ok');
    const survivorLog = await logOn(after.primary.db);
    expect.soft(survivorLog.signed, 'the survivor\'s log signed whole').toBe(survivorLog.entries);
    await until('the witness to cosign the survivor\'s latest checkpoint', () => (cluster.witnessState()?.size ?? 0) >= survivorLog.signed, 90_000, 500).catch(() => undefined);
    expect.soft(cluster.witnessState()?.size, 'the size the witness cosigned last').toBe(survivorLog.signed);

    evidence?.stop();
    const survivor = await readSurvivor(cluster, after.primary.db);
    const failures = await checkHistory(cluster.recorder.history, survivor, { readers: READERS });
    console.log(`checker: ${JSON.stringify(failures, null, 1)}`);
    expect.soft(failures.filter((f) => f.check === 'lost'), 'acknowledged writes lost').toEqual([]);
    expect.soft(failures.filter((f) => f.check === 'not a prefix'), 'checkpoints signed, cosigned or served that the survivor does not extend').toEqual([]);
    expect.soft(survivor.halted, 'the log halted').toBeNull();
    // The nights written on the primary alone were never acknowledged, and are gone with it.
    for (const night of written) expect(survivor.payouts.has(night.date)).toBe(false);
  }, 900_000);
});
