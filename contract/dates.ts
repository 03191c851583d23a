// UTC calendar dates as 'YYYY-MM-DD' strings, the form the records, the import and the queries use,
// and the day arithmetic on them. A UTC day always has 86,400,000 ms: ECMAScript time ignores leap
// seconds (https://tc39.es/ecma262/#sec-time-values-and-time-range) and UTC has no daylight saving.

export const DAY_MS = 86_400_000;

const DATE_SHAPE = /^\d{4}-\d{2}-\d{2}$/;

/** The UTC date of an instant. */
export function utcDate(at: Date | number): string {
  return new Date(at).toISOString().slice(0, 10);
}

/** Today's UTC date. */
export const todayUtc = (now: Date | number = Date.now()): string => utcDate(now);

/** The instant (ms since the epoch) a UTC date begins. */
export const midnightMs = (date: string): number => Date.parse(`${date}T00:00:00Z`);

/** The date `days` calendar days after `date` (before it when negative). */
export const addDays = (date: string, days: number): string => utcDate(midnightMs(date) + days * DAY_MS);

/** A real calendar date: the shape YYYY-MM-DD, and no 2026-02-30 or 2026-13-01 rolled over. */
export function isCalendarDate(value: string): boolean {
  if (!DATE_SHAPE.test(value)) return false;
  const ms = midnightMs(value);
  return !Number.isNaN(ms) && utcDate(ms) === value;
}

/** The dates from `from` through `through`, in order, that `held` does not hold. */
export function datesMissing(held: Iterable<string>, from: string, through: string): string[] {
  const have = new Set(held);
  const missing: string[] = [];
  for (let date = from; date <= through; date = addDays(date, 1)) if (!have.has(date)) missing.push(date);
  return missing;
}
