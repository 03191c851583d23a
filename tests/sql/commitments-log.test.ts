// Which entries log_append writes on a pinned clock: a night's `transfers`, the wallet's own entries,
// never a commitment for a night logged before them, and demo commitments going with the demo data.
// Each test runs in a transaction that is rolled back.
import canonicalize from 'canonicalize';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { inRollback } from '../support/db.ts';
import { append, checkpoint, commitment } from '../support/log-commitments.ts';
import { NOW, payouts } from '../support/stats-sql.ts';

const [WALLET_A, WALLET_B, WALLET_C] = ['wallet a', 'wallet b', 'wallet c'].map(commitment) as [string, string, string];

interface Logged { idx: number; date: string | null; entry: string; is_demo: boolean }

const logged = async (c: pg.Client): Promise<Logged[]> => (await c.query('select idx::int, date, entry, is_demo from stats.log_entry order by idx')).rows;
const night = (date: string, usd: number, extra: { supersedes?: number; transfers?: string } = {}) => canonicalize({
  at_stake_usd: null, date, supersedes: extra.supersedes ?? null, trading_cost_usd: null,
  ...(extra.transfers ? { transfers: extra.transfers } : {}), updated_at: `${date}T00:05:00Z`, usd,
})!;
const wallet = (commitment: string, replaces: number | null) => canonicalize({ kind: 'wallet', replaces, wallet: commitment })!;

describe("a night's reward transfers in the log", () => {
  it('enter with the night, as RFC 8785 JSON, `transfers` between trading_cost_usd and updated_at', async () => {
    const [log, changed] = await inRollback(async (c) => {
      await payouts(c, [['2026-03-06', 10.5], ['2026-03-07', 11.25], ['2026-03-08', 12]]);
      await c.query(`insert into stats.night_transfers (date, commitment) values ('2026-03-07', $1), ('2026-03-08', $2)`, [commitment('07'), commitment('08')]);
      expect(await append(c)).toBe(2); // 2026-03-08 is not final yet
      const log = await logged(c);
      // Transfers found later (the night's commitment made again) supersede the entry with the new ones.
      await c.query(`update stats.night_transfers set commitment = $1 where date = '2026-03-07'`, [commitment('07 again')]);
      expect(await append(c)).toBe(1);
      return [log, (await logged(c)).slice(log.length)];
    });
    expect(log.map((e) => e.entry)).toEqual([night('2026-03-06', 10.5), night('2026-03-07', 11.25, { transfers: commitment('07') })]);
    expect(log[1]!.entry).toBe(`{"at_stake_usd":null,"date":"2026-03-07","supersedes":null,"trading_cost_usd":null,"transfers":"${commitment('07')}","updated_at":"2026-03-07T00:05:00Z","usd":11.25}`);
    expect(changed.map((e) => e.entry)).toEqual([night('2026-03-07', 11.25, { supersedes: 1, transfers: commitment('07 again') })]);
  });

  it('never enter for a night logged before it had a commitment: a correction of it supersedes it without them', async () => {
    const log = await inRollback(async (c) => {
      await payouts(c, [['2026-03-06', 10.5], ['2026-03-07', 11.25]]);
      expect(await append(c)).toBe(2);
      await c.query(`insert into stats.night_transfers (date, commitment) values ('2026-03-06', $1), ('2026-03-07', $2)`, [commitment('06'), commitment('07')]);
      await c.query(`insert into stats.wallet_commitment (commitment) values ($1)`, [WALLET_A]);
      expect(await append(c)).toBe(1); // the wallet's entry, and no night again
      await c.query(`update stats.payout set usd = 10.75, updated_at = '2026-03-09T10:00:00Z' where date = '2026-03-06'`);
      expect(await append(c)).toBe(1);
      // A night that turns final after the commitments came carries its own.
      await payouts(c, [['2026-03-08', 12]]);
      await c.query(`insert into stats.night_transfers (date, commitment) values ('2026-03-08', $1)`, [commitment('08')]);
      expect(await append(c, '2026-03-11T12:00:00Z')).toBe(1);
      return logged(c);
    });
    const parsed = log.map((e) => JSON.parse(e.entry) as Record<string, unknown>);
    expect(parsed.map((e) => e.date ?? e.kind)).toEqual(['2026-03-06', '2026-03-07', 'wallet', '2026-03-06', '2026-03-08']);
    expect(parsed[3]).not.toHaveProperty('transfers');
    expect(parsed[3]).toMatchObject({ supersedes: 0, usd: 10.75 });
    expect(parsed[4]).toMatchObject({ transfers: commitment('08'), supersedes: null });
  });
});

describe("the wallet's commitment in the log", () => {
  it('enters before the nights of the same append, and again, naming the one it replaces, each time it changes', async () => {
    const { log, history } = await inRollback(async (c) => {
      await c.query(`insert into stats.wallet_commitment (commitment, recorded_at) values ($1, '2026-03-01T00:00:00Z')`, [WALLET_A]);
      await payouts(c, [['2026-03-06', 10.5]]);
      expect(await append(c)).toBe(2);
      expect(await append(c)).toBe(0); // nothing changed
      await c.query(`insert into stats.wallet_commitment (commitment, recorded_at) values ($1, '2026-03-09T00:00:00Z')`, [WALLET_B]);
      // Recorded before the latest: not the wallet in force, so no entry.
      await c.query(`insert into stats.wallet_commitment (commitment, recorded_at) values ($1, '2026-03-05T00:00:00Z')`, [WALLET_C]);
      await payouts(c, [['2026-03-07', 11.25]]);
      expect(await append(c)).toBe(2);
      await checkpoint(c, 4);
      return { log: await logged(c), history: (await c.query('select stats.history_at($1) as h', [NOW])).rows[0].h };
    });
    expect(log.map((e) => [e.idx, e.date, e.entry])).toEqual([
      [0, null, wallet(WALLET_A, null)],
      [1, '2026-03-06', night('2026-03-06', 10.5)],
      [2, null, wallet(WALLET_B, 0)],
      [3, '2026-03-07', night('2026-03-07', 11.25)],
    ]);
    expect(log[0]!.entry).toBe(`{"kind":"wallet","replaces":null,"wallet":"${WALLET_A}"}`);
    expect(log.every((e) => canonicalize(JSON.parse(e.entry)) === e.entry && !e.is_demo)).toBe(true);
    // The track record names each night's own entry, never a wallet's.
    expect(history.nights.map((n: { date: string; log_index: number }) => [n.date, n.log_index])).toEqual([['2026-03-06', 1], ['2026-03-07', 3]]);
  });

  it('is the only kind of entry without a date', async () => {
    await inRollback(async (c) => {
      await c.query('savepoint s');
      await expect(c.query(`insert into stats.log_entry (idx, date, entry, is_demo) values (0, null, '{"usd":1}', false)`)).rejects.toThrow(/log_entry_night_dated/);
      await c.query('rollback to savepoint s');
      await expect(c.query(`insert into stats.log_entry (idx, date, entry, is_demo) values (0, '2026-03-01', $1, false)`, [wallet(WALLET_A, null)])).rejects.toThrow(/log_entry_night_dated/);
      await c.query('rollback to savepoint s');
      await expect(c.query(`insert into stats.wallet_commitment (commitment) values ('not base64')`)).rejects.toThrow(/wallet_commitment_commitment_check/);
      await c.query('rollback to savepoint s');
      // 44 characters, but not 32 bytes exactly (its last bits are not zero).
      await expect(c.query(`insert into stats.night_transfers (date, commitment) values ('2026-03-01', $1)`, [`${'A'.repeat(42)}B=`])).rejects.toThrow(/night_transfers_commitment_check/);
    });
  });
});

describe('demo commitments', () => {
  it('go into the demo log, and the demo purge removes them with it, real ones kept', async () => {
    const { before, after } = await inRollback(async (c) => {
      await payouts(c, [['2026-03-06', 10.5]], true);
      await c.query(`insert into stats.wallet_commitment (commitment, is_demo) values ($1, true)`, [WALLET_A]);
      await c.query(`insert into stats.night_transfers (date, commitment, is_demo) values ('2026-03-06', $1, true)`, [commitment('demo 06')]);
      expect(await append(c)).toBe(2);
      const before = await logged(c);
      await c.query(`set local role stats_writer`);
      await c.query(`insert into stats.wallet_commitment (commitment) values ($1)`, [WALLET_B]);
      await c.query(`insert into stats.night_transfers (date, commitment) values ('2026-03-07', $1)`, [commitment('07')]);
      await c.query('select stats.purge_demo()');
      await c.query('reset role');
      const after = {
        wallets: (await c.query('select commitment, is_demo from stats.wallet_commitment')).rows,
        nights: (await c.query('select date, is_demo from stats.night_transfers')).rows,
        log: await logged(c),
      };
      return { before, after };
    });
    expect(before.map((e) => [e.entry, e.is_demo])).toEqual([[wallet(WALLET_A, null), true], [night('2026-03-06', 10.5, { transfers: commitment('demo 06') }), true]]);
    expect(after).toEqual({ wallets: [{ commitment: WALLET_B, is_demo: false }], nights: [{ date: '2026-03-07', is_demo: false }], log: [] });
  });

  it('and real ones are written by the writer: a commitment recorded, a night upserted, nothing removed', async () => {
    await inRollback(async (c) => {
      await c.query(`set local role stats_writer`);
      await c.query(`insert into stats.wallet_commitment (commitment) values ($1)`, [WALLET_A]);
      const upsert = `insert into stats.night_transfers (date, commitment) values ('2026-03-07', $1)
        on conflict (date) do update set commitment = excluded.commitment`;
      await c.query(upsert, [commitment('07')]);
      await c.query(upsert, [commitment('07 again')]);
      expect((await c.query(`select commitment from stats.night_transfers`)).rows).toEqual([{ commitment: commitment('07 again') }]);
      for (const refused of [`delete from stats.night_transfers`, `delete from stats.wallet_commitment`, `update stats.wallet_commitment set recorded_at = now()`,
        `update stats.night_transfers set is_demo = true`, `insert into stats.log_audit (note) values ('x')`, `select stats.publish_audit('x')`]) {
        await c.query('savepoint s');
        await expect(c.query(refused), refused).rejects.toThrow(/permission denied/);
        await c.query('rollback to savepoint s');
      }
    });
  });
});
