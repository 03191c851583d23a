// A standby whose WAL receiver is paused by the network: it connects to its primary, and receives no
// WAL. Stopping the receiver itself (SIGSTOP) does not make that: pg_autoctl restarts a returning
// standby's Postgres, whose shutdown waits for a stopped receiver, and makes a standby a secondary
// only once its receiver is connected (it reads the timeline from pg_stat_wal_receiver).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Cut } from './netns.ts';
import type { PartitionCluster } from './partition-cluster.ts';
import type { Side } from './partition-topology.ts';

const exec = promisify(execFile);

/**
 * Stalls the standby's replication from `primary` and nothing else: in the standby's own namespace,
 * every packet of a connection from the primary's Postgres port is dropped once that connection has
 * brought `afterBytes`. A connection still opens and answers a command or two (so the standby's WAL
 * receiver connects, and its keeper's checks of the primary pass), but the WAL the primary then sends,
 * in one message larger than that, never arrives whole. The namespace's connection tracking is made to
 * count bytes first (nf_conntrack_acct).
 * https://wiki.nftables.org/wiki-nftables/index.php/Matching_connection_tracking_stateful_metainformation
 */
export async function stallReplication(cluster: PartitionCluster, standby: Side, primary: Side, afterBytes = 4000): Promise<Cut> {
  await exec('ip', ['netns', 'exec', cluster.net.ns(standby.dbHost), 'sysctl', '-q', '-w', 'net.netfilter.nf_conntrack_acct=1']);
  const from = `ip saddr ${cluster.net.lanAddress(primary.dbHost)} tcp sport ${cluster.ha.ports.nodes[primary.db]}`;
  return cluster.net.filter([standby.dbHost], () => [`${from} ct reply bytes > ${afterBytes} drop`],
    `${standby.dbHost}'s replication from ${primary.dbHost} stalled after ${afterBytes} bytes a connection`);
}
