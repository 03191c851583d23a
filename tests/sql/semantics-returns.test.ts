// The exact meaning of landing_stats' trailing returns, on pinned clocks and hand-checked data.
// Each test runs in a transaction that is rolled back.
import { describe, expect, it } from 'vitest';
import { inRollback } from '../support/db.ts';
import { nights, payouts, statsAt } from '../support/stats-sql.ts';

describe('trailing returns', () => {
  // 20 nights 02-19 … 03-10 (usd 1 … 20); window 15 → 02-24 … 03-10, rewards 6 + … + 20 = 195.
  const REWARDS = 195;

  it('sums rewards and signed costs in the window and divides by the mean daily at-stake', async () => {
    const r = await inRollback(async (c) => {
      await payouts(c, nights('2026-03-10', 20));
      // costs: 5 on each of 03-01 … 03-10 (50 in the window) and 100 on 02-20 (outside it)
      for (const [date] of nights('2026-03-10', 10)) await c.query('insert into stats.trading_cost (date, usd) values ($1, 5)', [date]);
      await c.query(`insert into stats.trading_cost (date, usd) values ('2026-02-20', 100)`);
      // at-stake: 03-09 last snapshot 1000 (an earlier one that day 5000 is not the last), 03-10 last 3000,
      // 02-20 outside the window; the mean over days that have one = (1000 + 3000) / 2 = 2000
      await c.query(`insert into stats.capital values
        ('2026-03-09T01:00:00Z', 4000, 1000, 1), ('2026-03-09T23:00:00Z', 800, 200, 1),
        ('2026-03-10T09:00:00Z', 2500, 500, 1), ('2026-02-20T12:00:00Z', 1, 1, 1)`);
      return statsAt(c);
    });
    expect(r.returns).toEqual({
      window_days: 15,
      from_date: '2026-02-24',
      to_date: '2026-03-10',
      rewards_usd: REWARDS,
      trading_costs_usd: 50,
      net_usd: 145,
      rewards_vs_costs: 3.9,
      gross_yield_pct: 9.75, // 195 / 2000 * 100
      net_yield_pct: 7.25, // 145 / 2000 * 100
    });
  });

  it('sums the nights as published, so rewards, costs and net foot with the history', async () => {
    const r = await inRollback(async (c) => {
      // 15 nights of 0.125 (published 0.13 each) and 10 costs of 0.005 (published 0.01 each): summed
      // at full precision they would be 1.88 and 0.05.
      for (const [date] of nights('2026-03-10', 15)) await c.query('insert into stats.payout (date, usd, updated_at) values ($1, 0.125, $2)', [date, `${date}T00:05:00Z`]);
      for (const [date] of nights('2026-03-10', 10)) await c.query('insert into stats.trading_cost (date, usd) values ($1, 0.005)', [date]);
      await c.query(`insert into stats.capital values ('2026-03-10T06:00:00Z', 99.996, 0, 1)`);
      return statsAt(c);
    });
    expect(r.returns).toMatchObject({ rewards_usd: 1.95, trading_costs_usd: 0.1, net_usd: 1.85 });
    expect(r.returns.rewards_vs_costs).toBe(19.5); // 1.95 / 0.10
    expect(r.returns.gross_yield_pct).toBe(1.95); // 1.95 / 100.00 (the base in cents) * 100
    expect(r.returns.net_yield_pct).toBe(1.85);
  });

  it('follows window_days, and falls back to the latest snapshot when no window day has one', async () => {
    const r = await inRollback(async (c) => {
      await payouts(c, nights('2026-03-10', 20));
      await c.query('update stats.settings set window_days = 7');
      await c.query(`insert into stats.capital values ('2026-02-01T00:00:00Z', 600, 400, 2)`);
      return statsAt(c);
    });
    expect(r.returns.window_days).toBe(7);
    expect(r.returns.from_date).toBe('2026-03-04');
    expect(r.returns.rewards_usd).toBe(14 + 15 + 16 + 17 + 18 + 19 + 20);
    expect(r.returns.gross_yield_pct).toBe(11.9); // 119 / 1000 * 100
  });

  it('gives no ratio when costs are zero or negative, and a gain raises net above rewards', async () => {
    const zero = await inRollback(async (c) => {
      await payouts(c, nights('2026-03-10', 20));
      await c.query(`insert into stats.trading_cost (date, usd) values ('2026-03-10', 0)`);
      return statsAt(c);
    });
    expect(zero.returns.trading_costs_usd).toBe(0);
    expect(zero.returns.rewards_vs_costs).toBeNull();
    expect(zero.returns.net_usd).toBe(REWARDS);

    const gain = await inRollback(async (c) => {
      await payouts(c, nights('2026-03-10', 20));
      await c.query(`insert into stats.trading_cost (date, usd) values ('2026-03-09', -12.5), ('2026-03-10', 2.5)`);
      return statsAt(c);
    });
    expect(gain.returns.trading_costs_usd).toBe(-10);
    expect(gain.returns.rewards_vs_costs).toBeNull();
    expect(gain.returns.net_usd).toBe(REWARDS + 10);
  });

  it('may be negative, and reports null (not 0) for what it cannot know', async () => {
    const loss = await inRollback(async (c) => {
      await payouts(c, [['2026-03-10', 10]]);
      await c.query(`insert into stats.trading_cost (date, usd) values ('2026-03-10', 30)`);
      await c.query(`insert into stats.capital values ('2026-03-10T06:00:00Z', 200, 0, 0)`);
      return statsAt(c);
    });
    expect(loss.returns.net_usd).toBe(-20);
    expect(loss.returns.net_yield_pct).toBe(-10);
    expect(loss.returns.rewards_vs_costs).toBe(0.33);

    const unknown = await inRollback(async (c) => {
      await payouts(c, [['2026-03-10', 10]]);
      return statsAt(c);
    });
    expect(unknown.returns).toMatchObject({ rewards_usd: 10, trading_costs_usd: null, net_usd: null, gross_yield_pct: null, net_yield_pct: null });
  });
});
