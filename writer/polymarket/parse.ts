// Defensive reading of Polymarket's numbers and dates, shared by the CLOB and the Data API reads:
// numbers may arrive as numeric strings (what the official SDK calls decimal-ish), dates as an ISO
// date-time, a YYYY-MM-DD string or epoch milliseconds.
import { midnightMs, utcDate } from '../../contract/dates.ts';

/** A number or a numeric string; anything else is an error naming the field. */
export function decimal(value: unknown, field: string): number {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n)) throw new Error(`unexpected response: ${field} is not a number`);
  return n;
}

/** The UTC date of an ISO date-time, a YYYY-MM-DD string or epoch milliseconds; undefined if none. */
export function rowDate(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const ms = typeof value === 'number' || /^\d{10,}$/.test(String(value)) ? Number(value) : String(value).length === 10 ? midnightMs(String(value)) : Date.parse(String(value));
  return Number.isNaN(ms) ? undefined : utcDate(ms);
}
