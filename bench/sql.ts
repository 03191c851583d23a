// The SQL functions' execution time and plans, and the data the benchmark fills in to time them at size.
import pg from 'pg';
import { median } from './report.ts';

export async function sqlTimings(adminUrl: string, label: string, call = 'stats.stats_at(now())', tables = ['accrual', 'breadth', 'capital', 'heartbeat']) {
  const warm: number[] = [];
  const cold: number[] = [];
  const timeOf = async (c: pg.Client) =>
    (await c.query(`explain (analyze, format json) select ${call}`)).rows[0]['QUERY PLAN'][0]['Execution Time'] as number;
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  for (let i = 0; i < 25; i++) { const t = await timeOf(c); if (i >= 5) warm.push(t); }
  // Every plan inside the function, via auto_explain on a fresh connection.
  const plans: { relation: string; node: string; index: string; indexCond: boolean }[] = [];
  const p = new pg.Client({ connectionString: adminUrl });
  await p.connect();
  p.on('notice', (n) => {
    const text = n.message ?? '';
    const json = text.slice(text.indexOf('{'));
    try {
      const walk = (node: Record<string, unknown>) => {
        if (node['Relation Name']) plans.push({ relation: String(node['Relation Name']), node: String(node['Node Type']), index: String(node['Index Name'] ?? ''), indexCond: 'Index Cond' in node });
        for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
      };
      walk(JSON.parse(json).Plan);
    } catch { /* not a plan notice */ }
  });
  await p.query(`load 'auto_explain'; set auto_explain.log_min_duration = 0; set auto_explain.log_nested_statements = on;
    set auto_explain.log_format = json; set auto_explain.log_level = notice; set client_min_messages = notice`);
  await p.query(`select ${call}; select stats.health_at(now())`);
  await p.end();
  await c.end();
  for (let i = 0; i < 5; i++) {
    const fresh = new pg.Client({ connectionString: adminUrl });
    await fresh.connect();
    cold.push(await timeOf(fresh));
    await fresh.end();
  }
  const history = new Set(tables);
  const scans = plans.filter((x) => history.has(x.relation));
  const seq = scans.filter((x) => /Seq Scan/.test(x.node));
  // A partial index of demo rows holds no history, so reading it whole is no scan of history.
  const withoutCond = scans.filter((x) => !x.indexCond && !/Seq Scan/.test(x.node) && !x.index.endsWith('_demo_idx'));
  return { label, warm: median(warm), cold: median(cold), scans: scans.length, seq: seq.length, withoutCond: withoutCond.map((x) => `${x.node} on ${x.relation}`) };
}

/** Ten years of nights. */
export const HISTORY_NIGHTS = 3650;

/** A payout and a trading cost for each of the last `nights` days (rows already there are kept). */
export async function fillNights(adminUrl: string, nights: number) {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    await c.query(`insert into stats.payout (date, usd) select (now() at time zone 'utc')::date - i, 20 + (i * 7 % 31)
      from generate_series(0, $1 - 1) i on conflict (date) do nothing`, [nights]);
    await c.query(`insert into stats.trading_cost (date, usd) select (now() at time zone 'utc')::date - i, (i % 11) - 3
      from generate_series(0, $1 - 1) i on conflict (date) do nothing`, [nights]);
    await c.query('analyze stats.payout; analyze stats.trading_cost');
  } finally {
    await c.end();
  }
}

export async function fillAccruals(adminUrl: string, total: number) {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  const { rows } = await c.query('select count(*)::int as n from stats.accrual');
  const missing = total - rows[0].n;
  const step = 500_000;
  for (let done = 0; done < missing; done += step) {
    const n = Math.min(step, missing - done);
    // minute-level snapshots going back in time from the oldest one present (about ten years at 5M)
    await c.query(`insert into stats.accrual (observed_at, usd, markets)
      select m - (i * interval '1 minute'), (i % 5000) / 100.0, i % 40
      from (select min(observed_at) as m from stats.accrual) o, generate_series(1, $1::int) i`, [n]);
    process.stdout.write(`  accrual rows: ${(rows[0].n + done + n).toLocaleString()} / ${total.toLocaleString()}\r`);
  }
  // capital snapshots at a fifth of the accrual count, also reaching back in time
  await c.query(`insert into stats.capital (observed_at, cash_usd, inventory_usd, positions)
    select m - (i * interval '5 minutes'), 5000 + i % 700, 1000 + i % 300, i % 30
    from (select min(observed_at) as m from stats.capital) o,
         generate_series(1, greatest(0, $1::int / 5 - (select count(*)::int from stats.capital))) i`, [total]);
  await c.query('analyze stats.accrual; analyze stats.capital');
  await c.end();
  process.stdout.write('\n');
}
