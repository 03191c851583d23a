// The record contract (contract/records.ts) and the SQL that produces the records name the same fields:
// a field added or renamed on one side only fails here.
import { describe, expect, inject, it } from 'vitest';
import { CapitalSchema, DailyPayoutSchema, HealthDataSchema, HealthRecordSchema, ReturnsSchema, StatsRecordSchema, WriterLivenessSchema } from '../../contract/records.ts';
import { withClient } from '../support/db.ts';

const { adminUrl } = inject('stack');
const keys = (value: object) => Object.keys(value).sort();
const shape = (schema: { shape: object }) => keys(schema.shape);

describe('the record contract', () => {
  it('has exactly the keys landing_stats() and landing_health() return, at every level', async () => {
    // One of every kind of row, inside a transaction that is rolled back, so every nested object is present.
    const { stats, health } = await withClient(adminUrl, async (c) => {
      await c.query('begin');
      try {
        await c.query(`insert into stats.payout (date, usd) values (current_date, 12.5) on conflict do nothing`);
        await c.query(`insert into stats.capital (observed_at, cash_usd, inventory_usd, positions) values (now(), 100, 50, 2) on conflict do nothing`);
        await c.query(`insert into stats.accrual (observed_at, usd, markets) values (now(), 3, 4) on conflict do nothing`);
        await c.query(`insert into stats.heartbeat (at) values (now()) on conflict do nothing`);
        return (await c.query('select public.landing_stats() as stats, public.landing_health() as health')).rows[0];
      } finally {
        await c.query('rollback');
      }
    });
    expect(stats.capital).not.toBeNull();
    expect(stats.daily.length).toBeGreaterThan(0);
    expect(keys(stats)).toEqual(shape(StatsRecordSchema));
    expect(keys(stats.daily[0])).toEqual(shape(DailyPayoutSchema));
    expect(keys(stats.capital)).toEqual(shape(CapitalSchema));
    expect(keys(stats.returns)).toEqual(shape(ReturnsSchema));
    expect(keys(health)).toEqual(shape(HealthRecordSchema));
    // data.tls is the gateway's, added only over HTTPS (tests/stack/tls.test.ts reads it there).
    expect(keys(health.data)).toEqual(shape(HealthDataSchema).filter((key) => key !== 'tls'));
    expect(keys(health.writer)).toEqual(shape(WriterLivenessSchema));
    expect(StatsRecordSchema.safeParse(stats).success).toBe(true);
    expect(HealthRecordSchema.safeParse(health).success).toBe(true);
  });
});
