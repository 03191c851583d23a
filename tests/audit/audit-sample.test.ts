// `npm run audit` end to end on the audit scenario (audit-scenario.ts), as an owner and an auditor run
// it: an audit opened in the log before its nonce is revealed, a sample drawn from a cosigned
// checkpoint and the nonce, disclosed, checked against the chain, attested and published, every reader
// seeing it; and each way an owner could steer it failing with its own sentence.
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nonceSha256 } from '../../contract/audit/opening.ts';
import { drawNights, sampleCandidates } from '../../contract/audit/sample.ts';
import { buildTree } from '../../contract/tlog/merkle.ts';
import { cosignerVerifierKey } from '../../contract/tlog/vkey.ts';
import { auditTools, GOOD, newNonce, node, startAuditScenario, stopAuditScenario, today, VERIFY, type AuditScenario } from '../support/audit-scenario.ts';
import { query } from '../support/db.ts';
import { until } from '../support/writer.ts';

let scenario: AuditScenario;
const { audit, file, logged, signedSizes, goodCheckpoint, sign, open, disclose, check, attest } = auditTools(() => scenario);

beforeAll(async () => { scenario = await startAuditScenario({ bad: false }); }, 240_000);
afterAll(() => stopAuditScenario(scenario ?? {}));

const read = async <T>(route: string, parse: (r: Response) => Promise<T>) => parse(await fetch(new URL(route, scenario.stack.cfg.siteUrl)));
const nightsOf = (bundle: string) => (JSON.parse(readFileSync(bundle, 'utf8')) as { sections: { nights: { date: string }[] }[] }).sections.flatMap((s) => s.nights.map((n) => n.date)).sort();

/** The draw rule v2 from the checkpoint's entries, as the owner's database holds them. */
async function drawn(size: number, nonce: string, k: number): Promise<string[]> {
  const rows = await query<{ idx: string; date: string | null; entry: string }>(scenario.stack.db.adminUrl, `select idx, to_char(date, 'YYYY-MM-DD') as date, entry from stats.log_entry where not is_demo and idx < $1 order by idx`, [size]);
  const root = await (await buildTree(rows.map((r) => Buffer.from(r.entry, 'utf8')))).root(size);
  return drawNights(root, nonce, sampleCandidates(rows.map((r) => ({ index: Number(r.idx), date: r.date, kind: (JSON.parse(r.entry) as { kind?: string }).kind }))), k);
}

describe('an audit the owner cannot steer', () => {
  const nonce = newNonce();
  let size: number;
  let bundle: string;
  let opening: number;

  it('opens only on a checkpoint the log signed, and logs the opening with the nonce\'s hash alone', async () => {
    size = await goodCheckpoint();
    const sizes = await signedSizes();
    const unsigned = Array.from({ length: Math.max(...sizes) }, (_, i) => i + 1).find((n) => !sizes.includes(n)) ?? Math.max(...sizes) + 1000;
    const refused = await open(newNonce(), ['--sample', '4', '--checkpoint', String(unsigned)]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`no audit was opened: the log signed no checkpoint of size ${unsigned}`);
    const run = await open(nonce, ['--sample', '4', '--checkpoint', String(size)]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^opened an audit by auditor\\.example at entry \\d+ of \\S+: 4 nights to draw from checkpoint ${size}\\.`));
    const entry = (await logged()).find((e) => e.entry.kind === 'audit' && e.entry.nonce_sha256 === nonceSha256(nonce))!;
    opening = entry.idx;
    console.log('DEBUG', JSON.stringify(await query(scenario.stack.db.adminUrl, 'select (select max(size) from stats.log_checkpoint) as size, (select max(idx) from stats.log_entry) as idx, (select count(*) from stats.log_halt) as halts')));
    console.log('DEBUG', JSON.stringify(await query(scenario.stack.db.adminUrl, 'select * from stats.log_halt')));
    expect(entry.entry).toEqual({ auditor: scenario.auditor.vkey, checkpoint: size, kind: 'audit', nonce_sha256: nonceSha256(nonce), sample: 4 });
    expect(JSON.stringify(entry.entry)).not.toContain(nonce);
    const replay = await audit(['open', '--auditor', scenario.auditor.vkey, '--nonce-sha256', nonceSha256(nonce), '--sample', '4', '--checkpoint', String(size)]);
    expect(replay.code).toBe(1);
    expect(replay.stderr).toContain('an audit with this nonce was opened already');
  });

  it('discloses the nights the checkpoint and the nonce draw, and always warns that the bundle names the wallet', async () => {
    bundle = file('sample.json');
    const run = await disclose(nonce, bundle);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^wrote ${bundle}: 4 nights drawn from checkpoint ${size} .* for the audit opened at entry ${opening}$`, 'm'));
    expect(run.stderr).toMatch(/learns the wallet/);
    expect(statSync(bundle).mode & 0o777).toBe(0o600);
    expect(nightsOf(bundle)).toEqual(await drawn(size, nonce, 4));
  });

  it('checks every night within the checkpoint, with the policy\'s log key and quorum', async () => {
    const run = await check(bundle, nonce, '--checkpoint', String(size), '--policy', scenario.policy, '--state', file('auditor-state.json'));
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^checked 4 nights \\(4 drawn by rule v2 from checkpoint ${size}\\) of \\S+, opened at entry ${opening}, against chain 137: pass$`));
    for (const line of lines.slice(1)) expect(line).toMatch(/^ok \d{4}-\d{2}-\d{2} entry \d+: \d transfers?, \d+\.\d{2} USD as published$/);
    expect(run.stdout.toLowerCase()).not.toContain(scenario.wallet.toLowerCase());
    // Without a policy the key is the site's own, and the check says so.
    const trusting = await check(bundle, nonce, '--checkpoint', String(size));
    expect(trusting.stdout).toMatch(/^NOTE the log key \S+ is the one the site itself names/m);
  });

  it('refuses a sample without --checkpoint, a nonce the opening does not hash, and a nonce never opened', async () => {
    const noCheckpoint = await check(bundle, nonce);
    expect(noCheckpoint.code).toBe(1);
    expect(noCheckpoint.stderr).toContain(`the opening at entry ${opening} draws a sample: name the checkpoint you gave the owner with --checkpoint SIZE`);
    const other = newNonce();
    const wrongNonce = await check(bundle, other, '--checkpoint', String(size));
    expect(wrongNonce.code).toBe(1);
    expect(wrongNonce.stderr).toContain(`holds no audit opening whose nonce_sha256 is the SHA-256 of your nonce (${nonceSha256(other)})`);
    const unopened = await disclose(other, file('unopened.json'));
    expect(unopened.code).toBe(1);
    expect(unopened.stderr).toContain('the signed log holds no audit opening for this nonce');
  });

  it('fails a checkpoint that the quorum of the auditor\'s policy did not cosign', async () => {
    const beta = await cosignerVerifierKey('witness.test/beta', new Uint8Array(randomBytes(32)));
    const strict = readFileSync(scenario.policy, 'utf8').replace('quorum alpha', `witness beta ${beta}\nquorum beta`);
    writeFileSync(file('strict.policy'), strict);
    const run = await check(bundle, nonce, '--checkpoint', String(size), '--policy', file('strict.policy'));
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`FAIL checkpoint ${size} carries no cosignatures meeting your policy's quorum`);
    expect(run.stdout).toContain(`FAIL no checkpoint that holds the opening (entry ${opening}) carries cosignatures meeting your policy's quorum`);
  });

  it('attests, publishes, and every reader sees a drawn audit that passed', async () => {
    const out = file('attestation.txt');
    const run = await attest(bundle, nonce, out, '--checkpoint', String(size), '--policy', scenario.policy);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const note = readFileSync(out, 'utf8');
    const vkey = scenario.auditor.vkey.replace(/[+]/g, '\\+');
    expect(note).toMatch(new RegExp(`^public-stats audit attestation v2\\norigin \\S+\\nlog-key \\S+\\ncheckpoint ${size} \\S+\\nopening ${opening}\\nchosen drawn 4 rule v2 nonce ${nonce}\\nchain 137\\npayers [0-9a-f]{64}\\n(night \\d{4}-\\d{2}-\\d{2} \\d+ pass\\n){4}result pass\\ndate ${today}\\nauditor ${vkey}\\n\\n\u2014 auditor\\.example \\S+\\n$`));
    expect(note).toContain(`payers ${createHash('sha256').update(readFileSync(file('payers.json'))).digest('hex')}`);
    const published = await audit(['publish', out]);
    expect(published.code, published.stderr).toBe(0);
    expect(published.stdout).toMatch(new RegExp(`^published the attestation by auditor\\.example of ${today}: pass, 4 of 4 nights drawn by rule v2 from checkpoint ${size} matched`));
    const stats = await until('the audit in /api/stats', async () => (await read('/api/stats', (r) => r.json() as Promise<{ audit: Record<string, unknown> | null }>)).audit, 60_000);
    expect(stats).toMatchObject({ date: today, auditor: 'auditor.example', chosen: 'drawn', result: 'pass', nights_checked: 4, nights_matched: 4, checkpoint_size: size });
    const page = await until('the audit on the page', async () => { const text = await read('/', (r) => r.text()); return text.includes('auditor.example') && text; }, 60_000);
    expect(page).toContain('4 of 4 nights drawn at random after the audit was opened in the log matched');
  }, 120_000);

  it('draws other nights for another nonce on the same checkpoint; the opening left without a result counts as unfinished', async () => {
    const first = await drawn(size, nonce, 4);
    let other = newNonce();
    while ((await drawn(size, other, 4)).join() === first.join()) other = newNonce();
    expect((await open(other, ['--sample', '4', '--checkpoint', String(size)])).code).toBe(0);
    const run = await disclose(other, file('other.json'));
    expect(run.code, run.stderr).toBe(0);
    expect(nightsOf(file('other.json'))).toEqual(await drawn(size, other, 4));
    expect(nightsOf(file('other.json'))).not.toEqual(first);
    const unfinished = await until('the unfinished audit in /api/stats', async () => {
      const s = await read('/api/stats', (r) => r.json() as Promise<{ audits_unfinished: number }>);
      return s.audits_unfinished === 1 && s;
    }, 60_000);
    expect(unfinished.audits_unfinished).toBe(1);

    // `npm run verify` under the owner's policy counts the drawn audit, whose draw it recomputes, and reports the other opening.
    const second = (await logged()).find((e) => e.entry.kind === 'audit' && e.entry.nonce_sha256 === nonceSha256(other))!.idx;
    const verified = await node([...VERIFY, '--site', scenario.stack.cfg.siteUrl, '--policy', scenario.policy], scenario.env);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(new RegExp(`audit by auditor\\.example on ${today}: 4 nights drawn by rule v2 \\(sample 4, nonce ${nonce}\\), each passed against chain 137 \\(checkpoint ${size}, opened at entry ${opening}\\): .*counted`));
    expect(verified.stdout).toMatch(new RegExp(`the audit opened at entry ${second} by auditor\\.example .*has no published result`));
  }, 120_000);

  it('fails a drawn night the owner corrected after the draw, naming the correcting entry', async () => {
    const all = file('all.json');
    const k = GOOD.length;
    const nonceAll = newNonce();
    expect((await open(nonceAll, ['--sample', String(k), '--checkpoint', String(size)])).code).toBe(0);
    const target = (await drawn(size, nonceAll, k))[0]!;
    const before = (await logged()).filter((e) => e.date === target && e.idx < size).at(-1)!;
    // The owner controls the database: an inflated night, logged anew as a correction.
    await query(scenario.stack.db.adminUrl, 'update stats.payout set usd = usd + 100 where date = $1', [target]);
    await sign();
    const after = (await logged()).filter((e) => e.date === target).at(-1)!;
    expect(after.idx).toBeGreaterThan(before.idx);
    expect((await disclose(nonceAll, all)).code).toBe(0);
    const run = await check(all, nonceAll, '--checkpoint', String(size));
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`FAIL ${target} entry ${before.idx}: corrected after checkpoint ${size}: entry ${after.idx} supersedes entry ${before.idx}`);
  }, 120_000);
});
