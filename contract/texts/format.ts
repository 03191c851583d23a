// How the wording writes a figure: amounts, counts and percentages in US English, and the words
// for "no data", which the SQL says as null (never a made-up zero).
const usdFormat = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 2 });
const intFormat = new Intl.NumberFormat('en-US');

/** "$1,234.56" (two decimals), or "n/a" for null. */
export function money(value: number | null | undefined): string {
  return value === null || value === undefined ? 'n/a' : usdFormat.format(value);
}

/** "1,234", or "n/a" for null. */
export function count(value: number | null | undefined): string {
  return value === null || value === undefined ? 'n/a' : intFormat.format(value);
}

/** "12.34%" (two decimals), or "n/a" for null. */
export function percent(value: number | null | undefined): string {
  return value === null || value === undefined ? 'n/a' : `${value.toFixed(2)}%`;
}

/** A date or time, or "none yet" before the first. */
export function orNone(value: string | null | undefined): string {
  return value ?? 'none yet';
}

/** "a, b and c". */
export function listed(names: readonly string[]): string {
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * An instant as a person reads it, in UTC to the minute: "26 Nov 2026, 07:27 UTC". Pages keep the
 * exact ISO 8601 value beside it (HTML's <time datetime>); an unreadable value is returned as it is.
 */
export function humanTime(iso: string): string {
  const t = new Date(iso);
  if (Number.isNaN(t.getTime())) return iso;
  const two = (n: number) => String(n).padStart(2, '0');
  return `${t.getUTCDate()} ${MONTHS[t.getUTCMonth()]} ${t.getUTCFullYear()}, ${two(t.getUTCHours())}:${two(t.getUTCMinutes())} UTC`;
}
