// What the records say of a published audit, on pinned clocks, and what publish_audit refuses. Each
// test runs in a transaction that is rolled back, except the last, which commits (the public
// functions read the clock of their own transaction) and empties the data afterwards.
import type pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { inRollback, resetData, withClient } from '../support/db.ts';
import { AUDITOR_KEY, LOG_KEY, NONCE, OTHER_KEY, PAYERS_SHA256, attestation, listAuditors, logRecord, openAudit, publish, statsNow, type Opening } from '../support/audit-sql.ts';
import { append, checkpoint, commitment, ORIGIN, ROOT } from '../support/log-commitments.ts';
import { payouts } from '../support/stats-sql.ts';

/** A version 1 attestation's row, as published before audits began in the log: no opening, choice or result. */
async function publishedV1(c: pg.Client, date: string) {
  const note = ['public-stats audit attestation v1', `origin ${ORIGIN}`, `checkpoint 2 ${ROOT}`, 'chain 137', 'nights 2026-03-06', 'matched 1',
    `date ${date}`, `auditor ${AUDITOR_KEY}`, '', `— auditor.example ${Buffer.alloc(68, 9).toString('base64')}`, ''].join('\n');
  return (await c.query(`insert into stats.log_audit (note, auditor, auditor_key, audit_date, origin, checkpoint_size, checkpoint_root, chain_id, nights, nights_matched)
    values ($1, 'auditor.example', $2, $3, $4, 2, $5, 137, '{2026-03-06}', 1) returning note, stats.iso(published_at) as published`, [note, AUDITOR_KEY, date, ORIGIN, ROOT])).rows[0];
}

describe('a published audit', () => {
  /**
   * Two final nights logged (2026-03-06 at entry 0, 2026-03-07 at 1), a checkpoint of them, a policy
   * listing the auditor, an audit of that checkpoint opened (entry 2), and a checkpoint holding the opening.
   */
  async function auditable(c: pg.Client, opening: Opening = {}): Promise<number> {
    await payouts(c, [['2026-03-06', 10.5], ['2026-03-07', 11.25]]);
    await append(c);
    await checkpoint(c, 2);
    await listAuditors(c, AUDITOR_KEY);
    const idx = await openAudit(c, opening);
    await checkpoint(c, 3);
    return idx;
  }

  it("is the stats record's `audit`, how its nights were chosen and its result with it, and moves its updated_at; null before, while its opening is unfinished", async () => {
    const { opened, before, row, after } = await inRollback(async (c) => {
      const opened = await auditable(c, { sample: 2 });
      const before = await statsNow(c);
      const row = await publish(c, attestation({ nights: [{ date: '2026-03-07', index: 1, pass: false }, { date: '2026-03-06', index: 0, pass: true }] }));
      return { opened, before, row, after: await statsNow(c) };
    });
    expect(opened).toBe(2);
    expect(before.audit).toBeNull();
    expect(before.audits_unfinished).toBe(1);
    expect(before.updated_at).toBe('2026-03-07T00:05:00Z');
    expect(row).toMatchObject({
      auditor: 'auditor.example', auditor_key: AUDITOR_KEY, audit_date: '2026-03-09', origin: ORIGIN, checkpoint_size: 2,
      checkpoint_root: ROOT, chain_id: 137, nights: '2026-03-06,2026-03-07', nights_matched: 1,
      opening_idx: 2, chosen: 'drawn', sample_k: 2, nonce: NONCE, log_key: LOG_KEY, payers_sha256: PAYERS_SHA256, result: 'fail',
    });
    expect(after.audit).toEqual({
      date: '2026-03-09', auditor: 'auditor.example', chosen: 'drawn', result: 'fail', nights_checked: 2, nights_matched: 1, checkpoint_size: 2, published_at: row.published,
    });
    expect(after.audits_unfinished).toBe(0);
    expect(after.updated_at).toBe(row.published);
    expect(Object.keys(after).slice(-2)).toEqual(['audit', 'audits_unfinished']);
  });

  it("is listed in the log record, verbatim, oldest first, marked whether the policy in force lists its auditor; the stats record's is the latest version 2 one by a listed auditor", async () => {
    const { first, second, third, v1, log, stats, relisted } = await inRollback(async (c) => {
      await auditable(c);
      const named = await openAudit(c, { nonce: `${NONCE}-named`, nights: ['2026-03-07'] });
      const other = await openAudit(c, { auditor: OTHER_KEY, nonce: `${NONCE}-other` });
      await checkpoint(c, 5);
      const first = await publish(c, attestation());
      const second = await publish(c, attestation({ opening: named, nonce: null, nights: [{ date: '2026-03-07', index: 1, pass: false }], date: '2026-03-10' }));
      // Later, each by a key or in a version that never counts: an auditor the policy does not list, and version 1.
      const third = await publish(c, attestation({ opening: other, nonce: `${NONCE}-other`, auditorKey: OTHER_KEY, signer: 'other.example', date: '2026-03-11' }));
      const v1 = await publishedV1(c, '2026-03-12');
      const found = { log: await logRecord(c), stats: await statsNow(c) };
      // The policy now lists the other auditor too: its attestation counts from then on.
      await listAuditors(c, AUDITOR_KEY, OTHER_KEY);
      return { first, second, third, v1, ...found, relisted: { log: await logRecord(c), stats: await statsNow(c) } };
    });
    expect(log.audits).toEqual([
      { note: first.note, published_at: first.published, listed: true }, { note: second.note, published_at: second.published, listed: true },
      { note: third.note, published_at: third.published, listed: false }, { note: v1.note, published_at: v1.published, listed: true },
    ]);
    expect(Object.keys(log).at(-1)).toBe('audits');
    expect(log.updated_at).toBe(v1.published);
    expect(stats.audit).toEqual({
      date: '2026-03-10', auditor: 'auditor.example', chosen: 'named', result: 'fail', nights_checked: 1, nights_matched: 0, checkpoint_size: 2, published_at: second.published,
    });
    expect(stats.audits_unfinished).toBe(0);
    expect(relisted.log.audits.map((a: { listed: boolean }) => a.listed)).toEqual([true, true, true, true]);
    expect(relisted.stats.audit).toMatchObject({ date: '2026-03-11', auditor: 'other.example', chosen: 'drawn', result: 'pass', published_at: third.published });
  });

  it('is refused unless it is a well-formed attestation of a checkpoint the log signed, for an opening in the signed log by its auditor, with the opening\'s nonce and choice, each night at its latest entry, once per opening; and is never removed', async () => {
    const refusals = await inRollback(async (c) => {
      await auditable(c);
      const other = await openAudit(c, { auditor: OTHER_KEY, nonce: `${NONCE}-other` });
      const named = await openAudit(c, { nonce: `${NONCE}-named`, nights: ['2026-03-06'] });
      await checkpoint(c, 5);
      const unsigned = await openAudit(c, { nonce: `${NONCE}-unsigned` });
      expect([other, named, unsigned]).toEqual([3, 4, 5]);
      const good = attestation();
      await publish(c, good);
      const night = (date: string, index: number | null, pass = true) => [{ date, index, pass }];
      const tries: [string, string][] = [
        ['the same note again', good],
        ['a second attestation of one opening', attestation({ date: '2026-03-10' })],
        ['another root', attestation({ root: commitment('another root') })],
        ['another log', attestation({ origin: 'elsewhere.example/log' })],
        ['a checkpoint never signed', attestation({ size: 4 })],
        ['no opening: an entry that is a night', attestation({ opening: 0 })],
        ['an opening the log has not signed yet', attestation({ opening: unsigned, nonce: `${NONCE}-unsigned` })],
        ['an entry beyond the log', attestation({ opening: 99 })],
        ["another auditor's opening", attestation({ opening: other, nonce: `${NONCE}-other` })],
        ['an opening of another checkpoint', attestation({ size: 5, nights: night('2026-03-06', 0) })],
        ["a nonce that does not hash to the opening's", attestation({ nonce: `${NONCE}x` })],
        ['another number of nights drawn', attestation({ k: 2 })],
        ['a draw where the owner named the nights', attestation({ opening: named })],
        ['named nights where the opening draws', attestation({ nonce: null })],
        ['nights other than the opening named', attestation({ opening: named, nonce: null, nights: night('2026-03-07', 1) })],
        ['a night at an entry other than its latest', attestation({ nights: night('2026-03-06', 1) })],
        ['a night the checkpoint lacks, given an entry', attestation({ nights: night('2026-03-08', 2) })],
        ['a night twice', attestation({ nights: [...night('2026-03-06', 0), ...night('2026-03-06', 0)] })],
        ['pass though a night failed', attestation({ nights: night('2026-03-06', 0, false), result: 'pass' })],
        ['no night', attestation({ nights: [] })],
        ['no signature by the auditor', attestation({ signer: 'someone.else' })],
        ['no signature at all', good.slice(0, good.indexOf('\n\n') + 1)],
        ['version 1', `public-stats audit attestation v1\norigin ${ORIGIN}\ncheckpoint 2 ${ROOT}\nchain 137\nnights 2026-03-06\nmatched 1\ndate 2026-03-09\nauditor ${AUDITOR_KEY}${good.slice(good.indexOf('\n\n'))}`],
        ['another version', good.replace('attestation v2', 'attestation v3')],
        ['the named audit, as opened', attestation({ opening: named, nonce: null, nights: night('2026-03-06', 0) })],
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
    const notOpening = (i: number) => `entry ${i} of the signed log is not an audit opening`;
    expect(refusals).toEqual({
      'the same note again': 'this attestation is already published',
      'a second attestation of one opening': 'the audit opened at entry 2 has its attestation published already: one result per audit',
      'another root': expect.stringMatching(/which the log did not sign/),
      'another log': expect.stringMatching(/which the log did not sign/),
      'a checkpoint never signed': expect.stringMatching(/which the log did not sign/),
      'no opening: an entry that is a night': notOpening(0),
      'an opening the log has not signed yet': notOpening(5),
      'an entry beyond the log': notOpening(99),
      "another auditor's opening": "the opening at entry 3 is not this auditor's audit of checkpoint 2, opened after it",
      'an opening of another checkpoint': "the opening at entry 2 is not this auditor's audit of checkpoint 5, opened after it",
      "a nonce that does not hash to the opening's": 'the opening at entry 2 does not draw 1 nights with this nonce',
      'another number of nights drawn': 'the opening at entry 2 does not draw 2 nights with this nonce',
      'a draw where the owner named the nights': 'the opening at entry 4 does not draw 1 nights with this nonce',
      'named nights where the opening draws': 'the opening at entry 2 names other nights than the attestation',
      'nights other than the opening named': 'the opening at entry 4 names other nights than the attestation',
      'a night at an entry other than its latest': 'the attestation gives night 2026-03-06 an entry other than its latest within checkpoint 2',
      'a night the checkpoint lacks, given an entry': 'the attestation gives night 2026-03-08 an entry other than its latest within checkpoint 2',
      'a night twice': 'the attestation names a night twice',
      'pass though a night failed': 'the attestation says pass though a night failed',
      'no night': "an attestation's body has at least 12 lines (version 2), this one 11",
      'no signature by the auditor': 'the attestation carries no signature by its auditor, auditor.example',
      'no signature at all': expect.stringMatching(/is a signed note/),
      'version 1': "an attestation's body has at least 12 lines (version 2), this one 8",
      'another version': 'line 1 of the attestation is not "public-stats audit attestation v2"',
      'the named audit, as opened': 'accepted',
      removed: expect.stringMatching(/append-only: delete on log_audit refused/),
      changed: expect.stringMatching(/append-only: update on log_audit refused/),
    });
  });

  it("of the demo log is not shown once real data replace it", async () => {
    const { demo, real } = await inRollback(async (c) => {
      await payouts(c, [['2026-03-06', 10.5], ['2026-03-07', 11.25]], true);
      await append(c);
      await checkpoint(c, 2, `${ORIGIN}/demo`, true);
      await listAuditors(c, AUDITOR_KEY);
      await openAudit(c);
      await checkpoint(c, 3, `${ORIGIN}/demo`, true);
      await publish(c, attestation({ origin: `${ORIGIN}/demo` }));
      const demo = { stats: await statsNow(c), log: await logRecord(c) };
      await c.query('select stats.purge_demo()');
      await payouts(c, [['2026-03-05', 9]]);
      await append(c);
      await checkpoint(c, 1);
      return { demo, real: { stats: await statsNow(c), log: await logRecord(c) } };
    });
    expect(demo.stats.audit).toMatchObject({ nights_checked: 1, result: 'pass' });
    expect(demo.log.audits).toHaveLength(1);
    expect(real.stats.audit).toBeNull();
    expect(real.stats.audits_unfinished).toBe(0);
    expect(real.log.audits).toEqual([]);
  });
});

describe('the public records, once an audit is committed', () => {
  it('landing_stats() shows it as `audit` and counts its opening until then, and landing_log() lists it', async () => {
    const { adminUrl } = inject('stack');
    try {
      await withClient(adminUrl, async (c) => {
        await c.query('begin');
        await payouts(c, [['2026-03-06', 10.5], ['2026-03-07', 11.25]]);
        await c.query('select stats.log_append(now())');
        await checkpoint(c, 2);
        await listAuditors(c, AUDITOR_KEY);
        await c.query('commit');
        const read = async () => (await c.query('select public.landing_stats() as s, public.landing_log() as l')).rows[0] as { s: Record<string, any>; l: Record<string, any> };
        // Opened, and not yet in a signed checkpoint: not counted until the log is signed with it.
        await openAudit(c, { sample: 2 });
        const opened = await read();
        await checkpoint(c, 3);
        const before = await read();
        expect(opened.s.audits_unfinished).toBe(0);
        expect(before.s.audit).toBeNull();
        expect(before.s.audits_unfinished).toBe(1);
        expect(before.l.audits).toEqual([]);
        const row = await publish(c, attestation({ nights: [{ date: '2026-03-06', index: 0, pass: true }, { date: '2026-03-07', index: 1, pass: true }] }));
        const after = await read();
        expect(after.s.audit).toEqual({
          date: '2026-03-09', auditor: 'auditor.example', chosen: 'drawn', result: 'pass', nights_checked: 2, nights_matched: 2, checkpoint_size: 2, published_at: row.published,
        });
        expect(after.s.audits_unfinished).toBe(0);
        expect(after.s.updated_at).toBe(row.published);
        expect(after.l.audits).toEqual([{ note: row.note, published_at: row.published, listed: true }]);
      });
    } finally {
      await resetData({ db: { adminUrl } });
    }
  });
});
