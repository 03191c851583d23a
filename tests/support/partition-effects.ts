// What a partition scenario's fault must be seen to do, so that a fault that did nothing cannot pass:
// every dial across it connects before the fault and fails while it is in force (right after it is
// made and just before the heal), and then, as the scenario expects, the standby was promoted, or every
// write was held until the heal, or writes went on while the witness, cut off, cosigned nothing.
import type { History } from './partition-history.ts';

/** What a scenario's fault must do: promote the standby; hold every write until the heal; or let writes go on with nothing cosigned. */
export type Effect = 'failover' | 'held' | 'unwitnessed';

/** One dial across the fault (a connection it must stop), and how it ended at each moment. */
export interface DialResult {
  /** What was dialled, for the report: "n2 to n1:54329". */
  dial: string;
  before: string;
  during: string;
  beforeHeal: string;
}

export interface Observed {
  expect: Effect;
  dials: DialResult[];
  /** Whether a node other than the primary at the start took writes during the scenario. */
  failedOver: boolean;
  /** From when the fault was in force (it had been made) to when its heal began (epoch ms). */
  cutAt: number;
  healAt: number;
  history: History;
}

/** A witness request already on its way when the cut was made may still be answered within this. */
const IN_FLIGHT_MS = 2000;

const iso = (ms: number) => new Date(ms).toISOString();

/** What the fault failed to do, as sentences; none is a pass. */
export function effectFailures(o: Observed): string[] {
  const found: string[] = [];
  if (!o.dials.length) found.push('nothing was dialled across the fault: nothing shows it was in force');
  for (const d of o.dials) {
    if (d.before !== 'open') found.push(`the dial from ${d.dial} did not connect before the fault (${d.before}), so its failing after shows nothing`);
    for (const [when, result] of [['right after the fault was made', d.during], ['just before the heal', d.beforeHeal]] as const) {
      if (result === 'open') found.push(`the dial from ${d.dial} connected ${when}: the fault was not in force${when.startsWith('just') ? ' throughout' : ''}`);
      else if (result.startsWith('not dialled')) found.push(`the dial from ${d.dial} was not made ${when} (${result}): nothing shows the fault in force`);
    }
  }
  // Writes begun while the fault was in force and acknowledged before the heal.
  const acks = o.history.acks.filter((a) => a.began > o.cutAt && a.ackedAt < o.healAt);
  const nights = o.history.nights.filter((n) => n.outcome === 'ok' && n.startedAt > o.cutAt && n.endedAt < o.healAt);
  const window = `while the fault was in force (${iso(o.cutAt)} to ${iso(o.healAt)})`;
  if (o.expect === 'failover' && !o.failedOver) found.push('no failover: the standby never took writes, though this fault must make it');
  if (o.expect !== 'failover' && o.failedOver) found.push(`a failover happened, though this fault must ${o.expect === 'held' ? 'hold the writes' : 'leave the primary in place'}`);
  if (o.expect === 'held') {
    for (const a of acks) found.push(`${a.writer}'s heartbeat ${a.at} on ${a.server} was acknowledged ${window}: writes were to be held until the heal`);
    for (const n of nights) found.push(`night ${n.date}, imported by ${n.importer}, was acknowledged ${window}: writes were to be held until the heal`);
  }
  if (o.expect === 'unwitnessed') {
    if (!acks.length) found.push(`no heartbeat begun ${window} was acknowledged: writes were to go on`);
    for (const c of o.history.cosigned.filter((e) => e.at > o.cutAt + IN_FLIGHT_MS && e.at < o.healAt)) {
      found.push(`${c.by} cosigned the checkpoint of ${c.size} entries at ${iso(c.at)}, ${window}: the witness was to be cut off`);
    }
  }
  return found;
}
