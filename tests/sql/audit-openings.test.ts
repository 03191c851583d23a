// Audits begin in the log: what stats.open_audit appends and refuses, that an opening is never taken
// for the wallet's entry, and how many audits the stats record counts as opened with no result. Each
// test runs in a transaction that is rolled back.
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { nonceSha256, openingEntry, readOpening } from '../../contract/audit/opening.ts';
import { inRollback } from '../support/db.ts';
import { AUDITOR_KEY, NONCE, OTHER_KEY, attestation, openAudit, publish, statsNow } from '../support/audit-sql.ts';
import { append, checkpoint, commitment } from '../support/log-commitments.ts';
import { payouts } from '../support/stats-sql.ts';

interface Logged { idx: number; date: string | null; entry: string; is_demo: boolean }
const logged = async (c: pg.Client): Promise<Logged[]> => (await c.query('select idx::int, date, entry, is_demo from stats.log_entry order by idx')).rows;

/** The wallet's commitment, two final nights logged after its entry (entries 0 to 2), and a checkpoint of them. */
async function signedLog(c: pg.Client) {
  await c.query('insert into stats.wallet_commitment (commitment) values ($1)', [commitment('wallet a')]);
  await payouts(c, [['2026-03-06', 10.5], ['2026-03-07', 11.25]]);
  expect(await append(c)).toBe(3);
  await checkpoint(c, 3);
}

describe('an audit opened in the log', () => {
  it('is the entry the contract writes, RFC 8785 JSON with no date, appended after the checkpoint it names; log_append never takes it for the wallet\'s entry', async () => {
    const { drawn, named, entries, appended } = await inRollback(async (c) => {
      await signedLog(c);
      const drawn = await openAudit(c, { checkpoint: 3, sample: 5 });
      const named = await openAudit(c, { checkpoint: 3, nonce: `${NONCE}-named`, nights: ['2026-03-07', '2026-03-06'] });
      // The wallet is unchanged: the latest wallet entry is still entry 0, though openings came after it.
      const appended = await append(c, '2026-03-11T12:00:00Z');
      return { drawn, named, entries: await logged(c), appended };
    });
    expect([drawn, named, appended]).toEqual([3, 4, 0]);
    const opening = { auditor: AUDITOR_KEY, checkpoint: 3 };
    expect(entries.slice(3)).toEqual([
      { idx: 3, date: null, entry: openingEntry({ ...opening, nonce_sha256: nonceSha256(NONCE), sample: 5 }), is_demo: false },
      { idx: 4, date: null, entry: openingEntry({ ...opening, nonce_sha256: nonceSha256(`${NONCE}-named`), nights: ['2026-03-06', '2026-03-07'] }), is_demo: false },
    ]);
    expect(entries[3]!.entry).toBe(`{"auditor":"${AUDITOR_KEY}","checkpoint":3,"kind":"audit","nonce_sha256":"${nonceSha256(NONCE)}","sample":5}`);
    expect(readOpening(JSON.parse(entries[4]!.entry))).toEqual({ ...opening, nonce_sha256: nonceSha256(`${NONCE}-named`), nights: ['2026-03-06', '2026-03-07'] });
  });

  it('is refused for a checkpoint the log never signed, a nonce used before, a key or hash of the wrong form, a choice that is not one, and while the log is halted', async () => {
    const { refusals, entries } = await inRollback(async (c) => {
      await signedLog(c);
      await openAudit(c, { checkpoint: 3 });
      const raw = (auditor: string, sha: string, sample: number | null, nights: string[] | null) =>
        c.query('select stats.open_audit($1, $2, 3, $3::integer, $4::date[])', [auditor, sha, sample, nights]);
      const fresh = nonceSha256(`${NONCE}-fresh`);
      const tries: [string, () => Promise<unknown>][] = [
        ['a checkpoint never signed', () => openAudit(c, { checkpoint: 2, nonce: `${NONCE}-fresh` })],
        ['a checkpoint beyond the log', () => openAudit(c, { checkpoint: 4, nonce: `${NONCE}-fresh` })],
        ['the nonce again', () => openAudit(c, { checkpoint: 3 })],
        ['the nonce again, by another auditor', () => openAudit(c, { checkpoint: 3, auditor: OTHER_KEY })],
        ['a key name, not a verifier key', () => raw('auditor.example', fresh, 1, null)],
        ['a quote in the key name', () => raw(AUDITOR_KEY.replace('auditor', 'audi"tor'), fresh, 1, null)],
        ['a hash in capitals', () => raw(AUDITOR_KEY, fresh.toUpperCase(), 1, null)],
        ['the nonce itself', () => raw(AUDITOR_KEY, NONCE, 1, null)],
        ['both a sample and nights', () => raw(AUDITOR_KEY, fresh, 1, ['2026-03-06'])],
        ['neither', () => raw(AUDITOR_KEY, fresh, null, null)],
        ['a sample of none', () => raw(AUDITOR_KEY, fresh, 0, null)],
        ['no nights', () => raw(AUDITOR_KEY, fresh, null, [])],
        ['a night twice', () => raw(AUDITOR_KEY, fresh, null, ['2026-03-06', '2026-03-06'])],
        ['a halted log', async () => {
          await c.query(`insert into stats.log_halt (at, reason) values (now(), 'a test halt')`);
          return openAudit(c, { checkpoint: 3, nonce: `${NONCE}-fresh` });
        }],
      ];
      const refusals: Record<string, string> = {};
      for (const [what, attempt] of tries) {
        await c.query('savepoint s');
        refusals[what] = await attempt().then(() => 'accepted', (error: Error) => error.message);
        await c.query('rollback to savepoint s');
      }
      return { refusals, entries: await logged(c) };
    });
    const KEY = 'the auditor is not a note verifier key (<name>+<8 hex>+<base64>), or its name holds a quote or a backslash';
    const CHOICE = 'an audit draws a sample of at least one night or names distinct nights, not both';
    const REUSED = 'an audit with this nonce was opened already: the auditor picks a new nonce for every audit';
    expect(refusals).toEqual({
      'a checkpoint never signed': 'the log signed no checkpoint of size 2: name one it signed (and witnesses cosigned)',
      'a checkpoint beyond the log': 'the log signed no checkpoint of size 4: name one it signed (and witnesses cosigned)',
      'the nonce again': REUSED,
      'the nonce again, by another auditor': REUSED,
      'a key name, not a verifier key': KEY,
      'a quote in the key name': KEY,
      'a hash in capitals': "the nonce's SHA-256 is 64 lowercase hex digits",
      'the nonce itself': "the nonce's SHA-256 is 64 lowercase hex digits",
      'both a sample and nights': CHOICE,
      neither: CHOICE,
      'a sample of none': CHOICE,
      'no nights': CHOICE,
      'a night twice': CHOICE,
      'a halted log': 'the log is halted: no audit can begin until it grows again (see health)',
    });
    // Only the one opening made.
    expect(entries.map((e) => e.idx)).toEqual([0, 1, 2, 3]);
  });
});

describe('the audits opened with no result', () => {
  it('count each opening in the signed log until an attestation of it is published, whoever its auditor', async () => {
    const counted = await inRollback(async (c) => {
      const unfinished = async () => (await statsNow(c)).audits_unfinished as number;
      await signedLog(c);
      const counts: Record<string, number> = { 'none opened': await unfinished() };
      const first = await openAudit(c, { checkpoint: 3 });
      counts['opened, not yet signed'] = await unfinished();
      await checkpoint(c, 4);
      counts['signed'] = await unfinished();
      const second = await openAudit(c, { checkpoint: 3, auditor: OTHER_KEY, nonce: `${NONCE}-other` });
      await checkpoint(c, 5);
      counts['a second signed'] = await unfinished();
      await publish(c, attestation({ size: 3, opening: first, nights: [{ date: '2026-03-06', index: 1, pass: false }] }));
      counts['the first attested, failed'] = await unfinished();
      await publish(c, attestation({ size: 3, opening: second, nonce: `${NONCE}-other`, auditorKey: OTHER_KEY, signer: 'other.example', nights: [{ date: '2026-03-07', index: 2, pass: true }] }));
      counts['both attested'] = await unfinished();
      counts['as of before the openings'] = (await c.query(`select stats.audits_unfinished('2000-01-01') as n`)).rows[0].n;
      return counts;
    });
    expect(counted).toEqual({
      'none opened': 0, 'opened, not yet signed': 0, signed: 1, 'a second signed': 2, 'the first attested, failed': 1, 'both attested': 0, 'as of before the openings': 0,
    });
  });
});
