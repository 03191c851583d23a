// One partition scenario on a PartitionCluster, from a steady cluster to a healed one: the fault (a
// cut of some kind, or a kill), what happens during it, the heal, the old primary back as a standby,
// the log signed and cosigned again. Then two verdicts: the checker over the whole run's history so
// far against the surviving primary (tests/support/partition-checker.ts), so every write any earlier
// scenario acknowledged is checked again after this one's faults; and the fault's own effect
// (tests/support/partition-effects.ts): dials across it fail while it is in force, and the standby was
// promoted, or the writes were held, or they went on unwitnessed, as the scenario expects. The times it
// took are measured from the fault.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { checkHistory, healthSummary, type Failure } from './partition-checker.ts';
import { until, type PartitionCluster } from './partition-cluster.ts';
import { dial } from './partition-cuts.ts';
import { effectFailures, type DialResult, type Effect } from './partition-effects.ts';
import { readSurvivor } from './partition-evidence.ts';
import { since } from './partition-history.ts';
import { SIDES, type Side } from './partition-topology.ts';
import type { Cut } from './netns.ts';

/** The roles as a scenario starts: the primary's side (its node, the active writer and a reader) and the other. */
export interface Roles {
  primary: Side;
  standby: Side;
}

/** A connection a fault must stop: from inside host `from` to `address`:`port` (the service of host `to`). */
export interface Dial { from: string; to: string; address: string; port: number }

export interface ScenarioSpec {
  name: string;
  /** Makes the fault; returns how to undo it (heal). */
  fault(cluster: PartitionCluster, roles: Roles): Promise<Cut>;
  /** Runs right after the fault (e.g. a crash while a commit waits). */
  during?(cluster: PartitionCluster, roles: Roles): Promise<void>;
  /** How long the fault lasts at most before it is healed, when no failover ends it sooner (ms). */
  faultMs: number;
  /** After the standby takes writes, how long the fault stays on (ms): the new side writes and signs meanwhile. */
  afterPromotionMs?: number;
  /** What the fault must do. */
  expect: Effect;
  /** The connections the fault must stop: each connects before it and fails while it is in force. */
  dials(cluster: PartitionCluster, roles: Roles): Dial[];
}

export interface ScenarioReport {
  name: string;
  /** Whether the standby took writes during the scenario. */
  failedOver: boolean;
  /** Milliseconds from the fault to: the standby taking writes; the old primary no longer taking them (stopped or a standby); the first heartbeat acknowledged after the fault. */
  promotedMs: number | null;
  oldPrimaryRefusesMs: number | null;
  writerAgainMs: number | null;
  /** What the checker found over the whole run so far; empty is a pass. */
  failures: Failure[];
  /** What the fault failed to do; empty is a pass. */
  effect: string[];
  dials: DialResult[];
  /** The log on the surviving primary: its size before the fault and at the end, and the witness's latest cosigned size. */
  sizeBefore: number;
  sizeAfter: number;
  cosignedSize: number | null;
  health: string;
  /** The node changes during the scenario, for the report. */
  timeline: string[];
}

/** The readers the cluster runs, one a side, as it names them: each must answer throughout the run. */
export const READERS = SIDES.map((side) => `reader-${side.name}`);

/** Dials to a side's Postgres, to the monitor, and to the witness (its URL in the log's policy). */
export const toDb = (cluster: PartitionCluster, from: string, side: Side): Dial =>
  ({ from, to: side.dbHost, address: cluster.net.lanAddress(side.dbHost), port: cluster.ha.ports.nodes[side.db]! });
export const toMonitor = (cluster: PartitionCluster, from: string): Dial =>
  ({ from, to: 'mon', address: cluster.net.lanAddress('mon'), port: cluster.ha.ports.monitor });
export function toWitness(cluster: PartitionCluster, from: string): Dial {
  const url = /^witness \S+ \S+ (\S+)$/m.exec(readFileSync(path.join(cluster.dir, 'log.policy'), 'utf8'))?.[1];
  if (!url) throw new Error('the log\'s policy names no witness URL');
  const { hostname, port } = new URL(url);
  return { from, to: 'wit', address: hostname, port: Number(port) };
}

const dialAll = (cluster: PartitionCluster, dials: Dial[]) => Promise.all(dials.map((d) => dial(cluster.net, d.from, d.address, d.port)));

/** The roles now: the primary the monitor names, the other node as standby. */
export async function roles(cluster: PartitionCluster): Promise<Roles> {
  const primary = await until('a primary', async () => { const i = await cluster.primary(); return i === undefined ? undefined : SIDES[i]; }, 180_000);
  return { primary, standby: SIDES[1 - primary.db]! };
}

/** Waits until one node is the primary and the other a caught-up secondary, both as the monitor assigned, and both answer as such. */
export async function steady(cluster: PartitionCluster, timeoutMs = 180_000): Promise<Roles> {
  await until('a primary and a secondary, as assigned', async () => {
    const states = await cluster.states();
    return states.length === 2 && states.every((s) => s.reported === s.assigned) && states.map((s) => s.reported).sort().join() === 'primary,secondary';
  }, timeoutMs, 500);
  const now = await roles(cluster);
  await until('the nodes to answer as primary and standby', async () =>
    (await cluster.nodeStatus(now.primary.db)) === 'writable' && (await cluster.nodeStatus(now.standby.db)) === 'standby', timeoutMs, 500);
  return now;
}

/** The writer whose heartbeats the primary acknowledged last, if one did within `withinMs`. */
function activeWriter(cluster: PartitionCluster, primary: Side, withinMs = 5000): string | undefined {
  const server = cluster.serverOf(primary.db);
  return cluster.recorder.history.acks.filter((a) => a.server === server && a.ackedAt > Date.now() - withinMs).at(-1)?.writer;
}

/** Makes the primary's side writer the active one (restarting the other side's writer when it holds the lock), as every scenario starts. */
export async function writerBesidePrimary(cluster: PartitionCluster, { primary, standby }: Roles): Promise<void> {
  const active = await until('a writer writing on the primary', () => activeWriter(cluster, primary), 120_000);
  if (active === primary.writerName) return;
  cluster.recorder.note(`${standby.writerName} holds the lock on the other side: restarting it so that ${primary.writerName} takes over`);
  await cluster.restartWriter(standby);
  await until(`${primary.writerName} writing on the primary`, () => activeWriter(cluster, primary) === primary.writerName, 120_000);
}

const latestSize = async (cluster: PartitionCluster, node: 0 | 1) =>
  Number((await cluster.query<{ size: string | null }>(node, 'select max(size) as size from stats.log_checkpoint where not is_demo'))[0]?.size ?? 0);

/**
 * Runs one scenario: steady roles with the writer beside the primary; both sides importing nights and
 * every reader polling; the dials across the fault, which must connect; the fault, the dials again,
 * which must fail, and `during`; the standby promoted or the fault's time up; the dials once more; the
 * heal; the old primary back as a standby (or still the primary, when nothing failed over); a night
 * imported and cosigned on the surviving primary. The cluster's history must be whole-run, with the
 * signers and the witness watched (partition-evidence.ts).
 */
export async function runScenario(cluster: PartitionCluster, spec: ScenarioSpec): Promise<ScenarioReport> {
  const before = await steady(cluster);
  await writerBesidePrimary(cluster, before);
  const started = Date.now();
  cluster.recorder.note(`${spec.name}: begins, primary ${before.primary.dbHost}`);
  cluster.startImporting(3000);
  await sleep(6000);
  const sizeBefore = await latestSize(cluster, before.primary.db);
  const dials = spec.dials(cluster, before);
  const dialledBefore = await dialAll(cluster, dials);
  const watch = cluster.watchNodes();
  await sleep(1000);
  const faultAt = Date.now();
  cluster.recorder.note(`${spec.name}: fault`);
  const cut = await spec.fault(cluster, before);
  const cutAt = Date.now();
  let healAt = cutAt;
  let dialledDuring: string[] = [];
  let dialledLast: string[] = [];
  try {
    // Dialled while `during` runs; a dial that could not run is a result too, never an unhandled rejection.
    const dialling = dialAll(cluster, dials).catch((error: Error) => dials.map(() => `not dialled: ${error.message}`));
    await spec.during?.(cluster, before);
    dialledDuring = await dialling;
    // The standby promoted, or the fault's time up.
    const deadline = faultAt + spec.faultMs;
    while (Date.now() < deadline && (await cluster.nodeStatus(before.standby.db)) !== 'writable') await sleep(250);
    if ((await cluster.nodeStatus(before.standby.db)) === 'writable') {
      cluster.recorder.note(`${spec.name}: ${before.standby.dbHost} takes writes`);
      await sleep(spec.afterPromotionMs ?? 10_000);
    }
    dialledLast = await dialAll(cluster, dials);
  } finally {
    cluster.recorder.note(`${spec.name}: heal`);
    healAt = Date.now();
    await cut.heal();
  }
  const after = await steady(cluster);
  cluster.recorder.note(`${spec.name}: steady again, primary ${after.primary.dbHost}`);
  // Resumption: the log grows on the surviving primary and the witness cosigns its latest checkpoint.
  await cluster.stopImporting();
  await cluster.importNight(after.primary);
  const sizeAfter = await latestSize(cluster, after.primary.db);
  await until('the witness to cosign the surviving log\'s latest checkpoint', () => (cluster.witnessState()?.size ?? 0) >= sizeAfter, 60_000, 500).catch(() => undefined);
  const changes = await watch.stop();
  const survivor = await readSurvivor(cluster, after.primary.db);
  const { history } = cluster.recorder;
  const failures = await checkHistory(history, survivor, { readers: READERS });
  const at = (predicate: (c: (typeof changes)[number]) => boolean) => {
    const found = changes.find((c) => c.at >= faultAt && predicate(c));
    return found ? found.at - faultAt : null;
  };
  const promotedMs = at((c) => c.node === before.standby.db && c.status === 'writable');
  const failedOver = promotedMs !== null;
  // The old primary no longer takes writes: from when it stopped for good during the fault (a crash it
  // comes back from is not that), or never, when it took writes until the heal.
  const during = changes.filter((c) => c.node === before.primary.db && c.at >= faultAt && c.at < healAt);
  const lastStop = during.at(-1)?.status === 'writable' ? undefined
    : during.filter((c) => c.status !== 'writable' && !during.some((r) => r.status === 'writable' && r.at > c.at))[0];
  const acksAfter = history.acks.filter((a) => a.ackedAt > faultAt && a.ackedAt < survivor.readAt).sort((a, b) => a.ackedAt - b.ackedAt);
  const writerAgain = failedOver ? acksAfter.find((a) => a.server === cluster.serverOf(before.standby.db)) : acksAfter[0];
  const dialResults = dials.map((d, i) => ({ dial: `${d.from} to ${d.to} (${d.address}:${d.port})`, before: dialledBefore[i]!, during: dialledDuring[i] ?? 'not dialled', beforeHeal: dialledLast[i] ?? 'not dialled' }));
  const stretch = since(history, started, survivor.readAt);
  return {
    name: spec.name,
    failedOver,
    promotedMs,
    oldPrimaryRefusesMs: lastStop ? lastStop.at - faultAt : null,
    writerAgainMs: writerAgain ? writerAgain.ackedAt - faultAt : null,
    failures,
    effect: effectFailures({ expect: spec.expect, dials: dialResults, failedOver, cutAt, healAt, history }),
    dials: dialResults,
    sizeBefore,
    sizeAfter,
    cosignedSize: cluster.witnessState()?.size ?? null,
    health: healthSummary(stretch),
    timeline: [
      ...changes.map((c) => ({ at: c.at, what: `${SIDES[c.node].dbHost} ${c.status}` })),
      ...stretch.notes.map((n) => ({ at: n.at, what: n.what })),
    ].sort((a, b) => a.at - b.at).map((e) => `${((e.at - faultAt) / 1000).toFixed(1)} s ${e.what}`),
  };
}
