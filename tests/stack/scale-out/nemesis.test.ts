// The seeded random nemesis (tests/support/nemesis.ts) over the partition cluster: a fault every 5-20 s
// for NEMESIS_SECONDS (75 by default, so `npm test` runs a short one), drawn from NEMESIS_SEED (a
// random one when unset, printed so that it can be run again), with the three-node layout when
// NEMESIS_NODES=3. Then every fault undone, the cluster settled, one more night signed and cosigned,
// and the whole history checked: nothing acknowledged lost, every checkpoint served, signed or
// cosigned a prefix of the surviving log, no two primaries acknowledging at once, every reader
// answering throughout. The run's files (history, schedule, report, log, the monitor's events) go to
// test-output/nemesis-<seed>/, kept when the run fails and named in the failure.
import { randomInt } from 'node:crypto';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../../config/checkout.ts';
import { networkSupport } from '../../support/netns.ts';
import { runNemesis } from '../../support/nemesis.ts';
import { describeFault, schedule } from '../../support/nemesis-schedule.ts';
import { PartitionCluster } from '../../support/partition-cluster.ts';

const seed = process.env.NEMESIS_SEED ? Number(process.env.NEMESIS_SEED) : randomInt(2 ** 32);
const seconds = Number(process.env.NEMESIS_SECONDS || 75);
const nodes = process.env.NEMESIS_NODES === '3' ? 3 : 2;
const dir = path.join(ROOT_DIR, 'test-output', `nemesis-${seed}`);

describe('the nemesis\'s schedule', () => {
  it('is drawn from the seed alone: the same seed, the same faults at the same times; a fault every 5-20 s', () => {
    expect(Number.isInteger(seed) && seed >= 0 && seed < 2 ** 32, `NEMESIS_SEED must be a whole number below 2^32, got ${process.env.NEMESIS_SEED}`).toBe(true);
    const plan = schedule(seed, 600, 3);
    expect(schedule(seed, 600, 3)).toEqual(plan);
    expect(schedule(seed + 1, 600, 3)).not.toEqual(plan);
    const gaps = plan.slice(1).map((p, i) => p.at - plan[i]!.at);
    // A gap is one draw of 5-20 s, or several when a draw found what it would fault busy ten times over.
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(5000);
    expect(plan.length).toBeGreaterThan(600 / 20 / 2);
    // Over a long schedule every kind of fault comes up.
    const kinds = new Set(schedule(seed, 3600, 3).map((p) => p.fault.kind));
    expect([...kinds].sort()).toEqual(['bandwidth', 'crash', 'kill', 'loss', 'one-way', 'pause', 'skew', 'split']);
  });
});

describe(`the nemesis: seed ${seed}, ${seconds} s, ${nodes} database nodes`, () => {
  let cluster: PartitionCluster | undefined;

  beforeAll(async () => {
    const unsupported = networkSupport();
    if (unsupported) throw new Error(`network namespaces cannot be made here (${unsupported}): the nemesis needs root and Debian's iproute2 and nftables (scripts/ensure-deps.sh --test installs them)`);
    console.log(`nemesis: seed ${seed} (NEMESIS_SEED=${seed} runs this schedule again), ${seconds} s, ${nodes} nodes; files in ${dir}\n${
      schedule(seed, seconds, nodes).map((p) => `  ${(p.at / 1000).toFixed(0)} s: ${describeFault(p.fault)} for ${(p.durationMs / 1000).toFixed(0)} s`).join('\n')}`);
    cluster = await PartitionCluster.start({ nodes });
  }, 300_000);

  afterAll(async () => {
    await cluster?.destroy();
  }, 120_000);

  it('loses nothing acknowledged, serves one history, and settles again', async () => {
    const report = await runNemesis(cluster!, { seed, seconds, dir });
    console.log(`nemesis seed ${seed}: ${JSON.stringify({ ...report, faults: undefined }, null, 1)}\n${report.faults.map((f) =>
      `  ${f.at.toFixed(1)} s: ${f.fault}: ${f.did}${f.healedAt === null ? '' : `; undone at ${f.healedAt.toFixed(1)} s`}`).join('\n')}`);
    expect(report.failures, `seed ${seed} (replay: NEMESIS_SEED=${seed} NEMESIS_SECONDS=${seconds}${nodes === 3 ? ' NEMESIS_NODES=3' : ''}); its history, schedule, log and the monitor's events are in ${dir}`).toEqual([]);
    expect(report.faults.length).toBeGreaterThan(0);
    expect(report.counts.heartbeats).toBeGreaterThan(0);
    expect(report.counts.nightsAcknowledged).toBeGreaterThan(0);
    // A run that passed leaves nothing behind; a failed one keeps its files.
    rmSync(dir, { recursive: true, force: true });
  }, (seconds + 900) * 1000);
});
