// One partition scenario on a PartitionCluster, from a steady cluster to a healed one, with its
// history checked: the fault (a cut of some kind, or a kill), what happens during it, the heal, the old
// primary back as a standby, the log signed and cosigned again; then the checker over what every client
// saw (tests/support/partition-checker.ts) and the times it took, measured from the fault.
import { setTimeout as sleep } from 'node:timers/promises';
import { forks, healthSummary, lostWrites, overlaps, shrank, unavailable, type FinalState } from './partition-checker.ts';
import { until, type PartitionCluster } from './partition-cluster.ts';
import { since, type History } from './partition-history.ts';
import { SIDES, type Side } from './partition-topology.ts';
import type { Cut } from './netns.ts';

/** The roles as a scenario starts: the primary's side (its node, the active writer and a reader) and the other. */
export interface Roles {
  primary: Side;
  standby: Side;
}

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
}

export interface ScenarioReport {
  name: string;
  /** Whether the standby was promoted. */
  failedOver: boolean;
  /** Milliseconds from the fault to: the standby taking writes; the old primary no longer taking them (stopped or a standby); the first heartbeat acknowledged after the fault. */
  promotedMs: number | null;
  oldPrimaryRefusesMs: number | null;
  writerAgainMs: number | null;
  /** What the checker found; each list empty is a pass. */
  lost: string[];
  forks: string[];
  overlaps: string[];
  unavailable: string[];
  shrank: string[];
  /** The log on the surviving primary: halted (why), its size before the fault and at the end, and the witness's latest cosigned size. */
  halted: string | null;
  sizeBefore: number;
  sizeAfter: number;
  cosignedSize: number | null;
  health: string;
  /** The node changes during the scenario, for the report. */
  timeline: string[];
}

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

/** What the surviving primary holds, read on its socket. */
async function finalState(cluster: PartitionCluster, node: 0 | 1, witnessed: { size: number; root: string }[]): Promise<FinalState & { halted: string | null }> {
  const heartbeats = await cluster.query<{ writer: string; at: Date }>(node, 'select writer, at from stats.heartbeat where writer is not null');
  const payouts = await cluster.query<{ date: string; usd: string }>(node, "select to_char(date, 'YYYY-MM-DD') as date, usd::text from stats.payout");
  const checkpoints = await cluster.query<{ size: string; root: string }>(node, 'select size, root from stats.log_checkpoint where not is_demo');
  const halted = await cluster.query<{ reason: string }>(node, 'select reason from stats.log_halt order by at desc limit 1');
  return {
    heartbeats: heartbeats.map((h) => ({ writer: h.writer, at: h.at.toISOString() })),
    payouts: new Map(payouts.map((p) => [p.date, Number(p.usd)])),
    checkpoints: checkpoints.map((c) => ({ size: Number(c.size), root: c.root })),
    cosigned: witnessed,
    halted: halted[0]?.reason ?? null,
  };
}

const latestSize = async (cluster: PartitionCluster, node: 0 | 1) =>
  Number((await cluster.query<{ size: string | null }>(node, 'select max(size) as size from stats.log_checkpoint where not is_demo'))[0]?.size ?? 0);

/**
 * Runs one scenario: steady roles with the writer beside the primary; both sides importing nights and
 * every reader polling; the fault; `during`; the standby promoted or the fault's time up; the heal; the
 * old primary back as a standby (or still the primary, when nothing failed over); a night imported and
 * cosigned on the surviving primary. Then the checks, over this scenario's history and, for forks,
 * over everything seen since the cluster started (`seenBefore`).
 */
export async function runScenario(cluster: PartitionCluster, spec: ScenarioSpec, witnessed: { size: number; root: string }[]): Promise<ScenarioReport> {
  const before = await steady(cluster);
  await writerBesidePrimary(cluster, before);
  const started = Date.now();
  cluster.recorder.note(`${spec.name}: begins, primary ${before.primary.dbHost}`);
  cluster.startImporting(3000);
  // The witness's state, as it changes, is history too.
  let polling = true;
  const witnessPoll = (async () => {
    while (polling) {
      const state = cluster.witnessState();
      if (state && !witnessed.some((w) => w.size === state.size && w.root === state.root)) witnessed.push(state);
      await sleep(500);
    }
  })();
  await sleep(6000);
  const sizeBefore = await latestSize(cluster, before.primary.db);
  const watch = cluster.watchNodes();
  await sleep(1000);
  const faultAt = Date.now();
  cluster.recorder.note(`${spec.name}: fault`);
  const cut = await spec.fault(cluster, before);
  let healAt = Date.now();
  try {
    await spec.during?.(cluster, before);
    // The standby promoted, or the fault's time up.
    const deadline = faultAt + spec.faultMs;
    while (Date.now() < deadline && (await cluster.nodeStatus(before.standby.db)) !== 'writable') await sleep(250);
    if ((await cluster.nodeStatus(before.standby.db)) === 'writable') {
      cluster.recorder.note(`${spec.name}: ${before.standby.dbHost} takes writes`);
      await sleep(spec.afterPromotionMs ?? 10_000);
    }
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
  polling = false;
  await witnessPoll;
  const changes = await watch.stop();
  // What the clients had heard before the surviving primary is read: a write acknowledged after that read is not in it.
  const readAt = Date.now();
  const final = await finalState(cluster, after.primary.db, witnessed);
  const history: History = since(cluster.recorder.history, started, readAt);
  const at = (predicate: (c: (typeof changes)[number]) => boolean) => {
    const found = changes.find((c) => c.at >= faultAt && predicate(c));
    return found ? found.at - faultAt : null;
  };
  const failedOver = after.primary.db !== before.primary.db;
  // The old primary no longer takes writes: from when it stopped for good during the fault (a crash it
  // comes back from is not that), or never, when it took writes until the heal.
  const during = changes.filter((c) => c.node === before.primary.db && c.at >= faultAt && c.at < healAt);
  const lastStop = during.at(-1)?.status === 'writable' ? undefined
    : during.filter((c) => c.status !== 'writable' && !during.some((r) => r.status === 'writable' && r.at > c.at))[0];
  const firstAck = history.acks.filter((a) => a.ackedAt > faultAt).sort((a, b) => a.ackedAt - b.ackedAt)[0];
  const writerAgain = failedOver
    ? history.acks.filter((a) => a.ackedAt > faultAt && a.server === cluster.serverOf(after.primary.db)).sort((a, b) => a.ackedAt - b.ackedAt)[0]
    : firstAck;
  return {
    name: spec.name,
    failedOver,
    promotedMs: failedOver ? at((c) => c.node === before.standby.db && c.status === 'writable') : null,
    oldPrimaryRefusesMs: lastStop ? lastStop.at - faultAt : null,
    writerAgainMs: writerAgain ? writerAgain.ackedAt - faultAt : null,
    lost: lostWrites(history, final),
    forks: forks(cluster.recorder.history, final),
    overlaps: failedOver ? overlaps(history, cluster.serverOf(before.primary.db), cluster.serverOf(after.primary.db)) : [],
    unavailable: unavailable(history),
    shrank: shrank(history),
    halted: final.halted,
    sizeBefore,
    sizeAfter,
    cosignedSize: cluster.witnessState()?.size ?? null,
    health: healthSummary(history),
    timeline: [
      ...changes.map((c) => ({ at: c.at, what: `${SIDES[c.node].dbHost} ${c.status}` })),
      ...history.notes.map((n) => ({ at: n.at, what: n.what })),
    ].sort((a, b) => a.at - b.at).map((e) => `${((e.at - faultAt) / 1000).toFixed(1)} s ${e.what}`),
  };
}
