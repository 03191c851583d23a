// The track record as the site serves it: an optional from/to date range (inclusive, UTC dates) cut
// from the landing_history record, as JSON or as CSV (RFC 4180: a header row, CRLF line ends, empty
// fields for nulls). The CSV's columns are the contract's night fields, in the contract's order.
import { isCalendarDate } from '../contract/dates.ts';
import { HistoryNightSchema, type HistoryRecord } from '../contract/records.ts';

export interface DateRange { from?: string; to?: string }

/** The range a query asks for, or the sentence that says what is wrong with it. */
export function parseRange(query: { from?: string; to?: string }): DateRange | { error: string } {
  const range: DateRange = {};
  for (const name of ['from', 'to'] as const) {
    const value = query[name];
    if (value === undefined) continue;
    if (!isCalendarDate(value)) return { error: `${name} must be a calendar date, YYYY-MM-DD (UTC); got "${value}".` };
    range[name] = value;
  }
  if (range.from && range.to && range.from > range.to) return { error: `from (${range.from}) is after to (${range.to}).` };
  return range;
}

/** The record with only the nights inside the range. */
export function withinRange(record: HistoryRecord, range: DateRange): HistoryRecord {
  if (!range.from && !range.to) return record;
  return { ...record, nights: record.nights.filter((n) => (!range.from || n.date >= range.from) && (!range.to || n.date <= range.to)) };
}

export const CSV_COLUMNS = Object.keys(HistoryNightSchema.shape) as (keyof typeof HistoryNightSchema.shape)[];

/** A field as RFC 4180 writes it: quoted only when it holds a comma, a quote or a line break. */
function csvField(value: string | number | boolean | null): string {
  if (value === null) return '';
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function historyCsv(record: HistoryRecord): string {
  const rows = record.nights.map((night) => CSV_COLUMNS.map((column) => csvField(night[column])).join(','));
  return [CSV_COLUMNS.join(','), ...rows].map((line) => `${line}\r\n`).join('');
}
