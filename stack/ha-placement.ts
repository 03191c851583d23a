// Where the high-availability mode's monitor and its nodes (two, or three) run: each server's address and port, how
// its programs are started there, and how the servers trust and reach each other.
import type { Config } from '../config/config.ts';

/**
 * Where one server of the mode runs: the address the other servers and the clients reach it at
 * (pg_autoctl's --hostname, the server's listen_addresses), and, when it runs where this process's
 * network is not (another network namespace, in the partition tests), how its programs are started
 * there.
 */
export interface HaHost {
  host: string;
  /**
   * The program and arguments that run `program args` at this host as the user `ids` (undefined: as
   * this process's user), spawned by this process as it is. Unset: `program` is run here directly.
   */
  command?: (program: string, args: string[], ids: { uid?: number; gid?: number }) => [string, string[]];
}

/**
 * Where the monitor and the nodes run. By default (loopbackPlacement) all of them on this machine's
 * BIND_HOST, reached over TCP. Placed elsewhere, each keeps its data under the stack's data
 * directory and its socket in the shared private directory, through which this process does its own
 * work (creating, migrating, asking the monitor); the servers reach each other over TCP at their hosts.
 */
export interface HaPlacement {
  monitor: HaHost;
  /** One per node, in the order of HaPorts.nodes. */
  nodes: HaHost[];
  /**
   * The pg_hba.conf address pg_auto_failover's own roles are trusted from: `samehost` (the servers'
   * own addresses) when they share one machine's loopback, `samenet` (the subnets the server is on)
   * when each has an address of its own.
   */
  trustFrom: 'samehost' | 'samenet';
  /** How this process connects to the nodes for its own work and hands out in nodeUrl: over TCP at their hosts, or over their sockets. */
  reach: 'tcp' | 'socket';
}

export interface HaPorts {
  monitor: number;
  /** The nodes' ports: POSTGRES_PORT, POSTGRES_STANDBY_PORT, and POSTGRES_THIRD_NODE_PORT when set. */
  nodes: number[];
}

/** The default: the monitor and every node on BIND_HOST, on this machine, in this process's network. */
export function loopbackPlacement(cfg: Pick<Config, 'bindHost' | 'postgresHa'>): HaPlacement {
  const here = { host: cfg.bindHost };
  return { monitor: here, nodes: (cfg.postgresHa?.nodePorts ?? [0, 0]).map(() => here), trustFrom: 'samehost', reach: 'tcp' };
}
