// What the partition run's checker reads besides the clients' output: the checkpoints each side's
// signer signed (its LOG_SIGNER_STATE file, rewritten after every commit that stored one, by the
// running writer and the imports on that side alike) and the one the witness holds as cosigned (its
// state), both watched for the whole run; and, at the end, what the surviving primary holds, read on
// its socket in one statement, so in one snapshot.
import { existsSync, readFileSync, watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { logOrigin } from '../../contract/paths.ts';
import type { Survivor } from './partition-checker.ts';
import type { PartitionCluster } from './partition-cluster.ts';
import type { PartitionDatabases } from './partition-databases.ts';
import { writerEnv } from './partition-env.ts';
import { SIDES } from './partition-topology.ts';

/** The name the witness's cosignatures are recorded under. */
export const WITNESS = 'the witness';

/**
 * Records into the cluster's history every checkpoint of the real log a side's signer signed and every
 * one the witness cosigned, as their state files change (the signers' watched, and all read every
 * `everyMs` besides).
 * A state file holds its latest checkpoint only: two signed within one read would show as the second.
 */
export function watchEvidence(cluster: PartitionCluster, everyMs = 100): { stop(): void } {
  const origin = logOrigin(cluster.cfg, false);
  const signers = SIDES.map((side) => ({ by: `the signer of side ${side.name}`, file: writerEnv(cluster.cfg, cluster.ha, cluster.dir, side).LOG_SIGNER_STATE! }));
  const read = () => {
    for (const { by, file } of signers) {
      if (!existsSync(file)) continue;
      try {
        const signed = (JSON.parse(readFileSync(file, 'utf8')) as Record<string, { size: number; root: string }>)[origin];
        if (signed) cluster.recorder.signed(by, signed);
      } catch {
        // a file being replaced: the next read has it
      }
    }
    const cosigned = cluster.witnessState();
    if (cosigned) cluster.recorder.cosigned(WITNESS, cosigned);
  };
  read();
  const watchers: FSWatcher[] = [];
  for (const dir of signers.map((s) => path.dirname(s.file))) watchers.push(watch(dir, read));
  const timer = setInterval(read, everyMs);
  return {
    stop() {
      clearInterval(timer);
      for (const w of watchers) w.close();
      read();
    },
  };
}

interface SurvivorRow {
  heartbeats: { writer: string; at: string }[];
  payouts: { date: string; usd: string }[];
  entries: string[];
  checkpoints: { size: number; root: string }[];
  halted: string | null;
}

/** What node `node` holds now, in one snapshot: heartbeats, nights, the real log's entries and checkpoints, and its halt. */
export async function readSurvivor(cluster: PartitionDatabases, node: number): Promise<Survivor> {
  const readAt = Date.now();
  const [row] = await cluster.query<{ s: SurvivorRow }>(node, `select json_build_object(
    'heartbeats', (select coalesce(json_agg(json_build_object('writer', writer, 'at', at)), '[]') from stats.heartbeat where writer is not null),
    'payouts', (select coalesce(json_agg(json_build_object('date', to_char(date, 'YYYY-MM-DD'), 'usd', usd::text)), '[]') from stats.payout),
    'entries', (select coalesce(json_agg(entry order by idx), '[]') from stats.log_entry where not is_demo),
    'checkpoints', (select coalesce(json_agg(json_build_object('size', size, 'root', root) order by size), '[]') from stats.log_checkpoint where not is_demo),
    'halted', (select reason from stats.log_halt order by at desc limit 1)) as s`);
  const s = row!.s;
  return {
    readAt,
    heartbeats: s.heartbeats.map((h) => ({ writer: h.writer, at: new Date(h.at).toISOString() })),
    payouts: new Map(s.payouts.map((p) => [p.date, Number(p.usd)])),
    entries: s.entries,
    checkpoints: s.checkpoints.map((c) => ({ size: Number(c.size), root: c.root })),
    halted: s.halted,
  };
}
