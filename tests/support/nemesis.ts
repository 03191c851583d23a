// A seeded random nemesis over a PartitionCluster (Jepsen's practice: faults at random, overlapping,
// landing during recoveries, then a check of everything every client saw): both sides import nights
// and every reader polls throughout; the schedule drawn from the seed (nemesis-schedule.ts) makes a
// fault every 5-20 s, each undone when its time is up, with no waiting for the cluster to settle in
// between. At the end every fault still in force is undone, the cluster must settle (one primary, every
// other node its caught-up standby) and sign and cosign one more night, and the checker reads the
// whole run's history against the surviving primary (tests/support/partition-checker.ts). The run's
// history, schedule, report, log and the monitor's pgautofailover.event are written to a directory of
// their own, kept for a failed run.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { checkHistory, healthSummary } from './partition-checker.ts';
import { until, type PartitionCluster } from './partition-cluster.ts';
import { readSurvivor, watchEvidence } from './partition-evidence.ts';
import { SIDES } from './partition-topology.ts';
import { makeFault, type Active } from './nemesis-faults.ts';
import { describeFault, schedule, type Planned } from './nemesis-schedule.ts';

export interface NemesisOptions {
  seed: number;
  /** How long faults are made (s); the heal, the settling and the checks come after. */
  seconds: number;
  /** Where the run's files go. */
  dir: string;
}

export interface NemesisReport {
  seed: number;
  seconds: number;
  nodes: number;
  /** Each fault: when it was made (s from the start), what it was, what it did, when it was undone. */
  faults: { at: number; fault: string; did: string; healedAt: number | null }[];
  /** Seconds from the last heal to a settled cluster, or null when it did not settle. */
  settledAfter: number | null;
  /** Whether the witness cosigned the surviving log's latest checkpoint at the end. */
  cosignedAtEnd: boolean;
  sizeAtEnd: number;
  /** The checker's findings ("lost: …", "overlap: …"), and the run's own (no settling, no cosignature at the end). None is a pass. */
  failures: string[];
  /** What the history holds, and how often the monitor promoted a standby or made a primary run alone (wait_primary). */
  counts: Record<string, number>;
  health: string;
}

/** Every node as the monitor assigned it, one primary and the rest secondaries, the primary taking writes: which one. */
export async function settled(cluster: PartitionCluster, timeoutMs: number): Promise<number> {
  return until('one primary and every other node its caught-up standby', async () => {
    const states = await cluster.states();
    const ok = states.length === cluster.dbHosts.length && states.every((s) => s.reported === s.assigned)
      && states.filter((s) => s.reported === 'primary').length === 1 && states.filter((s) => s.reported === 'secondary').length === states.length - 1;
    const primary = ok ? await cluster.primaryNode() : undefined;
    return primary !== undefined && (await cluster.nodeStatus(primary)) === 'writable' ? primary + 1 : undefined;
  }, timeoutMs, 500).then((n) => n - 1);
}

/** Rows of the monitor's event table, read on its socket. */
async function monitorEvents(cluster: PartitionCluster): Promise<{ description?: string }[]> {
  const client = new pg.Client({ connectionString: `postgres://autoctl_node@/pg_auto_failover?host=${encodeURIComponent(path.join(cluster.cfg.dataDir, 'ha', 'run'))}&port=${cluster.ha.ports.monitor}`, connectionTimeoutMillis: 5000 });
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.query('select * from pgautofailover.event order by eventid')).rows;
  } catch (error) {
    return [{ description: `the monitor's events could not be read: ${(error as Error).message}` }];
  } finally {
    await client.end().catch(() => {});
  }
}

/** Undoes everything a run may have left: its faults, any cut, any stopped process, any part or writer down. */
async function healEverything(cluster: PartitionCluster, active: Set<Active>): Promise<void> {
  for (const fault of [...active]) await fault.heal().catch((error: Error) => cluster.recorder.note(`heal failed: ${error.message}`));
  active.clear();
  await cluster.net.healAll();
  // A part the supervisor is restarting gets two minutes; one it gave up on (restarts in a row) is
  // started again, as an operator would, the monitor first (a keeper that cannot reach it gives up).
  // One that still does not start has its machine rebooted: every process left on its host killed
  // (a server's processes orphaned by its postmaster's death hold its shared memory), then started.
  const parts = [cluster.ha.monitor, ...cluster.ha.nodes];
  const hosts = ['mon', ...cluster.dbHosts];
  await until('every database part running', () => parts.every((p) => p.child), 120_000, 1000).catch(() => undefined);
  for (const [i, part] of parts.entries()) {
    if (part.child) continue;
    cluster.recorder.note(`${part.name} is down after the run: starting it`);
    await part.stop();
    await part.start().catch(async (error: Error) => {
      const left = execFileSync('ip', ['netns', 'pids', cluster.net.ns(hosts[i]!)], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
      cluster.recorder.note(`${part.name} did not start (${error.message}): rebooting ${hosts[i]}, whose processes ${left.join(', ') || 'none'} were left`);
      for (const pid of left) process.kill(pid, 'SIGKILL');
      await part.start().catch((again: Error) => cluster.recorder.note(`${part.name} did not start after the reboot: ${again.message}`));
    });
  }
  for (const side of SIDES) {
    const writer = cluster.writer(side);
    if (!writer || writer.child.exitCode !== null || writer.child.signalCode !== null) cluster.startWriter(side);
  }
}

/** Runs the nemesis on `cluster` and checks its history; writes the run's files to `options.dir`. */
export async function runNemesis(cluster: PartitionCluster, options: NemesisOptions): Promise<NemesisReport> {
  const { seed, seconds, dir } = options;
  const nodes = cluster.dbHosts.length;
  const plan: Planned[] = schedule(seed, seconds, nodes);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'schedule.json'), JSON.stringify(plan.map((p) => ({ ...p, description: describeFault(p.fault) })), null, 1));
  const evidence = watchEvidence(cluster);
  cluster.startImporting(3000);
  const start = Date.now();
  const faults: NemesisReport['faults'] = [];
  const active = new Set<Active>();
  const failures: string[] = [];
  cluster.recorder.note(`nemesis: seed ${seed}, ${seconds} s, ${plan.length} faults`);
  const runs = plan.map(async (planned) => {
    await sleep(Math.max(0, start + planned.at - Date.now()));
    const entry = { at: (Date.now() - start) / 1000, fault: describeFault(planned.fault), did: '', healedAt: null as number | null };
    faults.push(entry);
    let fault: Active;
    try {
      fault = await makeFault(cluster, planned);
    } catch (error) {
      entry.did = `could not be made: ${(error as Error).message}`;
      cluster.recorder.note(`nemesis: ${entry.fault}: ${entry.did}`);
      return;
    }
    entry.did = fault.did;
    cluster.recorder.note(`nemesis: ${entry.fault}: ${fault.did}`);
    active.add(fault);
    // Its time up, or the run's: whichever comes first.
    await sleep(Math.max(0, Math.min(start + planned.at + planned.durationMs, start + seconds * 1000) - Date.now()));
    if (!active.delete(fault)) return;
    await fault.heal().catch((error: Error) => cluster.recorder.note(`nemesis: healing ${entry.fault} failed: ${error.message}`));
    entry.healedAt = (Date.now() - start) / 1000;
  });
  await sleep(Math.max(0, start + seconds * 1000 - Date.now()));
  await Promise.all(runs);
  await healEverything(cluster, active);
  const healedAt = Date.now();
  cluster.recorder.note('nemesis: every fault undone');
  let settledAfter: number | null = null;
  let primary: number | undefined;
  try {
    primary = await settled(cluster, 300_000);
    settledAfter = (Date.now() - healedAt) / 1000;
  } catch (error) {
    failures.push(`not settled: the cluster did not settle within 300 s of the heal (${(error as Error).message})`);
  }
  await cluster.stopImporting();
  let sizeAtEnd = 0;
  let cosignedAtEnd = false;
  if (primary !== undefined) {
    await cluster.importNight(SIDES[primary] ?? SIDES[0]);
    sizeAtEnd = Number((await cluster.query<{ size: string | null }>(primary, 'select max(size) as size from stats.log_checkpoint where not is_demo'))[0]?.size ?? 0);
    cosignedAtEnd = await until('the witness to cosign the surviving log\'s latest checkpoint', () => (cluster.witnessState()?.size ?? 0) >= sizeAtEnd, 60_000, 500).then(() => true, () => false);
    if (!cosignedAtEnd) failures.push(`not cosigned: the witness did not cosign the surviving log's latest checkpoint (${sizeAtEnd} entries) within 60 s of the run's end`);
  }
  evidence.stop();
  const history = cluster.recorder.history;
  const events = await monitorEvents(cluster);
  const assigned = (state: string) => events.filter((e) => new RegExp(`^Setting goal state of .* to ${state}\\b`).test(e.description ?? '')).length;
  if (primary !== undefined) {
    const found = await checkHistory(history, await readSurvivor(cluster, primary), { from: start });
    failures.push(...found.map((f) => `${f.check}: ${f.found}`));
  }
  const report: NemesisReport = {
    seed, seconds, nodes, faults, settledAfter, cosignedAtEnd, sizeAtEnd, failures,
    counts: {
      heartbeats: history.acks.length, nightsAcknowledged: history.nights.filter((n) => n.outcome === 'ok').length,
      nightsUnknown: history.nights.filter((n) => n.outcome !== 'ok').length, reads: history.reads.length,
      signed: history.signed.length, cosigned: history.cosigned.length,
      promotions: assigned('prepare_promotion'), runsAlone: assigned('wait_primary'),
    },
    health: healthSummary(history),
  };
  writeFileSync(path.join(dir, 'report.json'), JSON.stringify(report, null, 1));
  writeFileSync(path.join(dir, 'history.json'), JSON.stringify(history));
  writeFileSync(path.join(dir, 'events.json'), JSON.stringify(events, null, 1));
  writeFileSync(path.join(dir, 'log.txt'), cluster.logs.join('\n'));
  return report;
}
