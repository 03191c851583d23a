// Audits as the verifier judges them (verify/audits.ts): attestations written and signed here from
// the formats alone (./audit-log.ts), against a log made here with audits opened in it
// (./audit-scenario.ts). Only a passing audit drawn by rule v2, by an auditor the policy lists, opened
// in the log and drawn again here, counts; each other outcome is a line of its own, and what the log
// contradicts fails with its own sentence.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkAudits, judgeAudits, listedAuditor, parseAudits, type AuditedLog } from '../../verify/audits.ts';
import { Stale } from '../../log-reader/failure.ts';
import { agents } from '../../log-reader/http.ts';
import { bodyV1, bodyV2, candidates, noteKey, ORIGIN, type V2 } from './audit-log.ts';
import {
  ALICE, alice, COUNTED, draw, FAILED, failure, judged, key, LOG, mallory, MALLORYS, N1, N2, N3, N4, N5, NAMED, note, NOT_HELD, passed, policy, POLICY, RAW, rootOf, SIZE, v2,
} from './audit-scenario.ts';

describe('the log the audits are judged against', () => {
  it('draws the nights written down here from checkpoint 12 with each nonce', () => {
    expect(candidates(RAW, SIZE)).toEqual(['2025-12-31', '2026-01-01', '2026-01-02', '2026-01-03', '2026-01-04', '2026-01-05', '2026-01-06', '2026-01-07']);
    expect(draw(N1, 3)).toEqual(['2026-01-02', '2026-01-03', '2026-01-07']);
    expect(draw(N4, 2)).toEqual(['2026-01-01', '2026-01-02']);
    expect(draw(N5, 1)).toEqual(['2026-01-04']);
  });
});

describe('an attestation judged against the policy and the log', () => {
  it('counts a passing audit drawn by rule v2 by a listed auditor, opened in the log, and names its night corrected after the checkpoint', () => {
    expect(judged(COUNTED)).toEqual({
      lines: [
        `  audit by auditor.example/alice on 2026-02-01: 3 nights drawn by rule v2 (sample 3, nonce ${N1}), each passed against chain 137 (checkpoint 12, opened at entry 12): 2026-01-02, 2026-01-03, 2026-01-07: counted`,
        `  night 2026-01-02 of ${ALICE} was corrected after checkpoint 12: entry 15`,
      ],
      counts: true,
    });
    // Judged within checkpoint 14 of the same log, nothing was corrected yet.
    const before: AuditedLog = { ...LOG, entries: LOG.entries.slice(0, 14) };
    expect(judged(COUNTED, alice, before).lines).toHaveLength(1);
  });

  it('reports an audit of nights the owner named as named, and does not count it', () => {
    expect(judged(NAMED).lines[0]).toBe('  audit by auditor.example/alice on 2026-02-02: nights named by the owner, not drawn: 2026-01-02, 2026-01-04, each passed (checkpoint 12, opened at entry 13): not counted');
    expect(judged(NAMED).counts).toBe(false);
  });

  it('reports a failed audit with its failed nights, and does not count it', () => {
    expect(judged(FAILED)).toEqual({
      lines: [
        `  audit by auditor.example/alice on 2026-02-03 failed: night 2026-01-01 (entry 11) failed; 1 of 2 nights passed, drawn by rule v2 (sample 2, nonce ${N4}), checkpoint 12, opened at entry 16: not counted`,
        '  night 2026-01-02 of the audit by auditor.example/alice on 2026-02-03 was corrected after checkpoint 12: entry 15',
      ],
      counts: false,
    });
    expect(judged(NOT_HELD).lines).toEqual(['  audit by auditor.example/alice on 2026-02-04 failed: night 2026-01-08 (no entry) failed; 0 of 1 night passed, named by the owner, not drawn, checkpoint 12, opened at entry 20: not counted']);
    // A fail with every night passed: something beyond the nights failed.
    expect(judged({ ...NAMED, result: 'fail' }).lines[0]).toContain('failed: every night passed but a check beyond them failed; 2 of 2 nights passed');
  });

  it('does not count an audit by an auditor the policy does not list, whatever it says, nor one checked against another log key', () => {
    expect(judged(MALLORYS, mallory)).toEqual({ lines: [`  attestation by auditor.example/mallory (key ${mallory.vkey}) is not by an auditor the policy lists: not counted`], counts: false });
    expect(listedAuditor(POLICY, key(alice))).toBe(true);
    expect(listedAuditor(POLICY, { ...key(alice), name: 'auditor.example/eve' })).toBe(false);
    const other = noteKey(ORIGIN);
    expect(judged({ ...COUNTED, logKey: other.vkey })).toMatchObject({
      lines: [`  audit by auditor.example/alice on 2026-02-01 was checked against the log key ${other.vkey}, not one this run trusts for the log: not counted`, expect.any(String)], counts: false,
    });
  });

  it.each([
    ['nights that are not the draw', { ...COUNTED, nights: passed(['2026-01-02', '2026-01-03', '2026-01-04']) },
      `${ALICE} judges the nights 2026-01-02, 2026-01-03, 2026-01-04 as drawn, but rule v2 draws 2026-01-02, 2026-01-03, 2026-01-07 from checkpoint 12 with its nonce`],
    ['a nonce that does not hash to the opening\'s', { ...COUNTED, drawn: { k: 3, nonce: N3 } }, `${ALICE}'s nonce does not hash to the nonce_sha256 of its opening (entry 12)`],
    ['an opening that is a night', { ...COUNTED, opening: 11 }, `${ALICE} names entry 11 as its opening, which is not an audit's opening`],
    ['another auditor\'s opening', { ...MALLORYS }, `${ALICE}: its opening (entry 18) opens an audit by another auditor (${mallory.vkey})`],
    ['an opening of another checkpoint', { ...COUNTED, size: 11, root: rootOf(11), nights: [['2026-01-02', 4, 'pass']] }, `${ALICE} reads checkpoint 11, but its opening (entry 12) names checkpoint 12`],
    ['another sample size', { ...COUNTED, drawn: { k: 2, nonce: N1 } }, `${ALICE} draws 2 nights, but its opening (entry 12) asks for 3`],
    ['a draw where the owner named the nights', { ...NAMED, date: '2026-02-01', drawn: { k: 2, nonce: N2 } }, `${ALICE} says its nights were drawn, but its opening (entry 13) names the nights 2026-01-02, 2026-01-04`],
    ['named nights where a sample was asked for', { ...NAMED, date: '2026-02-01', opening: 14 }, `${ALICE} says the owner named its nights, but its opening (entry 14) asks for a sample of 2 drawn`],
    ['other nights than the owner named', { ...NAMED, date: '2026-02-01', nights: passed(['2026-01-02']) }, `${ALICE} judges the nights 2026-01-02, but its opening (entry 13) names 2026-01-02, 2026-01-04`],
    ['a night\'s entry after the checkpoint', { ...COUNTED, nights: [['2026-01-02', 15, 'pass'], ...passed(['2026-01-03', '2026-01-07'])] },
      `night 2026-01-02 of ${ALICE} names entry 15, but its latest entry within checkpoint 12 is entry 4`],
    ['a night\'s entry superseded within the checkpoint', { ...FAILED, date: '2026-02-01', nights: [['2026-01-01', 3, 'fail'], ['2026-01-02', 4, 'pass']] },
      `night 2026-01-01 of ${ALICE} names entry 3, but its latest entry within checkpoint 12 is entry 11`],
    ['a night passed without a commitment', v2({ opening: 19, drawn: null, nights: [['2025-12-30', 8, 'pass']] }),
      `night 2025-12-30 of ${ALICE} passed, but its latest entry within checkpoint 12 (entry 8) carries no commitment to its reward transfers`],
    ['a checkpoint that is no state of the log', { ...COUNTED, root: rootOf(11) },
      `${ALICE} names checkpoint 12 with the root ${rootOf(11)}, but the log's first 12 entries hash to ${rootOf(12)}: not a state of this log`],
  ] as [string, V2, string][])('fails a listed auditor\'s attestation with %s, naming it', (_, a, sentence) => {
    expect(failure(() => judged(a))).toBe(sentence);
  });

  it('fails an attestation of another log, even by an auditor the policy does not list', () => {
    expect(failure(() => judged({ ...MALLORYS, origin: 'other.example/log' }, mallory)))
      .toBe('the attestation by auditor.example/mallory on 2026-02-01 is an audit of the log "other.example/log", not of "stats.example.com/log"');
  });

  it('reads a checkpoint or an opening beyond the verified log as caches out of step (read again), not yet a failure', () => {
    const short: AuditedLog = { ...LOG, entries: LOG.entries.slice(0, 12) };
    expect(() => judged(COUNTED, alice, short)).toThrow(Stale);
    expect(() => judged({ ...COUNTED, size: 30 })).toThrow(Stale);
  });
});

describe('the audits a log\'s attestations come to', () => {
  const V1 = alice.sign(bodyV1(SIZE, rootOf(SIZE), ['2026-01-02'], alice));

  it('give a line each, then each opening with no result, then what counts', () => {
    const j = judgeAudits([note(COUNTED), note(NAMED), note(FAILED), note(MALLORYS, mallory), V1, note(NOT_HELD)], POLICY, LOG);
    expect(j.failures).toEqual([]);
    expect(j.counted.map((a) => a.opening)).toEqual([12]);
    expect(j.unfinished.map((e) => e.index)).toEqual([14, 19]);
    expect(j.lines).toEqual([
      `  audit by auditor.example/alice on 2026-02-01: 3 nights drawn by rule v2 (sample 3, nonce ${N1}), each passed against chain 137 (checkpoint 12, opened at entry 12): 2026-01-02, 2026-01-03, 2026-01-07: counted`,
      `  night 2026-01-02 of ${ALICE} was corrected after checkpoint 12: entry 15`,
      '  audit by auditor.example/alice on 2026-02-02: nights named by the owner, not drawn: 2026-01-02, 2026-01-04, each passed (checkpoint 12, opened at entry 13): not counted',
      '  night 2026-01-02 of the audit by auditor.example/alice on 2026-02-02 was corrected after checkpoint 12: entry 15',
      `  audit by auditor.example/alice on 2026-02-03 failed: night 2026-01-01 (entry 11) failed; 1 of 2 nights passed, drawn by rule v2 (sample 2, nonce ${N4}), checkpoint 12, opened at entry 16: not counted`,
      '  night 2026-01-02 of the audit by auditor.example/alice on 2026-02-03 was corrected after checkpoint 12: entry 15',
      `  attestation by auditor.example/mallory (key ${mallory.vkey}) is not by an auditor the policy lists: not counted`,
      '  attestation by auditor.example/alice on 2026-01-20 is of rule v1, which records neither how its nights were chosen nor a nonce opened in the log: not counted',
      '  audit by auditor.example/alice on 2026-02-04 failed: night 2026-01-08 (no entry) failed; 0 of 1 night passed, named by the owner, not drawn, checkpoint 12, opened at entry 20: not counted',
      '  the audit opened at entry 14 by auditor.example/alice (a sample of 2 drawn from checkpoint 12) has no published result',
      '  the audit opened at entry 19 by auditor.example/alice (the nights 2025-12-30 named from checkpoint 12) has no published result',
      '  1 audit counted, the last by auditor.example/alice on 2026-02-01',
    ]);
  });

  it('leave an opening without a result when only another auditor names it', () => {
    const byMallory = mallory.sign(bodyV2({ ...COUNTED, opening: 14 }, mallory));
    const j = judgeAudits([byMallory], POLICY, LOG);
    expect(j.unfinished.map((e) => e.index)).toEqual([12, 13, 14, 16, 18, 19, 20]);
    expect(j.lines.at(-1)).toBe('  no audit counts: none is a passing audit, drawn by rule v2, by an auditor the policy lists');
    // Under a policy listing mallory, her attestation names an opening that is not hers.
    expect(judgeAudits([byMallory], policy(alice, mallory), LOG).failures)
      .toEqual([`the audit by auditor.example/mallory on 2026-02-01: its opening (entry 14) opens an audit by another auditor (${alice.vkey})`]);
  });

  it('keep every failure, one a line, and still judge the others', () => {
    const j = judgeAudits([note(COUNTED).replace('result pass', 'result fail'), note(COUNTED), note({ ...COUNTED, opening: 11 })], POLICY, LOG);
    expect(j.failures).toEqual([
      `attestation 1 of /log/audits's signature by its auditor key ${alice.vkey} does not verify`,
      `${ALICE} names entry 11 as its opening, which is not an audit's opening`,
    ]);
    expect(j.counted).toHaveLength(1);
  });
});

describe('the audits a site publishes', () => {
  let server: Server;
  let site: URL;
  let served: { status: number; body: string };
  beforeAll(async () => {
    server = createServer((request, response) => {
      const found = request.url === '/log/audits';
      response.writeHead(found ? served.status : 404, { 'content-type': 'application/json' });
      response.end(found ? served.body : '{"error":"not here"}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    site = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  });
  afterAll(async () => {
    agents.http.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  const serve = (notes: string[]) => { served = { status: 200, body: JSON.stringify({ audits: notes.map((n, i) => ({ note: n, published_at: `2026-02-0${i + 1}T12:00:00Z` })) }) }; };
  const beforeOpenings: AuditedLog = { ...LOG, entries: LOG.entries.slice(0, 12) };

  it('are none on a site without /log/audits, or with an empty list, and the openings in the log are still named', async () => {
    served = { status: 404, body: '' };
    expect(await checkAudits(site, '/log', POLICY, beforeOpenings)).toEqual(['  no audit is published: the site serves no /log/audits']);
    serve([]);
    const lines = await checkAudits(site, '/log', POLICY, LOG);
    expect(lines[0]).toBe('  no audit is published under /log/audits');
    expect(lines.slice(1)).toHaveLength(7);
    expect(lines[1]).toBe('  the audit opened at entry 12 by auditor.example/alice (a sample of 3 drawn from checkpoint 12) has no published result');
  });

  it('are judged each, and fail with a sentence a line for each that fails', async () => {
    serve([note(COUNTED), note(MALLORYS, mallory)]);
    expect((await checkAudits(site, '/log', POLICY, LOG)).at(-1)).toBe('  1 audit counted, the last by auditor.example/alice on 2026-02-01');
    serve([note(COUNTED).replace('result pass', 'result fail'), note({ ...COUNTED, drawn: { k: 3, nonce: N3 } })]);
    await expect(checkAudits(site, '/log', POLICY, LOG)).rejects.toThrow([
      `attestation 1 of /log/audits's signature by its auditor key ${alice.vkey} does not verify`,
      `${ALICE}'s nonce does not hash to the nonce_sha256 of its opening (entry 12)`,
    ].join('\n'));
  });

  it('read the audits document, refuse one of another shape, and fail when the site answers otherwise', async () => {
    const doc = (value: unknown) => Buffer.from(JSON.stringify(value));
    expect(parseAudits(doc({ audits: [{ note: 'n', published_at: '2026-02-01T00:00:00Z' }] }), '/log/audits')).toEqual([{ note: 'n', published_at: '2026-02-01T00:00:00Z' }]);
    for (const bad of [[], { audits: {} }, { audits: [{ note: 1, published_at: '2026-02-01T00:00:00Z' }] }, { audits: [{ note: 'n', published_at: 'yesterday' }] }]) {
      expect(() => parseAudits(doc(bad), '/log/audits')).toThrow('/log/audits is not a list of attestations ({"audits":[{"note", "published_at"}, …]})');
    }
    served = { status: 500, body: '' };
    await expect(checkAudits(site, '/log', POLICY, LOG)).rejects.toThrow(/^\/log\/audits \(http:\/\/127\.0\.0\.1:\d+\/log\/audits\) answered HTTP 500, not 200$/);
  });
});
