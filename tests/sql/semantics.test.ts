// The exact meaning of every figure, on pinned clocks and hand-checked data.
// Each test runs in a transaction that is rolled back.
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { addDays } from '../../contract/dates.ts';
import { inRollback } from '../support/db.ts';

const NOW = '2026-03-10T12:00:00Z'; // today = 2026-03-10

async function statsAt(client: pg.Client, now = NOW) {
  return (await client.query('select stats.stats_at($1) as r', [now])).rows[0].r;
}
async function healthAt(client: pg.Client, now = NOW) {
  return (await client.query('select stats.health_at($1) as r', [now])).rows[0].r;
}
async function payouts(client: pg.Client, rows: [string, number | string][]) {
  for (const [date, usd] of rows) {
    await client.query('insert into stats.payout (date, usd, updated_at) values ($1, $2, $3)', [date, usd, `${date}T00:05:00Z`]);
  }
}
/** n consecutive nights ending at `last`, usd = index + 1 (1 … n). */
function nights(last: string, n: number): [string, number][] {
  return Array.from({ length: n }, (_, i) => [addDays(last, i - (n - 1)), i + 1]);
}

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
    });
  });

  it('keeps the published field order', async () => {
    const r = await inRollback((c) => statsAt(c));
    expect(Object.keys(r)).toEqual(['updated_at', 'daily', 'last_night_usd', 'last_night_date', 'accrued_today_usd',
      'accrued_today_markets', 'markets_quoted_24h', 'total_usd', 'since_date', 'best_day_usd', 'worst_day_usd', 'capital', 'returns', 'data_source', 'log_checkpoint', 'audit']);
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

describe('landing_health', () => {
  async function seeded(c: pg.Client, { payout, accrual, heartbeat, writer = null }: { payout: string; accrual: string; heartbeat: string; writer?: string | null }) {
    await payouts(c, [[payout, 1]]);
    await c.query('insert into stats.accrual values ($1, 1, 1)', [accrual]);
    await c.query('insert into stats.heartbeat (at, writer) values ($1, $2)', [heartbeat, writer]);
  }

  /** The log's part of health while the log is empty and has no witness policy. */
  const NO_LOG = { size: 0, witnessed: false, witnesses: null, cosigned: null, checked_at: null, quorum_cosigned_at: null, halted: null };

  it('is ok at the edges of every threshold', async () => {
    const h = await inRollback(async (c) => {
      await seeded(c, { payout: '2026-03-09', accrual: '2026-03-10T11:44:01Z', heartbeat: '2026-03-10T11:55:00.001Z', writer: 'writer-5e1f09aa' });
      return healthAt(c);
    });
    expect(h).toEqual({
      status: 'ok',
      checked_at: '2026-03-10T12:00:00Z',
      data: { last_payout_date: '2026-03-09', payout_age_days: 1, fresh: true, last_accrual_at: '2026-03-10T11:44:01Z', accrual_age_minutes: 15, accrual_fresh: true, replica_lag_seconds: null, replica_streaming: null },
      writer: { last_heartbeat_at: '2026-03-10T11:55:00Z', alive: true, name: 'writer-5e1f09aa' },
      log: NO_LOG,
    });
  });

  it('with a witness policy, is degraded once the quorum has not cosigned for 26 hours, and whenever the log is halted', async () => {
    const base = { payout: '2026-03-09', accrual: '2026-03-10T11:50:00Z', heartbeat: '2026-03-10T11:59:00Z' };
    const witnessed = (lastQuorum: string | null, halted = false) => inRollback(async (c) => {
      await seeded(c, base);
      // One final night, signed, under a policy recorded a week before.
      await c.query(`insert into stats.log_entry (idx, date, entry, is_demo) values (0, '2026-03-01', '{}', false)`);
      await c.query(`insert into stats.log_checkpoint (size, root, note, vkey, is_demo, signed_at) values (1, 'r', 'n', 'v', false, '2026-03-03T00:00:00Z')`);
      await c.query(`insert into stats.log_policy (recorded_at, policy) values ('2026-03-03T00:00:00Z', 'quorum none')`);
      await c.query(`insert into stats.log_witness_round (at, size, witnesses, cosigned, quorum_met) values ('2026-03-10T11:00:00Z', 1, 3, '{a}', false)`);
      if (lastQuorum) await c.query(`insert into stats.log_witness_round (at, size, witnesses, cosigned, quorum_met) values ($1, 1, 3, '{a,b}', true)`, [lastQuorum]);
      if (halted) await c.query(`insert into stats.log_halt (at, reason) values ('2026-03-10T11:30:00Z', 'a test halt')`);
      return healthAt(c);
    });
    const fresh = await witnessed('2026-03-09T10:00:00Z');
    expect(fresh.status).toBe('ok');
    // The latest round fell short, and says so; the quorum's last cosigning is the one that counts.
    expect(fresh.log).toEqual({ size: 1, witnessed: true, witnesses: 3, cosigned: 1, checked_at: '2026-03-10T11:00:00Z', quorum_cosigned_at: '2026-03-09T10:00:00Z', halted: null });
    expect((await witnessed('2026-03-09T09:59:59Z')).status).toBe('degraded');
    // A policy under which the quorum never cosigned: 26 hours from when it was recorded.
    expect((await witnessed(null)).status).toBe('degraded');
    const halted = await witnessed('2026-03-10T10:00:00Z', true);
    expect(halted.status).toBe('degraded');
    expect(halted.log.halted).toBe('a test halt');
  });

  it('names the writer of the latest heartbeat as of its clock; an imported heartbeat names none', async () => {
    const names = await inRollback(async (c) => {
      await c.query(`insert into stats.heartbeat (at, writer) values ('2026-03-10T11:50:00Z', 'primary'), ('2026-03-10T11:58:00Z', 'standby'),
        ('2026-03-10T12:30:00Z', null)`);
      // One client runs one query at a time: asked in turn.
      const writers = [];
      for (const at of ['2026-03-10T11:54:00Z', NOW, '2026-03-10T12:31:00Z']) writers.push((await healthAt(c, at)).writer);
      return writers;
    });
    expect(names).toEqual([
      { last_heartbeat_at: '2026-03-10T11:50:00Z', alive: true, name: 'primary' },
      { last_heartbeat_at: '2026-03-10T11:58:00Z', alive: true, name: 'standby' },
      { last_heartbeat_at: '2026-03-10T12:30:00Z', alive: true, name: null },
    ]);
  });

  it('is degraded just past each threshold, one at a time', async () => {
    const base = { payout: '2026-03-09', accrual: '2026-03-10T11:50:00Z', heartbeat: '2026-03-10T11:59:00Z' };
    const stalePayout = await inRollback(async (c) => { await seeded(c, { ...base, payout: '2026-03-08' }); return healthAt(c); });
    expect(stalePayout.status).toBe('degraded');
    expect(stalePayout.data).toMatchObject({ payout_age_days: 2, fresh: false, accrual_fresh: true });

    const staleAccrual = await inRollback(async (c) => { await seeded(c, { ...base, accrual: '2026-03-10T11:44:00Z' }); return healthAt(c); });
    expect(staleAccrual.status).toBe('degraded');
    expect(staleAccrual.data).toMatchObject({ accrual_age_minutes: 16, accrual_fresh: false, fresh: true });

    const deadWriter = await inRollback(async (c) => { await seeded(c, { ...base, heartbeat: '2026-03-10T11:55:00Z' }); return healthAt(c); });
    expect(deadWriter.status).toBe('degraded');
    expect(deadWriter.writer).toEqual({ last_heartbeat_at: '2026-03-10T11:55:00Z', alive: false, name: null });
  });

  // The shared stack's database is a primary; a replica's lag is measured in tests/replica.test.ts.
  it('says nothing of replication on a primary, however long ago anything was replayed', async () => {
    const h = await inRollback(async (c) => {
      expect((await c.query('select pg_is_in_recovery() as r')).rows[0].r).toBe(false);
      return healthAt(c, '2030-01-01T00:00:00Z');
    });
    expect(h.data.replica_lag_seconds).toBeNull();
    expect(h.data.replica_streaming).toBeNull();
  });

  it('reads the WAL receiver as a role that may, whoever asks: a primary has none streaming', async () => {
    const asks = await inRollback(async (c) => {
      const answers = [];
      for (const role of ['stats_owner', 'stats_writer']) {
        await c.query(`set local role ${role}`);
        answers.push((await c.query('select stats.wal_receiver_streaming() as s, current_user as u')).rows[0]);
        await c.query('reset role');
      }
      return answers;
    });
    expect(asks).toEqual([{ s: false, u: 'stats_owner' }, { s: false, u: 'stats_writer' }]);
    const owner = await inRollback(async (c) => (await c.query(`select p.proowner::regrole::text as owner, p.prosecdef as definer,
        pg_has_role('stats_monitor', 'pg_read_all_stats', 'usage') as reads_stats, has_function_privilege('anon', p.oid, 'execute') as anon
      from pg_proc p where p.oid = 'stats.wal_receiver_streaming()'::regprocedure`)).rows[0]);
    expect(owner).toEqual({ owner: 'stats_monitor', definer: true, reads_stats: true, anon: false });
  });

  it('measures a replica\'s lag from whether it streams, received and replayed WAL and the last replayed commit', async () => {
    const lag = (streaming: boolean, received: string | null, replayed: string, commitAt: string | null, now = NOW) =>
      inRollback(async (c) => (await c.query('select stats.replica_lag_seconds($1, $2, $3, $4, $5) as s', [now, streaming, received, replayed, commitAt])).rows[0].s);
    // Streaming, and everything received is replayed: no lag, however old the last commit (an idle primary).
    expect(await lag(true, '0/3000100', '0/3000100', '2026-03-01T00:00:00Z')).toBe(0);
    expect(await lag(true, '0/3000100', '0/3000100', null)).toBe(0);
    // Behind: the last replayed commit's age, rounded down; a clock skew never makes it negative.
    expect(await lag(true, '0/3000200', '0/3000100', '2026-03-10T11:58:30.900Z')).toBe(89);
    expect(await lag(true, '0/3000200', '0/3000100', '2026-03-10T12:00:05Z')).toBe(0);
    // Not streaming, though all it received is replayed: the primary may have written since, so the
    // last replayed commit's age, not 0.
    expect(await lag(false, '0/3000100', '0/3000100', '2026-03-10T11:58:30.900Z')).toBe(89);
    // Nothing received by streaming yet (or streaming off): the last replayed commit's age.
    expect(await lag(false, null, '0/3000100', '2026-03-10T11:59:00Z')).toBe(60);
    // Behind, or not streaming, with no commit replayed since the server started: unknown.
    expect(await lag(true, '0/3000200', '0/3000100', null)).toBeNull();
    expect(await lag(false, '0/3000100', '0/3000100', null)).toBeNull();
  });

  it('is degraded with nulls on an empty database', async () => {
    const h = await inRollback((c) => healthAt(c));
    expect(h).toEqual({
      status: 'degraded',
      checked_at: '2026-03-10T12:00:00Z',
      data: { last_payout_date: null, payout_age_days: null, fresh: false, last_accrual_at: null, accrual_age_minutes: null, accrual_fresh: false, replica_lag_seconds: null, replica_streaming: null },
      writer: { last_heartbeat_at: null, alive: false, name: null },
      log: NO_LOG,
    });
  });
});
