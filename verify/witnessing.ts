// When each night was logged: the checkpoint archive, cosigned by the policy's quorum, against each
// night's deadline, and the site's own claims about it.
import { isoSeconds, plural, utf8 } from '../log-reader/encoding.ts';
import { fail } from '../log-reader/failure.ts';
import { decoded, eachLimited, expectOk, get, MAX_DOCUMENT_BYTES } from '../log-reader/http.ts';
import { DAY_SECONDS, midnight } from './entries.ts';
import { ranges, type Night } from './completeness.ts';
import { parseCheckpoint, signedBy, type NoteKey } from '../log-reader/notes.ts';
import { cosignatures, quorumTime, type Policy } from './policy.ts';
import type { Log } from '../log-reader/tiles.ts';
import { treeHash } from '../log-reader/tree.ts';

/** Finality (3 days) plus a day: a night is witnessed on time when the quorum cosigned its first entry by midnight UTC of its date plus this. */
const ON_TIME_DAYS = 4;

export interface Witnessed { date: string; at: number | undefined; deadline: number; status: 'on time' | 'late' | 'pending' }

/**
 * Each date's witnessing: the earliest time the quorum cosigned an archived checkpoint holding the
 * date's first entry, on time when no later than the deadline; late when later, or when nothing
 * cosigned it by a deadline already past; pending while the deadline is ahead. `entries` is the log
 * in order; the wallet's entries have no date and are passed over.
 */
export function witnessing(entries: readonly ({ date: string } | { kind: string })[], archive: { size: number; quorumAt: number | undefined }[], now: number): Witnessed[] {
  const first = new Map<string, number>();
  entries.forEach((entry, index) => { if ('date' in entry && !first.has(entry.date)) first.set(entry.date, index); });
  return [...first].sort(([a], [b]) => (a < b ? -1 : 1)).map(([date, index]) => {
    const times = archive.filter((c) => c.size > index && c.quorumAt !== undefined).map((c) => c.quorumAt!);
    const at = times.length ? Math.min(...times) : undefined;
    const deadline = midnight(date) + ON_TIME_DAYS * DAY_SECONDS;
    const status = at !== undefined ? (at <= deadline ? 'on time' : 'late') : now > deadline ? 'late' : 'pending';
    return { date, at, deadline, status };
  });
}

/** What --strict refuses: the first night logged late after the first night witnessed on time (imported history before it is welcome). */
export function lateAfterOnTime(nights: Witnessed[]): Witnessed | undefined {
  const first = nights.find((w) => w.status === 'on time');
  return first && nights.find((w) => w.status === 'late' && w.date > first.date);
}

/** Every archived checkpoint up to the verified one, each a state of its tree, with when the quorum cosigned it. */
async function readArchive(site: URL, log: Log, sizes: number[], keys: NoteKey[], policy: Policy) {
  const wanted = [...new Set(sizes)].filter((size) => size <= log.checkpoint.size).sort((a, b) => a - b);
  const read = await eachLimited(wanted, async (size) => {
    const what = `archived checkpoint ${size}`;
    const answer = expectOk(await get(new URL(`${log.prefix}/checkpoint/${size}`, site), MAX_DOCUMENT_BYTES), what);
    const checkpoint = parseCheckpoint(utf8.decode(decoded(answer, what, MAX_DOCUMENT_BYTES)), what);
    if (checkpoint.origin !== log.checkpoint.origin || checkpoint.size !== size) fail(`${what} is checkpoint ${checkpoint.size} of "${checkpoint.origin}"`);
    return { what, checkpoint };
  });
  let unsigned = 0;
  // In size order, so that the first of several checkpoints of another history is the one named.
  const archive = read.map(({ what, checkpoint }) => {
    const size = checkpoint.size;
    // One signed by none of the keys this verifier trusts proves nothing, either way.
    if (!keys.some((k) => k.name === checkpoint.origin && signedBy(checkpoint, k, what))) { unsigned++; return { size, quorumAt: undefined }; }
    if (!treeHash(log.levels, 0, size).equals(checkpoint.root)) {
      fail(`${what} is signed by the log's key but is not a state of the log the checkpoint of ${log.checkpoint.size} entries names: the log signed two histories`);
    }
    return { size, quorumAt: quorumTime(policy, cosignatures(policy, checkpoint, what)) };
  });
  return { archive, unsigned };
}

/** The site's own account of when each night was witnessed must not claim more than the archive shows. */
function checkClaims(nights: Night[], witnessed: Witnessed[]): number {
  let behind = 0;
  // A night the log does not hold yet was witnessed by no one.
  for (const night of nights) {
    if (!witnessed.some((w) => w.date === night.date) && (night.witnessed_at !== null || night.witnessed_on_time === true)) {
      fail(`night ${night.date} in /api/history claims it was witnessed, but the log does not hold it`);
    }
  }
  for (const w of witnessed) {
    const night = nights.find((n) => n.date === w.date);
    if (!night) continue;
    const claimedAt = typeof night.witnessed_at === 'string' ? Date.parse(night.witnessed_at) / 1000 : night.witnessed_at === null ? undefined : NaN;
    const claimedOnTime = night.witnessed_on_time;
    const expected = w.status === 'on time' ? true : w.status === 'late' ? false : null;
    const shown = w.at === undefined ? 'no archived checkpoint holding its first entry is cosigned by the quorum' : `the quorum first cosigned it at ${isoSeconds(new Date(w.at * 1000))}`;
    if (Number.isNaN(claimedAt) || (claimedOnTime !== true && claimedOnTime !== false && claimedOnTime !== null)) fail(`night ${w.date} in /api/history has no witnessed_at (a time or null) and witnessed_on_time (true, false or null)`);
    if (claimedOnTime === true && expected !== true) fail(`night ${w.date} in /api/history claims it was witnessed on time, but ${shown}, after ${isoSeconds(new Date(w.deadline * 1000))}`);
    if (claimedAt !== undefined && (w.at === undefined || claimedAt < w.at)) fail(`night ${w.date} in /api/history claims the quorum cosigned it at ${night.witnessed_at}, but ${shown}`);
    // A null the archive has since overtaken is an answer computed before the cosignature came.
    if (claimedAt === undefined && (claimedOnTime === null || claimedOnTime === expected)) {
      if (w.at !== undefined || claimedOnTime !== expected) behind++;
      continue;
    }
    if (claimedAt !== w.at || claimedOnTime !== expected) fail(`night ${w.date} in /api/history says it was witnessed at ${String(night.witnessed_at)} (on time: ${String(claimedOnTime)}), but ${shown}`);
  }
  return behind;
}

/**
 * Each night's witnessing as the archive shows it, a line each, once the site's own claims agree with
 * it; with `strict`, a night logged late after the first one witnessed on time fails.
 */
export async function checkWitnessing(site: URL, log: Log, sizes: number[], keys: NoteKey[], policy: Policy, record: { entries: readonly ({ date: string } | { kind: string })[]; nights: Night[]; strict: boolean }): Promise<string[]> {
  const { archive, unsigned } = await readArchive(site, log, sizes, keys, policy);
  const each = witnessing(record.entries, archive, Date.now() / 1000);
  const behind = checkClaims(record.nights, each);
  const named = (status: Witnessed['status']) => each.filter((w) => w.status === status).map((w) => w.date);
  const [onTime, late, pending] = [named('on time'), named('late'), named('pending')];
  const lateAfter = lateAfterOnTime(each);
  if (record.strict && lateAfter) {
    fail(`night ${lateAfter.date} was logged late (${lateAfter.at === undefined ? 'no quorum cosigned it' : `the quorum cosigned it at ${isoSeconds(new Date(lateAfter.at * 1000))}`}, after its deadline ${isoSeconds(new Date(lateAfter.deadline * 1000))}), though night ${onTime[0]} before it was witnessed on time (--strict)`);
  }
  return [
    `  ${plural(archive.length, 'archived checkpoint')} read${unsigned ? `, ${unsigned} of them signed by no key this verifier trusts and not counted` : ''}: ${plural(onTime.length, 'night')} witnessed on time, ${late.length} logged late, ${pending.length} not yet witnessed with the deadline ahead`,
    ...(late.length ? [`  logged late: ${ranges(late)}`] : []),
    ...(behind ? [`  /api/history does not yet show the witnessing of ${plural(behind, 'night')} (an answer computed before the cosignatures came)`] : []),
  ];
}
