// The log's entries: each one night, as RFC 8785 JSON (https://www.rfc-editor.org/rfc/rfc8785), and a
// correction naming the entry it replaces.
import { isRecord, parseJson } from './encoding.ts';
import { fail } from './failure.ts';

export interface Entry { index: number; date: string; usd: number; trading_cost_usd: number | null; at_stake_usd: number | null; supersedes: number | null }

/** RFC 8785: ECMAScript number and string serialization, object members sorted by UTF-16 code units. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isRecord(value)) return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`;
  return JSON.stringify(value);
}

export const DATE = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;
export const DAY_SECONDS = 86_400;
const numberOrNull = (v: unknown): v is number | null => v === null || (typeof v === 'number' && Number.isFinite(v));
export const midnight = (date: string): number => Date.parse(`${date}T00:00:00Z`) / 1000;
export const dateOf = (seconds: number): string => new Date(seconds * 1000).toISOString().slice(0, 10);
/** The log holds amounts at full precision and the answers round them to cents: equal when they round alike. */
export const sameCents = (a: number | null, b: unknown): boolean => (a === null ? b === null : typeof b === 'number' && Math.abs(a - b) < 0.005 + 1e-9);

export function parseEntry(bytes: Buffer, index: number): Entry {
  const parsed = parseJson(bytes, `log entry ${index}`);
  if (canonicalJson(parsed) !== bytes.toString('utf8')) fail(`log entry ${index} is not RFC 8785 canonical JSON`);
  if (!isRecord(parsed) || typeof parsed.date !== 'string' || !DATE.test(parsed.date) || typeof parsed.usd !== 'number'
    || !numberOrNull(parsed.trading_cost_usd) || !numberOrNull(parsed.at_stake_usd) || typeof parsed.updated_at !== 'string'
    || !(parsed.supersedes === null || (Number.isSafeInteger(parsed.supersedes) && (parsed.supersedes as number) >= 0))) {
    return fail(`log entry ${index} is not a night (date, usd, trading_cost_usd, at_stake_usd, supersedes, updated_at)`);
  }
  return { index, date: parsed.date, usd: parsed.usd, trading_cost_usd: parsed.trading_cost_usd, at_stake_usd: parsed.at_stake_usd, supersedes: parsed.supersedes as number | null };
}

export function readEntries(raw: Buffer[]): Entry[] {
  const latest = new Map<string, number>();
  return raw.map((bytes, index) => {
    const entry = parseEntry(bytes, index);
    // A correction names the entry it replaces: the previous one for its date.
    const previous = latest.get(entry.date) ?? null;
    if (entry.supersedes !== previous) {
      fail(`log entry ${index} for ${entry.date} supersedes ${entry.supersedes ?? 'nothing'}, but the previous entry for that date is ${previous ?? 'none'}`);
    }
    latest.set(entry.date, index);
    return entry;
  });
}

/** Each date's latest entry, in date order. */
export const latestByDate = (entries: Entry[]): Map<string, Entry> =>
  new Map([...entries].sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : a.index - b.index)).map((e) => [e.date, e]));
