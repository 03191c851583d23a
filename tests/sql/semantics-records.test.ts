// The record's bookkeeping on pinned clocks: what moves updated_at and audits a correction, what
// data_source says, and the impossible rows the constraints refuse. Each test is rolled back.
import { describe, expect, it } from 'vitest';
import { inRollback } from '../support/db.ts';
import { payouts, statsAt } from '../support/stats-sql.ts';

describe('updated_at and corrections', () => {
  it('is the latest change of any published figure, and null before any data', async () => {
    const r = await inRollback(async (c) => {
      await payouts(c, [['2026-03-09', 1]]); // updated_at 2026-03-09T00:05:00Z
      await c.query(`insert into stats.capital values ('2026-03-10T07:00:00Z', 1, 1, 1)`);
      await c.query(`insert into stats.accrual values ('2026-03-10T06:00:00Z', 1, 1)`);
      await c.query(`insert into stats.breadth values ('2026-03-10T05:00:00Z', 3)`);
      return statsAt(c);
    });
    expect(r.updated_at).toBe('2026-03-10T07:00:00Z');
  });

  it('does not move when an upsert changes no value; a correction moves it and is audited', async () => {
    await inRollback(async (c) => {
      await payouts(c, [['2026-03-09', '12.5']]);
      await c.query(`insert into stats.payout (date, usd) values ('2026-03-09', 12.5)
        on conflict (date) do update set usd = excluded.usd`);
      expect((await statsAt(c)).updated_at).toBe('2026-03-09T00:05:00Z');
      expect((await c.query('select count(*)::int as n from stats.payout_correction')).rows[0].n).toBe(0);

      await c.query(`update stats.payout set usd = 13 where date = '2026-03-09'`);
      const audit = (await c.query('select date, old_usd, new_usd from stats.payout_correction')).rows;
      expect(audit).toEqual([{ date: '2026-03-09', old_usd: '12.5', new_usd: '13' }]);
      const moved = (await c.query(`select stats.iso(updated_at) as t, stats.iso(now()) as now from stats.payout`)).rows[0];
      expect(moved.t).toBe(moved.now);
      expect((await statsAt(c)).last_night_usd).toBe(13);
    });
  });
});

describe('data_source', () => {
  it('is "demo" only while all data is demo data, and the recorded real source otherwise', async () => {
    await inRollback(async (c) => {
      await c.query(`insert into stats.payout (date, usd, is_demo) values ('2026-03-09', 1, true)`);
      expect((await statsAt(c)).data_source).toBe('demo');
      await c.query(`update stats.settings set data_source = 'import'`);
      expect((await statsAt(c)).data_source).toBe('import');
    });
  });
});

describe('constraints reject impossible data', () => {
  const rejects = (sql: string) => inRollback((c) => c.query(sql));
  it.each([
    ['a negative payout', `insert into stats.payout (date, usd) values ('2026-03-01', -1)`],
    ['a NaN payout', `insert into stats.payout (date, usd) values ('2026-03-01', 'NaN')`],
    ['an infinite payout', `insert into stats.payout (date, usd) values ('2026-03-01', 'Infinity')`],
    ['an infinite cost', `insert into stats.trading_cost (date, usd) values ('2026-03-01', '-Infinity')`],
    ['a payout dated after today', `insert into stats.payout (date, usd) values ((now() at time zone 'utc')::date + 1, 1)`],
    ['a negative market count', `insert into stats.accrual values (now(), 1, -1)`],
    ['negative cash', `insert into stats.capital values (now(), -5, 1, 1)`],
    ['a negative breadth', `insert into stats.breadth values (now(), -2)`],
    ['a writer name that is not a plain token', `insert into stats.heartbeat (at, writer) values (now(), '<b>host</b>')`],
    ['a writer name over 32 characters', `insert into stats.heartbeat (at, writer) values (now(), repeat('w', 33))`],
  ])('%s', async (_name, sql) => {
    await expect(rejects(sql)).rejects.toThrow(/violates check constraint|lies after today|value for domain/);
  });
});
