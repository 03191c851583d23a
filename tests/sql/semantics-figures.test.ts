// The exact meaning of landing_stats' daily figures, on pinned clocks and hand-checked data: an empty
// database, the nightly payouts, today's accrual, market breadth and capital. Each test runs in a
// transaction that is rolled back.
import { describe, expect, it } from 'vitest';
import { inRollback } from '../support/db.ts';
import { NOW, nights, payouts, statsAt } from '../support/stats-sql.ts';

describe('landing_stats on an empty database', () => {
  it('reports no data as null, the accrual and breadth as 0, and an empty history', async () => {
    const r = await inRollback((c) => statsAt(c));
    expect(r).toEqual({
      updated_at: null,
      daily: [],
      last_night_usd: null,
      last_night_date: null,
      accrued_today_usd: 0,
      accrued_today_markets: 0,
      markets_quoted_24h: 0,
      total_usd: null,
      since_date: null,
      best_day_usd: null,
      worst_day_usd: null,
      capital: null,
      returns: {
        window_days: 15, from_date: null, to_date: null, rewards_usd: null, trading_costs_usd: null,
        net_usd: null, rewards_vs_costs: null, gross_yield_pct: null, net_yield_pct: null,
      },
      data_source: null,
      log_checkpoint: null,
      audit: null,
      audits_unfinished: 0,
    });
  });

  it('keeps the published field order', async () => {
    const r = await inRollback((c) => statsAt(c));
    expect(Object.keys(r)).toEqual(['updated_at', 'daily', 'last_night_usd', 'last_night_date', 'accrued_today_usd',
      'accrued_today_markets', 'markets_quoted_24h', 'total_usd', 'since_date', 'best_day_usd', 'worst_day_usd', 'capital', 'returns', 'data_source', 'log_checkpoint', 'audit', 'audits_unfinished']);
  });
});

describe('nightly payouts', () => {
  it('lists the last 16 nights dated today or earlier, oldest first, and totals all of them', async () => {
    const r = await inRollback(async (c) => {
      await payouts(c, nights('2026-03-10', 20)); // 2026-02-19 … 2026-03-10, usd 1 … 20
      return statsAt(c);
    });
    expect(r.daily).toHaveLength(16);
    expect(r.daily[0]).toEqual({ date: '2026-02-23', usd: 5 });
    expect(r.daily[15]).toEqual({ date: '2026-03-10', usd: 20 });
    expect(r.last_night_usd).toBe(20);
    expect(r.last_night_date).toBe('2026-03-10');
    expect(r.total_usd).toBe(210); // 1 + … + 20
    expect(r.best_day_usd).toBe(20);
    expect(r.worst_day_usd).toBe(1);
    expect(r.since_date).toBe('2026-02-19');
  });

  it('does not show a payout dated after the pinned today', async () => {
    const r = await inRollback(async (c) => {
      await payouts(c, [['2026-03-09', 7], ['2026-03-10', 8]]);
      return statsAt(c, '2026-03-09T23:59:59Z');
    });
    expect(r.last_night_date).toBe('2026-03-09');
    expect(r.daily).toEqual([{ date: '2026-03-09', usd: 7 }]);
    expect(r.total_usd).toBe(7);
  });

  it('leaves gaps as gaps: no made-up zero nights', async () => {
    const r = await inRollback(async (c) => {
      await payouts(c, [['2026-03-01', 3], ['2026-03-05', 4], ['2026-03-09', 5]]);
      return statsAt(c);
    });
    expect(r.daily.map((d: { date: string }) => d.date)).toEqual(['2026-03-01', '2026-03-05', '2026-03-09']);
    expect(r.last_night_date).toBe('2026-03-09');
  });

  it('rounds each night once, half away from zero, and totals the nights as published', async () => {
    const r = await inRollback(async (c) => {
      await payouts(c, [['2026-03-08', '0.004'], ['2026-03-09', '0.004'], ['2026-03-10', '10.005']]);
      return statsAt(c);
    });
    expect(r.last_night_usd).toBe(10.01); // 10.005 → 10.01, half away from zero
    expect(r.daily.map((d: { usd: number }) => d.usd)).toEqual([0, 0, 10.01]);
    expect(r.total_usd).toBe(10.01);
    // Where summing first and rounding once would differ: 0.008 would round to 0.01, but the nights
    // as published are 0 and 0, and the total foots with them.
    const s = await inRollback(async (c) => {
      await payouts(c, [['2026-03-08', '0.004'], ['2026-03-09', '0.004']]);
      return statsAt(c);
    });
    expect(s.total_usd).toBe(0);
    // 1,000 nights of 0.125 (published 0.13 each): the full-precision sum would say 125.00.
    const many = await inRollback(async (c) => {
      await c.query(`insert into stats.payout (date, usd, updated_at)
        select d::date, 0.125, d from generate_series('2023-06-14'::timestamptz, '2026-03-09', interval '1 day') d`);
      return { stats: await statsAt(c), history: (await c.query('select stats.history_at($1) as r', [NOW])).rows[0].r };
    });
    const nightsPublished = many.history.nights as { usd: number; total_usd: number }[];
    expect(nightsPublished).toHaveLength(1000);
    expect(many.stats.total_usd).toBe(130);
    expect(nightsPublished.at(-1)!.total_usd).toBe(130);
    expect(nightsPublished.reduce((cents, n) => cents + Math.round(n.usd * 100), 0)).toBe(13000);
    // Every running total foots with the nights before it.
    nightsPublished.forEach((n, i) => expect(n.total_usd).toBe((i + 1) * 13 / 100));
  });

  it('counts totals from the configured since_date', async () => {
    const r = await inRollback(async (c) => {
      await payouts(c, nights('2026-03-10', 10)); // 03-01 … 03-10, usd 1 … 10
      await c.query("update stats.settings set since_date = '2026-03-06'");
      return statsAt(c);
    });
    expect(r.since_date).toBe('2026-03-06');
    expect(r.total_usd).toBe(6 + 7 + 8 + 9 + 10);
    expect(r.best_day_usd).toBe(10);
    expect(r.worst_day_usd).toBe(6); // the lowest night since since_date, not of the whole history
    expect(r.daily).toHaveLength(10); // the history itself is not cut
  });
});

describe("today's accrual", () => {
  it('takes the latest snapshot of today, and none observed after now', async () => {
    const r = await inRollback(async (c) => {
      await c.query(`insert into stats.accrual (observed_at, usd, markets) values
        ('2026-03-10T08:00:00Z', 10.111, 4), ('2026-03-10T11:55:00Z', 20.555, 6), ('2026-03-10T12:00:01Z', 99, 9)`);
      return statsAt(c);
    });
    expect(r.accrued_today_usd).toBe(20.56);
    expect(r.accrued_today_markets).toBe(6);
  });

  it("is 0 and 0 when nothing was observed yet today, never yesterday's value", async () => {
    const r = await inRollback(async (c) => {
      await c.query(`insert into stats.accrual (observed_at, usd, markets) values ('2026-03-09T23:59:59Z', 55, 12)`);
      return statsAt(c, '2026-03-10T00:00:00Z');
    });
    expect(r.accrued_today_usd).toBe(0);
    expect(r.accrued_today_markets).toBe(0);
  });

  it('counts a snapshot taken exactly at 00:00 UTC as today', async () => {
    const r = await inRollback(async (c) => {
      await c.query(`insert into stats.accrual (observed_at, usd, markets) values ('2026-03-10T00:00:00Z', 0.5, 1)`);
      return statsAt(c, '2026-03-10T00:00:00Z');
    });
    expect(r.accrued_today_usd).toBe(0.5);
    expect(r.accrued_today_markets).toBe(1);
  });
});

describe('market breadth', () => {
  it('shows the latest observation under 24 h old', async () => {
    const r = await inRollback(async (c) => {
      await c.query(`insert into stats.breadth values ('2026-03-09T12:00:01Z', 41)`);
      return statsAt(c);
    });
    expect(r.markets_quoted_24h).toBe(41);
  });

  it('shows 0 once the latest observation is 24 h old', async () => {
    const r = await inRollback(async (c) => {
      await c.query(`insert into stats.breadth values ('2026-03-08T10:00:00Z', 50), ('2026-03-09T12:00:00Z', 41)`);
      return statsAt(c);
    });
    expect(r.markets_quoted_24h).toBe(0);
  });
});

describe('capital', () => {
  it('is the latest snapshot with at_stake = cash + inventory', async () => {
    const r = await inRollback(async (c) => {
      await c.query(`insert into stats.capital values
        ('2026-03-09T10:00:00Z', 100, 50, 3), ('2026-03-10T11:00:00Z', 1000.004, 250.004, 7), ('2026-03-10T13:00:00Z', 1, 1, 1)`);
      return statsAt(c);
    });
    expect(r.capital).toEqual({ cash_usd: 1000, inventory_usd: 250, positions: 7, at_stake_usd: 1250.01, as_of: '2026-03-10T11:00:00Z' });
  });
});
