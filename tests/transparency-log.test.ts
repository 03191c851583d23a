// The transparency log in the database: which nights enter it and when, what an entry's bytes are
// (RFC 8785, checked with the `canonicalize` package, an implementation we did not write), how a
// correction appends, that no role can change or remove an entry, and that the demo log goes when
// real data arrive. Runs on a private stack that starts with demo data.
import canonicalize from 'canonicalize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, todayUtc } from '../contract/dates.ts';
import { query } from './support/db.ts';
import { startTestStack, type TestStack } from './support/stack.ts';
import { cliEnv, runCli } from './support/writer.ts';

let stack: TestStack;
const today = todayUtc();

interface Entry { idx: string; date: string; entry: string; is_demo: boolean }
const entries = async () => query<Entry>(stack.db.adminUrl, 'select idx, date::text, entry, is_demo from stats.log_entry order by idx');
const history = async () => (await query<{ h: { nights: Record<string, any>[] } }>(stack.db.adminUrl, 'select stats.history_at(now()) as h'))[0]!.h;
const importLines = async (events: object[]) => {
  const run = await runCli(['import', '-'], cliEnv(stack), events.map((e) => JSON.stringify(e)).join('\n') + '\n');
  expect(run.code, run.stderr).toBe(0);
};

beforeAll(async () => {
  stack = await startTestStack({ seedDemo: true });
}, 120_000);
afterAll(async () => { await stack?.destroy(); });

describe('the demo log', () => {
  it('holds the final demo nights, marked demo, and the served nights name their entries', async () => {
    const log = await entries();
    expect(log.length).toBeGreaterThan(0);
    expect(log.every((e) => e.is_demo)).toBe(true);
    expect(log.every((e) => e.date <= addDays(today, -3))).toBe(true);
    const [landing] = await query<{ l: { demo: boolean; entries: string[] } }>(stack.db.adminUrl, 'select stats.log_at(now()) as l');
    expect(landing!.l.demo).toBe(true);
    expect(landing!.l.entries).toEqual(log.map((e) => e.entry));
  });
});

describe('real nights', () => {
  beforeAll(async () => {
    const events: object[] = [];
    for (let i = 10; i >= 1; i--) {
      const date = addDays(today, -i);
      events.push({ type: 'payout', date, usd: 10 + i + 0.5 }, { type: 'trading_cost', date, usd: i % 2 ? -1.25 : 3 });
      events.push({ type: 'capital', at: `${date}T12:00:00Z`, cash_usd: 1000.1, inventory_usd: 200, positions: 2 });
    }
    await importLines(events);
  }, 60_000);

  it('replace the demo log: the first real write removes it, and the real log starts at entry 0', async () => {
    const log = await entries();
    expect(log.some((e) => e.is_demo)).toBe(false);
    expect(log.map((e) => Number(e.idx))).toEqual(log.map((_, i) => i));
  });

  it('enter the log once final (three days after their date), in date order, as RFC 8785 JSON of the served figures', async () => {
    const log = await entries();
    const finalDates = Array.from({ length: 8 }, (_, i) => addDays(today, -10 + i));
    expect(log.map((e) => e.date)).toEqual(finalDates);
    const served = await history();
    for (const entry of log) {
      const parsed = JSON.parse(entry.entry);
      expect(canonicalize(parsed)).toBe(entry.entry);
      const night = served.nights.find((n) => n.date === entry.date)!;
      expect(parsed).toEqual({
        date: night.date, usd: night.usd, trading_cost_usd: night.trading_cost_usd, at_stake_usd: night.at_stake_usd,
        updated_at: night.updated_at, supersedes: null,
      });
      expect(night.log_index).toBe(Number(entry.idx));
    }
    // The last two settled nights are not final yet.
    for (const date of [addDays(today, -2), addDays(today, -1)]) {
      expect(served.nights.find((n) => n.date === date)!.log_index).toBeNull();
    }
  });

  it('a correction of a final night appends an entry that supersedes the old one; a repeated import appends nothing', async () => {
    const before = await entries();
    const date = addDays(today, -6);
    const old = before.filter((e) => e.date === date).at(-1)!;
    await importLines([{ type: 'payout', date, usd: 99.99 }]);
    const after = await entries();
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after).toHaveLength(before.length + 1);
    const added = after.at(-1)!;
    expect(added.date).toBe(date);
    expect(JSON.parse(added.entry)).toMatchObject({ usd: 99.99, supersedes: Number(old.idx) });
    expect((await history()).nights.find((n) => n.date === date)!.log_index).toBe(Number(added.idx));

    await importLines([{ type: 'payout', date, usd: 99.99 }]);
    expect(await entries()).toEqual(after);
  });

  it('no role can change or remove an entry: the writer, the owner and the superuser are refused alike', async () => {
    const writer = stack.db.urlFor('stats_writer');
    const attempts: [string, string][] = [
      [writer, "update stats.log_entry set entry = '{}' where idx = 0"],
      [writer, 'delete from stats.log_entry where idx = 0'],
      [writer, "insert into stats.log_entry (idx, date, entry, is_demo) values (1000, current_date, '{}', false)"],
      [writer, 'truncate stats.log_entry'],
      [stack.db.adminUrl, "update stats.log_entry set entry = '{}' where idx = 0"],
      [stack.db.adminUrl, 'delete from stats.log_entry'],
      [stack.db.adminUrl, 'truncate stats.log_entry'],
      [stack.db.adminUrl, "set role stats_owner; update stats.log_entry set entry = '{}' where idx = 0"],
      // An entry that would not follow the last one.
      [stack.db.adminUrl, "insert into stats.log_entry (idx, date, entry, is_demo) values (1000, current_date, '{}', false)"],
      // A demo entry in the real log.
      [stack.db.adminUrl, "insert into stats.log_entry (idx, date, entry, is_demo) select max(idx) + 1, current_date, '{}', true from stats.log_entry"],
    ];
    const before = await entries();
    for (const [url, statement] of attempts) {
      await expect(query(url, statement), statement).rejects.toThrow(/append-only|permission denied|never share a log/);
    }
    expect(await entries()).toEqual(before);
  });
});
