// How the nemesis makes each fault of its schedule (tests/support/nemesis-schedule.ts) on a
// PartitionCluster, and undoes it: the network's faults as nftables rules or the trunk taken down
// (tests/support/netns.ts, partition-cuts.ts), the processes' as signals to the very processes, found
// by their parent in /proc. Each fault says what it did (the processes it signalled, the rules it set),
// or that it found nothing to do (a walreceiver on no standby, a node already down), so a run's report
// shows what each fault was.
import { readdirSync, readFileSync } from 'node:fs';
import type { PartitionCluster } from './partition-cluster.ts';
import { cutBetween } from './partition-cuts.ts';
import { describeFault, type Planned } from './nemesis-schedule.ts';
import { SIDES } from './partition-topology.ts';

/** A fault in force: what it did, and how to undo it (idempotent). */
export interface Active {
  description: string;
  did: string;
  heal(): Promise<void>;
}

/** Every process: its pid, its parent's, and its command line. */
function processes(): { pid: number; ppid: number; cmd: string }[] {
  const found: { pid: number; ppid: number; cmd: string }[] = [];
  for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      // The command name (in parentheses) may hold spaces: the fields after it are counted from its end.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      found.push({ pid: Number(entry), ppid, cmd: readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ').trim() });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** `root` and every process below it, with their command lines. */
function tree(root: number | undefined): { pid: number; cmd: string }[] {
  if (root === undefined) return [];
  const all = processes();
  const found = all.filter((p) => p.pid === root);
  for (let i = 0; i < found.length; i++) found.push(...all.filter((p) => p.ppid === found[i]!.pid));
  return found;
}

/** Sends `signal` to each pid, those still there; returns those it reached. */
function signal(pids: number[], sig: NodeJS.Signals): number[] {
  return pids.filter((pid) => {
    try {
      process.kill(pid, sig);
      return true;
    } catch {
      return false;
    }
  });
}

/** A fault that stops processes (SIGSTOP) until it is healed (SIGCONT). */
function paused(description: string, pids: number[], what: string): Active {
  const stopped = signal(pids, 'SIGSTOP');
  let healed = false;
  return {
    description,
    did: stopped.length ? `stopped ${what} (pids ${stopped.join(', ')})` : `found no ${what} to stop`,
    heal: async () => {
      if (healed) return;
      healed = true;
      signal(stopped, 'SIGCONT');
    },
  };
}

const none = async () => {};

/** Whether a child process has not exited (its pid is still its own). */
const running = (child: { exitCode: number | null; signalCode: NodeJS.Signals | null }) => child.exitCode === null && child.signalCode === null;

/** Makes the fault `planned` describes on `cluster`. */
export async function makeFault(cluster: PartitionCluster, planned: Planned): Promise<Active> {
  const { fault } = planned;
  const description = describeFault(fault);
  const { net, ha } = cluster;
  const keeperPid = (i: number) => ha.nodes[i]?.child?.process.pid;
  const sideOf = (name: 'a' | 'b') => SIDES.find((s) => s.name === name)!;
  switch (fault.kind) {
    case 'split': {
      const cut = await net.cutLink(fault.sideA.filter((h) => net.hosts.has(h)));
      return { description, did: cut.description, heal: () => cut.heal() };
    }
    case 'one-way': {
      const cut = await cutBetween(net, [fault.from], [fault.to], { oneWay: true });
      return { description, did: cut.description, heal: () => cut.heal() };
    }
    case 'loss': {
      const cut = await net.filter([fault.host], () => [`numgen random mod 100 < ${fault.percent} drop`], description);
      return { description, did: `nftables on ${fault.host}: numgen random mod 100 < ${fault.percent} drop`, heal: () => cut.heal() };
    }
    case 'bandwidth': {
      // The replication stream comes from the primary's Postgres port to the standby: capped as it arrives, on every node.
      const ports = ha.ports.nodes.join(', ');
      const rule = (host: string) => `ip saddr { ${cluster.dbHosts.filter((h) => h !== host).map((h) => net.lanAddress(h)).join(', ')} } tcp sport { ${ports} } limit rate over ${fault.kbytesPerSecond} kbytes/second drop`;
      const cut = await net.filter(cluster.dbHosts, (h) => [rule(h)], description);
      return { description, did: `nftables on ${cluster.dbHosts.join(', ')}: ${rule(cluster.dbHosts[0]!)}`, heal: () => cut.heal() };
    }
    case 'kill': {
      if (fault.what === 'writer') {
        const side = sideOf(fault.side);
        const writer = cluster.writer(side);
        const killed = writer && running(writer.child) ? signal([writer.child.pid!], 'SIGKILL') : [];
        await writer?.exited;
        let healed = false;
        return {
          description,
          did: killed.length ? `killed ${side.writerName} (pid ${killed[0]})` : `${side.writerName} was not running`,
          heal: async () => {
            if (healed) return;
            healed = true;
            cluster.startWriter(side);
          },
        };
      }
      if (fault.what === 'machine') {
        if (!ha.nodes[fault.node]?.child) return { description, did: `node ${fault.node + 1}'s keeper was down already`, heal: none };
        await cluster.killDbNode(fault.node);
        let healed = false;
        return {
          description,
          did: `killed node ${fault.node + 1}'s postmaster and keeper, down until healed`,
          heal: async () => {
            if (healed) return;
            healed = true;
            await cluster.startDbNode(fault.node);
          },
        };
      }
      // The monitor as a machine dies: pg_autoctl, its Postgres and every backend at once. A keeper: its pg_autoctl alone.
      const pids = fault.what === 'monitor' ? tree(ha.monitor.child?.process.pid).map((p) => p.pid)
        : [fault.what === 'keeper' ? keeperPid(fault.node) : cluster.postmaster(fault.node)].filter((p) => p !== undefined);
      const killed = signal(pids, 'SIGKILL');
      return { description, did: killed.length ? `killed pids ${killed.join(', ')}` : 'found nothing running to kill', heal: none };
    }
    case 'pause': {
      if (fault.what === 'writer') {
        const writer = cluster.writer(sideOf(fault.side));
        return paused(description, writer && running(writer.child) ? [writer.child.pid!] : [], `writer-${fault.side}`);
      }
      if (fault.what === 'monitor') return paused(description, tree(ha.monitor.child?.process.pid).map((p) => p.pid), 'the monitor\'s pg_autoctl and Postgres');
      if (fault.what === 'keeper') {
        return paused(description, tree(keeperPid(fault.node)).filter((p) => /^(\/usr\/bin\/)?pg_autoctl/.test(p.cmd)).map((p) => p.pid), `node ${fault.node + 1}'s keeper`);
      }
      // A standby's walreceiver: one of the nodes that has one now, by the fault's pick.
      const receivers = ha.nodes.map((_, i) => tree(keeperPid(i)).find((p) => p.cmd.startsWith('postgres: walreceiver'))).filter((p) => p !== undefined);
      const receiver = receivers[fault.pick % Math.max(1, receivers.length)];
      return paused(description, receiver ? [receiver.pid] : [], 'walreceiver');
    }
    case 'crash': {
      try {
        const pid = await cluster.crashPostgres(fault.node);
        return { description, did: `killed backend ${pid} of node ${fault.node + 1}`, heal: none };
      } catch (error) {
        return { description, did: `node ${fault.node + 1} had no backend to kill (${(error as Error).message})`, heal: none };
      }
    }
    case 'skew': {
      const side = sideOf(fault.side);
      const restart = async (skewMinutes?: number) => {
        const running = cluster.writer(side);
        running?.child.kill('SIGTERM');
        await running?.exited;
        cluster.startWriter(side, { skewMinutes });
      };
      await restart(fault.minutes);
      let healed = false;
      return {
        description,
        did: `restarted ${side.writerName} with FAKETIME=${fault.minutes > 0 ? '+' : ''}${fault.minutes}m`,
        heal: async () => {
          if (healed) return;
          healed = true;
          await restart();
        },
      };
    }
  }
}

