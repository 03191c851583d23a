// The nemesis's schedule (tests/support/nemesis.ts): a fault every 5-20 s for the run's length, each
// drawn from one seed, so that NEMESIS_SEED replays the very schedule of a run (its times, faults,
// targets and durations; what the cluster does under them is its own). Faults overlap: none waits for
// the cluster to settle after the one before, so they land during failovers and recoveries too. Two
// faults never hold one thing at once (two splits of the one trunk, a writer killed while it is
// paused): a fault that would is drawn again.
//   split       the hosts in two, each database node on a side of its own, the monitor and each
//               writer and reader on either; the link between the sides down (silent)
//   one-way     every packet from one host to another dropped, the other way untouched: between the
//               database servers, a writer or a reader's node and a database server, a writer and the
//               witness (over the WAN)
//   loss        P % of the packets arriving at one host dropped at random (nftables numgen)
//   bandwidth   the replication between the database nodes capped at a few kilobytes a second
//   kill        kill -9 of a Postgres (its keeper restarts it), a node's machine (Postgres and keeper,
//               down until the fault ends), a keeper, the monitor (pg_autoctl, Postgres and every
//               backend), or a writer (started again when the fault ends)
//   pause       SIGSTOP for 5-40 s of a standby's walreceiver, a keeper, the monitor (its machine:
//               pg_autoctl and its Postgres) or a writer
//   crash       a Postgres backend killed, so its postmaster restarts every session through recovery
//   skew        one writer started again with its clock moved by minutes (libfaketime)

/** mulberry32: a small, well-mixed 32-bit generator; the same seed gives the same numbers everywhere. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type Side = 'a' | 'b';
export type Fault =
  | { kind: 'split'; sideA: string[] }
  | { kind: 'one-way'; from: string; to: string }
  | { kind: 'loss'; host: string; percent: number }
  | { kind: 'bandwidth'; kbytesPerSecond: number }
  | { kind: 'kill'; what: 'postgres' | 'machine' | 'keeper'; node: number }
  | { kind: 'kill'; what: 'monitor' }
  | { kind: 'kill'; what: 'writer'; side: Side }
  | { kind: 'pause'; what: 'walreceiver'; pick: number }
  | { kind: 'pause'; what: 'keeper'; node: number }
  | { kind: 'pause'; what: 'monitor' }
  | { kind: 'pause'; what: 'writer'; side: Side }
  | { kind: 'crash'; node: number }
  | { kind: 'skew'; side: Side; minutes: number };

/** One fault of the schedule: when it begins (ms from the run's start) and how long it lasts (0: a kill or crash, which the cluster recovers from by itself). */
export interface Planned {
  at: number;
  durationMs: number;
  fault: Fault;
}

/** The hosts of the partition cluster (tests/support/partition-topology.ts) with `nodes` database nodes. */
export function layoutHosts(nodes: number) {
  const db = ['n1', 'n2', 'n3'].slice(0, nodes);
  return { db, others: ['mon', 'wa', 'ra', 'wb', 'rb'], sideOf: { wa: 'a', ra: 'a', wb: 'b', rb: 'b' } as Record<string, Side> };
}

/** What a fault holds, so that no two faults hold one thing at once. */
function holds(f: Fault): string[] {
  switch (f.kind) {
    case 'split': return ['trunk'];
    case 'kill': case 'pause':
      return f.what === 'monitor' ? ['monitor'] : f.what === 'writer' ? [`writer ${f.side}`] : f.what === 'walreceiver' ? ['walreceiver'] : [`node ${f.node}`];
    case 'crash': return [`node ${f.node}`];
    case 'skew': return [`writer ${f.side}`];
    default: return [];
  }
}

/** The faults' weights: the network's faults and the processes' about evenly. */
const KINDS: [Fault['kind'], number][] = [['split', 3], ['one-way', 3], ['loss', 2], ['bandwidth', 1], ['kill', 3], ['pause', 3], ['crash', 1], ['skew', 1]];

/** Draws one fault and its duration. */
function draw(next: () => number, nodes: number): { fault: Fault; durationMs: number } {
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const seconds = (lo: number, hi: number) => int(lo, hi) * 1000;
  const { db, others, sideOf } = layoutHosts(nodes);
  const total = KINDS.reduce((sum, [, w]) => sum + w, 0);
  let roll = next() * total;
  const kind = KINDS.find(([, w]) => (roll -= w) < 0)![0];
  const node = int(0, nodes - 1);
  const side = pick(['a', 'b'] as const);
  switch (kind) {
    case 'split': {
      // n1 with side a, n2 with b, n3 on either; the monitor on either; a writer or reader mostly beside its side's node.
      const sideA = ['n1', ...db.slice(2).filter(() => next() < 0.5), ...others.filter((h) => (h === 'mon' ? next() < 0.5 : (sideOf[h] === 'a') === (next() < 0.8)))];
      return { fault: { kind, sideA }, durationMs: seconds(10, 60) };
    }
    case 'one-way': {
      const pairs: [string, string][] = [
        ...db.flatMap((x) => [...db, 'mon'].filter((y) => y !== x).flatMap((y): [string, string][] => [[x, y], [y, x]])),
        ...db.flatMap((x) => ['wa', 'wb', 'ra', 'rb'].flatMap((y): [string, string][] => [[x, y], [y, x]])),
        ['wa', 'wit'], ['wit', 'wa'], ['wb', 'wit'], ['wit', 'wb'],
      ];
      const [from, to] = pick(pairs);
      return { fault: { kind, from, to }, durationMs: seconds(10, 60) };
    }
    case 'loss': return { fault: { kind, host: pick([...db, ...others, 'wit']), percent: int(10, 60) }, durationMs: seconds(10, 40) };
    case 'bandwidth': return { fault: { kind, kbytesPerSecond: pick([4, 8, 16, 32, 64]) }, durationMs: seconds(10, 40) };
    case 'kill': {
      const what = pick(['postgres', 'machine', 'keeper', 'monitor', 'writer'] as const);
      if (what === 'monitor') return { fault: { kind, what }, durationMs: 0 };
      if (what === 'writer') return { fault: { kind, what, side }, durationMs: seconds(1, 10) };
      return { fault: { kind, what, node }, durationMs: what === 'machine' ? seconds(10, 40) : 0 };
    }
    case 'pause': {
      const what = pick(['walreceiver', 'keeper', 'monitor', 'writer'] as const);
      const durationMs = seconds(5, 40);
      if (what === 'walreceiver') return { fault: { kind, what, pick: int(0, 99) }, durationMs };
      if (what === 'keeper') return { fault: { kind, what, node }, durationMs };
      if (what === 'writer') return { fault: { kind, what, side }, durationMs };
      return { fault: { kind, what }, durationMs };
    }
    case 'crash': return { fault: { kind, node }, durationMs: 0 };
    case 'skew': return { fault: { kind, side, minutes: (next() < 0.5 ? -1 : 1) * int(2, 10) }, durationMs: seconds(20, 60) };
  }
}

/** After a fault ends, what it held stays held this long more: healing takes a moment. */
const HEAL_MARGIN_MS = 5000;

/** The schedule of a run of `seconds` with `nodes` database nodes, drawn from `seed`. */
export function schedule(seed: number, seconds: number, nodes: number): Planned[] {
  const next = random(seed);
  const planned: Planned[] = [];
  const busyUntil = new Map<string, number>();
  for (let at = (5 + Math.floor(next() * 16)) * 1000; at < seconds * 1000; at += (5 + Math.floor(next() * 16)) * 1000) {
    for (let tries = 0; tries < 10; tries++) {
      const { fault, durationMs } = draw(next, nodes);
      const held = holds(fault);
      if (held.some((h) => (busyUntil.get(h) ?? 0) > at)) continue;
      for (const h of held) busyUntil.set(h, at + durationMs + HEAL_MARGIN_MS);
      planned.push({ at, durationMs, fault });
      break;
    }
  }
  return planned;
}

/** A fault in words, for the run's report. */
export function describeFault(f: Fault): string {
  switch (f.kind) {
    case 'split': return `split: {${f.sideA.join(', ')}} apart from the rest (link down)`;
    case 'one-way': return `one-way drop from ${f.from} to ${f.to}`;
    case 'loss': return `${f.percent} % packet loss into ${f.host}`;
    case 'bandwidth': return `replication capped at ${f.kbytesPerSecond} kB/s`;
    case 'kill': return `kill -9 of ${f.what === 'monitor' ? 'the monitor' : f.what === 'writer' ? `writer-${f.side}` : `node ${f.node + 1}'s ${f.what === 'machine' ? 'machine (Postgres and keeper)' : f.what}`}`;
    case 'pause': return `SIGSTOP of ${f.what === 'monitor' ? 'the monitor' : f.what === 'writer' ? `writer-${f.side}` : f.what === 'walreceiver' ? 'a standby\'s walreceiver' : `node ${f.node + 1}'s keeper`}`;
    case 'crash': return `a backend of node ${f.node + 1} killed (Postgres restarts)`;
    case 'skew': return `writer-${f.side}'s clock ${f.minutes > 0 ? '+' : ''}${f.minutes} min`;
  }
}
