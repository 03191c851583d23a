// What the records say of a published audit, on pinned clocks, and what publish_audit refuses. Each
// test runs in a transaction that is rolled back, except the last, which commits (the public
// functions read the clock of their own transaction) and empties the data afterwards.
import type pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { inRollback, resetData, withClient } from '../support/db.ts';
import { append, checkpoint, commitment, ORIGIN, ROOT } from '../support/log-commitments.ts';
import { payouts } from '../support/stats-sql.ts';

const AUDITOR_KEY = `auditor.example+0a1b2c3d+${Buffer.alloc(33, 7).toString('base64')}`;
const SIGNATURE = Buffer.alloc(68, 9).toString('base64');

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
