// Completeness both ways: the track record and the stats against the log as they were computed from it.
import { isRecord, plural } from '../log-reader/encoding.ts';
import { fail, Stale } from '../log-reader/failure.ts';
import { fieldValue, type Answer } from '../log-reader/http.ts';
import { dateOf, DAY_SECONDS, latestByDate, midnight, sameCents, uncommittedNights, type Entry, type LogEntry } from './entries.ts';
import { parseDictionary, type Member } from './structured-fields.ts';
import type { Log } from '../log-reader/tiles.ts';
import { HASH_SIZE, treeHash } from '../log-reader/tree.ts';

export interface Night { date: string; usd: number; log_index: number | null; witnessed_at: unknown; witnessed_on_time: unknown }

/**
 * Completeness both ways, against the log as it stood when /api/history was computed: every night
 * carries the index of the latest entry for its date with that entry's figures, or null when its
 * date has no entry yet, and then comes after every night in the log; every date of the log is a
 * night. The wallet's entries name no night and are not counted.
 */
export function checkNights(history: Record<string, unknown>, entries: readonly LogEntry[]): Night[] {
  if (!Array.isArray(history.nights)) fail('/api/history is not the track record (no "nights" list)');
  const latest = latestByDate(entries);
  const lastLogged = [...latest.keys()].at(-1);
  const nights: Night[] = [];
  let stale: string | undefined;
  for (const night of history.nights as unknown[]) {
    if (!isRecord(night) || typeof night.date !== 'string' || typeof night.usd !== 'number') return fail('/api/history has a night without a date and a payout');
    const date = night.date;
    if (nights.some((n) => n.date === date)) fail(`/api/history serves night ${date} twice`);
    const index = night.log_index ?? null;
    const entry = latest.get(date);
    nights.push({ date, usd: night.usd, log_index: index as number | null, witnessed_at: night.witnessed_at, witnessed_on_time: night.witnessed_on_time });
    if (index === null && entry === undefined) {
      if (lastLogged !== undefined && date < lastLogged) stale ??= `night ${date} in /api/history is not in the log, though later nights are (even after waiting for caches)`;
      continue;
    }
    const same = entry !== undefined && index === entry.index && sameCents(entry.usd, night.usd)
      && sameCents(entry.trading_cost_usd, night.trading_cost_usd) && sameCents(entry.at_stake_usd, night.at_stake_usd);
    if (!same) fail(`night ${date} in /api/history is not in the log`);
  }
  for (const [date, entry] of latest) {
    if (!nights.some((n) => n.date === date)) fail(`night ${date} is in the log (entry ${entry.index}) but missing from /api/history`);
  }
  if (stale) throw new Stale(stale);
  return nights;
}

/** Dates as ranges: "2026-01-03, 2026-01-05..2026-01-07". */
export function ranges(dates: string[]): string {
  const out: string[] = [];
  for (let i = 0; i < dates.length;) {
    let j = i;
    while (j + 1 < dates.length && midnight(dates[j + 1]!) - midnight(dates[j]!) === DAY_SECONDS) j++;
    out.push(i === j ? dates[i]! : `${dates[i]}..${dates[j]}`);
    i = j + 1;
  }
  return out.join(', ');
}

/** Which nights logged after the first wallet entry carry no commitment to their reward transfers, as a line. */
export function commitmentsLine(entries: readonly LogEntry[]): string {
  const { wallet, dates } = uncommittedNights(entries);
  if (wallet === undefined) return '  the log holds no wallet entry: no night carries a commitment to its reward transfers yet';
  return dates.length
    ? `  ${plural(dates.length, 'night')} logged after the first wallet entry (entry ${wallet}) with no commitment to the reward transfers: ${ranges(dates)}`
    : `  every night logged after the first wallet entry (entry ${wallet}) carries a commitment to its reward transfers`;
}

/** The calendar dates from since to the last night in the log that have no entry. */
export function gaps(since: string, logged: Map<string, Entry>): string[] {
  const last = [...logged.keys()].at(-1);
  const missing: string[] = [];
  if (last === undefined) return missing;
  for (let day = midnight(since); day <= midnight(last); day += DAY_SECONDS) if (!logged.has(dateOf(day))) missing.push(dateOf(day));
  return missing;
}

/** /api/stats's figures that the log determines: the all-time total, given the nights not yet final, and the final nights' daily values. */
export function checkStats(stats: Record<string, unknown>, nights: Night[], entries: readonly LogEntry[]): string {
  const latest = latestByDate(entries);
  const lastLogged = [...latest.keys()].at(-1);
  const pending = nights.filter((n) => !latest.has(n.date));
  const expected = [...latest.values()].reduce((sum, e) => sum + e.usd, 0) + pending.reduce((sum, n) => sum + n.usd, 0);
  const total = stats.total_usd;
  // Each night not yet final is rounded to cents, and so is the total.
  const tolerance = 0.005 * (pending.length + 1) + 1e-6;
  if (total === null ? nights.length > 0 : typeof total !== 'number' || Math.abs(total - expected) > tolerance) {
    fail(`/api/stats says the all-time total is ${String(total)} USD, but the log's ${latest.size} nights and the ${pending.length} nights not yet final in /api/history add up to ${expected.toFixed(2)} USD`);
  }
  if (!Array.isArray(stats.daily)) fail('/api/stats is not the stats record (no "daily" list)');
  for (const day of stats.daily as unknown[]) {
    if (!isRecord(day) || typeof day.date !== 'string') return fail('/api/stats has a daily value without a date');
    const entry = latest.get(day.date);
    if (entry && !sameCents(entry.usd, day.usd)) fail(`/api/stats says night ${day.date} paid ${String(day.usd)} USD, but the log says ${entry.usd}`);
    if (!entry && lastLogged !== undefined && day.date < lastLogged) fail(`/api/stats lists night ${day.date}, which is not in the log though later nights are`);
  }
  return `  /api/stats: the all-time total ${String(total)} USD and the daily values of final nights agree with the log to the cent`;
}

/**
 * The Log-Checkpoint field of a signed answer (an RFC 8941 Dictionary: origin, size, root): the tree
 * the answer was computed against, which must be the verified checkpoint or an older state of its
 * tree. Returns its size.
 */
export function answerCheckpoint(path: string, answer: Answer, log: Log): number {
  const field = fieldValue(answer.fields, 'log-checkpoint') ?? fail(`${path} carries no Log-Checkpoint field naming the log state it was computed against`);
  let members: Map<string, Member> | undefined;
  try { members = parseDictionary(field); } catch { members = undefined; }
  const bare = (name: string) => { const m = members?.get(name); return m && !('items' in m) ? m.value : undefined; };
  const [origin, size, root] = [bare('origin'), bare('size'), bare('root')];
  if (origin?.t !== 'str' || size?.t !== 'int' || size.v < 0 || root?.t !== 'bin' || root.v.length !== HASH_SIZE) {
    return fail(`the Log-Checkpoint field of ${path} is not origin="<origin>", size=<n>, root=:<base64>:`);
  }
  const checkpoint = log.checkpoint;
  if (origin.v !== checkpoint.origin) {
    const sentence = `${path} was computed against the log "${origin.v}", not "${checkpoint.origin}"`;
    // The demo log and the real one take each other's place in every cache in turn.
    if (origin.v === `${checkpoint.origin}/demo` || `${origin.v}/demo` === checkpoint.origin) throw new Stale(`${sentence} (even after waiting for caches)`);
    fail(sentence);
  }
  if (size.v > checkpoint.size) throw new Stale(`${path} was computed against a checkpoint of ${size.v} entries, past the ${checkpoint.size} of the checkpoint the site serves (even after waiting for caches)`);
  if (!treeHash(log.levels, 0, size.v).equals(root.v)) fail(`${path} was computed against a checkpoint of ${size.v} entries that is not a state of the log`);
  return size.v;
}
