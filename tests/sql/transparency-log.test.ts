// The transparency log in the database: which nights enter it and when, what an entry's bytes are
// (RFC 8785, checked with the `canonicalize` package, an implementation we did not write), how a
// correction appends, that no role can change or remove an entry or a checkpoint, that the demo log goes
// when real data arrive, and that the writer's signer signs each new tree and refuses one that does not
// extend what it signed. Runs on a private stack that starts with demo data.
import canonicalize from 'canonicalize';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, todayUtc } from '../../contract/dates.ts';
import { noteVerifierKey } from '../../contract/log-key.ts';
import { logOrigin } from '../../contract/paths.ts';
import type { LogRecord } from '../../contract/records.ts';
import { query } from '../support/db.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { cliEnv, runCli } from '../support/writer.ts';

let stack: TestStack;
const today = todayUtc();

/** A row of stats.log_entry; the wallet's commitments have no date. */
interface Entry { idx: string; date: string | null; entry: string; is_demo: boolean }
const entries = async () => query<Entry>(stack.db.adminUrl, 'select idx, date::text, entry, is_demo from stats.log_entry order by idx');
const history = async () => (await query<{ h: { nights: Record<string, any>[] } }>(stack.db.adminUrl, 'select stats.history_at(now()) as h'))[0]!.h;
const logRecord = async () => (await query<{ l: LogRecord }>(stack.db.adminUrl, 'select stats.log_record() as l'))[0]!.l;
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
    const nights = log.filter((e) => e.date !== null);
    expect(nights.length).toBeGreaterThan(0);
    expect(log.every((e) => e.is_demo)).toBe(true);
    expect(nights.every((e) => e.date! <= addDays(today, -3))).toBe(true);
    // The entries without a date are the demo wallet's commitment, and only that.
    for (const e of log.filter((e) => e.date === null)) expect(JSON.parse(e.entry)).toMatchObject({ kind: 'wallet' });
    const landing = await logRecord();
    expect(landing.demo).toBe(true);
    expect(landing.entries).toEqual(log.map((e) => e.entry));
    // Signed by the seed itself, under the demo log's own origin.
    expect(landing.checkpoints.map((c) => c.size)).toEqual([log.length]);
    expect(landing.checkpoints[0]!.note.split('\n').slice(0, 2)).toEqual([logOrigin(stack.cfg, true), String(log.length)]);
    expect(landing.vkey).toBe(await noteVerifierKey(logOrigin(stack.cfg, true), Buffer.from(stack.cfg.LOG_PUBLIC_KEY, 'base64url')));
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

  it('replace the demo log: the first real write removes it, and the real log starts at entry 0, signed under the real origin', async () => {
    const log = await entries();
    expect(log.some((e) => e.is_demo)).toBe(false);
    expect(log.map((e) => Number(e.idx))).toEqual(log.map((_, i) => i));
    const landing = await logRecord();
    expect(landing.demo).toBe(false);
    expect(landing.checkpoints.map((c) => c.size)).toEqual([log.length]);
    expect(landing.checkpoints[0]!.note.startsWith(`${logOrigin(stack.cfg, false)}\n${log.length}\n`)).toBe(true);
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
    // One checkpoint per new tree, the old ones kept.
    expect((await logRecord()).checkpoints.map((c) => c.size)).toEqual([before.length, after.length]);
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
      // The signed checkpoints and the witnesses' evidence alike.
      [writer, "update stats.log_checkpoint set note = '' where size = 1"],
      [writer, 'delete from stats.log_checkpoint'],
      [stack.db.adminUrl, 'delete from stats.log_checkpoint'],
      [stack.db.adminUrl, 'truncate stats.log_checkpoint'],
      [stack.db.adminUrl, "set role stats_owner; update stats.log_checkpoint set root = ''"],
      // A checkpoint smaller than the last, or of entries the log does not hold.
      [stack.db.adminUrl, "insert into stats.log_checkpoint (size, root, note, vkey, is_demo) values (1, '', '', '', false)"],
      [stack.db.adminUrl, "insert into stats.log_checkpoint (size, root, note, vkey, is_demo) values (1000, '', '', '', false)"],
      [stack.db.adminUrl, 'truncate stats.log_cosignature'],
      [stack.db.adminUrl, 'truncate stats.log_witnessed'],
    ];
    const before = await entries();
    const checkpoints = (await logRecord()).checkpoints;
    for (const [url, statement] of attempts) {
      await expect(query(url, statement), statement).rejects.toThrow(/append-only|permission denied|never share a log|only grow|does not hold|cannot truncate a table referenced/);
    }
    expect(await entries()).toEqual(before);
    expect((await logRecord()).checkpoints).toEqual(checkpoints);
  });

  it('a database that lost the log\'s tail, as a restored older backup has, gets no checkpoint: the log halts and says why', async () => {
    const state = path.join(mkdtempSync(path.join(tmpdir(), 'signer-')), 'state.json');
    const env = cliEnv(stack, { LOG_SIGNER_STATE: state });
    const corrected = [addDays(today, -5), addDays(today, -6)];
    const before = await query<{ date: string; usd: string; updated_at: Date }>(stack.db.adminUrl, `select date::text, usd::text, updated_at from stats.payout where date in ('${corrected.join("', '")}')`);
    const entriesBefore = (await entries()).length;
    // Two corrections, one new tree: the signer records the checkpoint it signs.
    let run = await runCli(['import', '-'], env, corrected.map((date) => `${JSON.stringify({ type: 'payout', date, usd: 55.55 })}\n`).join(''));
    expect(run.code, run.stderr).toBe(0);
    const signed = (await logRecord()).checkpoints.at(-1)!;
    expect(signed.size).toBe(entriesBefore + 2);
    expect(JSON.parse(readFileSync(state, 'utf8'))).toEqual({ [logOrigin(stack.cfg, false)]: { size: signed.size, root: signed.root } });
    // The database goes back to before that write, as with a restore of a backup taken before it: the
    // corrections, their entries and the checkpoint are gone (only the superuser, with triggers off, can do this).
    await query(stack.db.adminUrl, `set session_replication_role = replica;
      delete from stats.log_checkpoint where size = ${signed.size};
      delete from stats.log_entry where idx >= ${entriesBefore};
      ${before.map((p) => `update stats.payout set usd = ${p.usd}, updated_at = '${p.updated_at.toISOString()}' where date = '${p.date}';`).join('\n')}`);
    // Another correction: its entry is taken back, no checkpoint is signed, and the log halts.
    const date = addDays(today, -4);
    run = await runCli(['import', '-'], env, `${JSON.stringify({ type: 'payout', date, usd: 66.66 })}\n`);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('the transparency log is halted');
    const halted = await logRecord();
    expect(halted.checkpoints.at(-1)!.size).toBe(entriesBefore);
    expect(await entries()).toHaveLength(entriesBefore);
    expect(halted.halted!.reason).toBe(`the database holds ${entriesBefore + 1} entries of ${logOrigin(stack.cfg, false)}, but this signer already signed a checkpoint of ${signed.size}: a restore or a failover lost the log's tail`);
    // The figures themselves are written; only the log stops, and health says why.
    expect((await history()).nights.find((n) => n.date === date)!.usd).toBe(66.66);
    const [health] = await query<{ h: { status: string; log: { halted: string } } }>(stack.db.adminUrl, 'select stats.health_at(now()) as h');
    expect(health!.h.status).toBe('degraded');
    expect(health!.h.log.halted).toBe(halted.halted!.reason);
    // `sign` says so too, and appends nothing while the halt stands.
    run = await runCli(['sign'], env);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(halted.halted!.reason);
    expect(await entries()).toHaveLength(entriesBefore);
  });
});
