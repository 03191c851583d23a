// The reward-transfer commitments in the log and the audits published for it, on pinned clocks:
// which entries log_append writes (a night's `transfers`, the wallet's own entries), that a night
// logged before the commitments never gains one, that demo commitments go with the demo data, and
// what the records say of a published audit. Each test runs in a transaction that is rolled back,
// except the last, which commits (the public functions read the clock of their own transaction) and
// empties the data afterwards.
import canonicalize from 'canonicalize';
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { inRollback, resetData, withClient } from '../support/db.ts';

const NOW = '2026-03-10T12:00:00Z'; // today = 2026-03-10: nights up to 2026-03-07 are final
const ORIGIN = 'stats.example.org/log';

/** A commitment as the writer makes them: the base64 of a SHA-256 digest. */
const commitment = (what: string) => createHash('sha256').update(what).digest('base64');
const [WALLET_A, WALLET_B, WALLET_C] = ['wallet a', 'wallet b', 'wallet c'].map(commitment) as [string, string, string];
const ROOT = commitment('a tree root');
const AUDITOR_KEY = `auditor.example+0a1b2c3d+${Buffer.alloc(33, 7).toString('base64')}`;
const SIGNATURE = Buffer.alloc(68, 9).toString('base64');

interface Logged { idx: number; date: string | null; entry: string; is_demo: boolean }

async function payouts(c: pg.Client, rows: [string, number][], demo = false) {
  for (const [date, usd] of rows) {
    await c.query('insert into stats.payout (date, usd, updated_at, is_demo) values ($1, $2, $3, $4)', [date, usd, `${date}T00:05:00Z`, demo]);
  }
}
const append = async (c: pg.Client, now = NOW): Promise<number> => (await c.query('select stats.log_append($1) as n', [now])).rows[0].n;
const logged = async (c: pg.Client): Promise<Logged[]> => (await c.query('select idx::int, date, entry, is_demo from stats.log_entry order by idx')).rows;
const night = (date: string, usd: number, extra: { supersedes?: number; transfers?: string } = {}) => canonicalize({
  at_stake_usd: null, date, supersedes: extra.supersedes ?? null, trading_cost_usd: null,
  ...(extra.transfers ? { transfers: extra.transfers } : {}), updated_at: `${date}T00:05:00Z`, usd,
})!;
const wallet = (commitment: string, replaces: number | null) => canonicalize({ kind: 'wallet', replaces, wallet: commitment })!;

/** A checkpoint of the log's first `size` entries (its signature is not what these tests check). */
async function checkpoint(c: pg.Client, size: number, origin = ORIGIN, demo = false) {
  await c.query(`insert into stats.log_checkpoint (size, root, note, vkey, is_demo) values ($1, $2, $3, 'v', $4)`,
    [size, ROOT, `${origin}\n${size}\n${ROOT}\n\n— ${origin} c2ln\n`, demo]);
}

/** An attestation as its body is specified, signed (in form only) by the auditor. */
function attestation(o: { nights: string[]; matched: number; size?: number; root?: string; origin?: string; date?: string; signer?: string }) {
  return [
    'public-stats audit attestation v1',
    `origin ${o.origin ?? ORIGIN}`,
    `checkpoint ${o.size ?? 2} ${o.root ?? ROOT}`,
    'chain 137',
    `nights ${o.nights.join(',')}`,
    `matched ${o.matched}`,
    `date ${o.date ?? '2026-03-09'}`,
    `auditor ${AUDITOR_KEY}`,
    '',
    `— ${o.signer ?? 'auditor.example'} ${SIGNATURE}`,
    '',
  ].join('\n');
}
const publish = async (c: pg.Client, note: string) => (await c.query(`select a.note, a.auditor, a.auditor_key, a.audit_date, a.origin, a.checkpoint_size::int,
  a.checkpoint_root, a.chain_id, array_to_string(a.nights, ',') as nights, a.nights_matched, stats.iso(a.published_at) as published
  from stats.publish_audit($1) a`, [note])).rows[0];
/** The stats record as of the wall clock: an audit is published at clock_timestamp(), after the transaction's now(). */
const statsNow = async (c: pg.Client) => (await c.query('select stats.stats_at(clock_timestamp()) as r')).rows[0].r;
const logRecord = async (c: pg.Client) => (await c.query('select stats.log_record() as r')).rows[0].r;

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

describe('a published audit', () => {
  /** Two final nights logged and a checkpoint of them. */
  async function auditable(c: pg.Client) {
    await payouts(c, [['2026-03-06', 10.5], ['2026-03-07', 11.25]]);
    await append(c);
    await checkpoint(c, 2);
  }

  it('is the stats record\'s `audit` and moves its updated_at; null before', async () => {
    const { before, row, after } = await inRollback(async (c) => {
      await auditable(c);
      const before = await statsNow(c);
      const row = await publish(c, attestation({ nights: ['2026-03-07', '2026-03-06'], matched: 1 }));
      return { before, row, after: await statsNow(c) };
    });
    expect(before.audit).toBeNull();
    expect(before.updated_at).toBe('2026-03-07T00:05:00Z');
    expect(row).toMatchObject({
      auditor: 'auditor.example', auditor_key: AUDITOR_KEY, audit_date: '2026-03-09', origin: ORIGIN, checkpoint_size: 2,
      checkpoint_root: ROOT, chain_id: 137, nights: '2026-03-07,2026-03-06', nights_matched: 1,
    });
    expect(after.audit).toEqual({ date: '2026-03-09', auditor: 'auditor.example', nights_checked: 2, nights_matched: 1, checkpoint_size: 2, published_at: row.published });
    expect(after.updated_at).toBe(row.published);
    expect(Object.keys(after).at(-1)).toBe('audit');
  });

  it('is listed in the log record, verbatim, oldest first; the latest is the stats record\'s', async () => {
    const { first, second, log, stats } = await inRollback(async (c) => {
      await auditable(c);
      const first = await publish(c, attestation({ nights: ['2026-03-06'], matched: 1 }));
      const second = await publish(c, attestation({ nights: ['2026-03-07'], matched: 0, date: '2026-03-10' }));
      return { first, second, log: await logRecord(c), stats: await statsNow(c) };
    });
    expect(log.audits).toEqual([{ note: first.note, published_at: first.published }, { note: second.note, published_at: second.published }]);
    expect(Object.keys(log).at(-1)).toBe('audits');
    expect(log.updated_at).toBe(second.published);
    expect(stats.audit).toMatchObject({ date: '2026-03-10', nights_checked: 1, nights_matched: 0 });
  });

  it('is refused unless it is a well-formed attestation of a checkpoint the log signed, not published before; and is never removed', async () => {
    const refusals = await inRollback(async (c) => {
      await auditable(c);
      const good = attestation({ nights: ['2026-03-06'], matched: 1 });
      await publish(c, good);
      const tries: [string, string][] = [
        ['the same note again', good],
        ['another root', attestation({ nights: ['2026-03-06'], matched: 1, root: commitment('another root') })],
        ['another log', attestation({ nights: ['2026-03-06'], matched: 1, origin: 'elsewhere.example/log' })],
        ['a checkpoint never signed', attestation({ nights: ['2026-03-06'], matched: 1, size: 3 })],
        ['a night the checkpoint lacks', attestation({ nights: ['2026-03-08'], matched: 1 })],
        ['a night twice', attestation({ nights: ['2026-03-06', '2026-03-06'], matched: 1 })],
        ['more matched than checked', attestation({ nights: ['2026-03-06'], matched: 2 })],
        ['no night', attestation({ nights: [], matched: 0 })],
        ['no signature by the auditor', attestation({ nights: ['2026-03-06'], matched: 1, signer: 'someone.else' })],
        ['no signature at all', good.slice(0, good.indexOf('\n\n') + 1)],
        ['another version', good.replace('attestation v1', 'attestation v2')],
        ['removed', 'delete from stats.log_audit'],
        ['changed', 'update stats.log_audit set nights_matched = 0'],
      ];
      const out: Record<string, string> = {};
      for (const [what, note] of tries) {
        await c.query('savepoint s');
        out[what] = await (note.startsWith('delete') || note.startsWith('update') ? c.query(note) : publish(c, note))
          .then(() => 'accepted', (error: Error) => error.message);
        await c.query('rollback to savepoint s');
      }
      return out;
    });
    expect(refusals).toEqual({
      'the same note again': 'this attestation is already published',
      'another root': expect.stringMatching(/which the log did not sign/),
      'another log': expect.stringMatching(/which the log did not sign/),
      'a checkpoint never signed': expect.stringMatching(/which the log did not sign/),
      'a night the checkpoint lacks': 'the attestation names a night that checkpoint 2 does not hold',
      'a night twice': 'the attestation names a night twice',
      'more matched than checked': 'the attestation says 2 nights matched of the 1 it checked',
      'no night': 'line 5 of the attestation is not "nights <YYYY-MM-DD,...>"',
      'no signature by the auditor': 'the attestation carries no signature by its auditor, auditor.example',
      'no signature at all': expect.stringMatching(/is a signed note/),
      'another version': 'line 1 of the attestation is not "public-stats audit attestation v1"',
      removed: expect.stringMatching(/append-only: delete on log_audit refused/),
      changed: expect.stringMatching(/append-only: update on log_audit refused/),
    });
  });

  it("of the demo log is not shown once real data replace it", async () => {
    const { demo, real } = await inRollback(async (c) => {
      await payouts(c, [['2026-03-06', 10.5], ['2026-03-07', 11.25]], true);
      await append(c);
      await checkpoint(c, 2, `${ORIGIN}/demo`, true);
      await publish(c, attestation({ nights: ['2026-03-06'], matched: 1, origin: `${ORIGIN}/demo` }));
      const demo = { stats: await statsNow(c), log: await logRecord(c) };
      await c.query('select stats.purge_demo()');
      await payouts(c, [['2026-03-05', 9]]);
      await append(c);
      await checkpoint(c, 1);
      return { demo, real: { stats: await statsNow(c), log: await logRecord(c) } };
    });
    expect(demo.stats.audit).toMatchObject({ nights_checked: 1 });
    expect(demo.log.audits).toHaveLength(1);
    expect(real.stats.audit).toBeNull();
    expect(real.log.audits).toEqual([]);
  });
});

describe('the public records, once an audit is committed', () => {
  it('landing_stats() shows it as `audit` and landing_log() lists it', async () => {
    const { adminUrl } = inject('stack');
    try {
      await withClient(adminUrl, async (c) => {
        await c.query('begin');
        await payouts(c, [['2026-03-06', 10.5], ['2026-03-07', 11.25]]);
        await c.query('select stats.log_append(now())');
        await checkpoint(c, 2);
        await c.query('commit');
        const read = async () => (await c.query('select public.landing_stats() as s, public.landing_log() as l')).rows[0] as { s: Record<string, any>; l: Record<string, any> };
        const before = await read();
        expect(before.s.audit).toBeNull();
        expect(before.l.audits).toEqual([]);
        const row = await publish(c, attestation({ nights: ['2026-03-06', '2026-03-07'], matched: 2 }));
        const after = await read();
        expect(after.s.audit).toEqual({ date: '2026-03-09', auditor: 'auditor.example', nights_checked: 2, nights_matched: 2, checkpoint_size: 2, published_at: row.published });
        expect(after.s.updated_at).toBe(row.published);
        expect(after.l.audits).toEqual([{ note: row.note, published_at: row.published }]);
      });
    } finally {
      await resetData({ db: { adminUrl } });
    }
  });
});
