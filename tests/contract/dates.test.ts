// The UTC date helpers every part uses (contract/dates.ts), on dates where day arithmetic goes wrong:
// month and year ends, leap days, and shapes a Date would roll over instead of refusing.
import { describe, expect, it } from 'vitest';
import { addDays, isCalendarDate, midnightMs, todayUtc, utcDate } from '../../contract/dates.ts';

describe('UTC dates', () => {
  it('take the UTC date of an instant, whatever the local time zone', () => {
    expect(utcDate(new Date('2026-03-01T23:59:59.999-05:00'))).toBe('2026-03-02');
    expect(utcDate(Date.UTC(2026, 0, 1) - 1)).toBe('2025-12-31');
    expect(todayUtc(Date.UTC(2028, 1, 29, 12))).toBe('2028-02-29');
    expect(midnightMs('2026-01-01')).toBe(Date.UTC(2026, 0, 1));
  });

  it('move by calendar days across month, year and leap-day boundaries', () => {
    expect(addDays('2026-02-28', 1)).toBe('2026-03-01');
    expect(addDays('2028-02-28', 1)).toBe('2028-02-29');
    expect(addDays('2026-12-31', 1)).toBe('2027-01-01');
    expect(addDays('2026-01-01', -1)).toBe('2025-12-31');
    expect(addDays('2026-03-10', -3652)).toBe('2016-03-10'); // ten years, two leap days (2020, 2024)
    expect(addDays('2026-03-10', 0)).toBe('2026-03-10');
  });

  it('accept only real calendar dates in the YYYY-MM-DD shape', () => {
    for (const good of ['2026-01-01', '2028-02-29', '0000-01-01', '9999-12-31']) expect(isCalendarDate(good), good).toBe(true);
    for (const bad of ['2026-02-29', '2026-02-30', '2026-13-01', '2026-00-10', '2026-1-01', '20260101', '2026-01-01T00:00:00Z', ' 2026-01-01', ''])
      expect(isCalendarDate(bad), bad).toBe(false);
  });
});
