// `npm run audit` end to end on the audit scenario (audit-scenario.ts), as an owner and an auditor run it:
// a sample drawn from a checkpoint, disclosed, checked against the chain, attested and published, every
// reader seeing it; and each tampered bundle or forked log failing with its reason.
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import type { Address, Hash } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Env } from '../../config/settings.ts';
import { auditTools, GOOD, IMPORTED, night, node, NONCE, startAuditScenario, stopAuditScenario, today, VERIFY, ZERO, type AuditScenario } from '../support/audit-scenario.ts';
import type { TestChain } from '../support/chain.ts';
import type { TestStack } from '../support/stack.ts';
import { until } from '../support/writer.ts';

let scenario: AuditScenario;
let chain: TestChain;
let stack: TestStack;
let env: Env;
let wallet: Address;
let txs: Hash[];
const { audit, file, logged, goodCheckpoint, signedControl, check } = auditTools(() => scenario);

beforeAll(async () => {
  scenario = await startAuditScenario();
  ({ chain, stack, env, wallet, txs } = scenario);
}, 240_000);
afterAll(() => stopAuditScenario(scenario ?? {}));

describe('an audit of a sample nobody chose', () => {
  let bundle: string;
  let size: number;

  it('prints the text the wallet signs, and nothing else', async () => {
    const message = await audit(['control-message', '--nonce', NONCE]);
    expect(message.code).toBe(0);
    expect(message.stdout.split('\n')).toEqual([
      'public-stats wallet control v1', expect.stringMatching(/^log \S+$/), expect.stringMatching(/^log-key \S+\+[0-9a-f]{8}\+\S+$/),
      `wallet ${wallet.toLowerCase()}`, `nonce ${NONCE}`, '',
    ]);
    expect((await audit(['control-message', '--nonce', 'short'])).code).toBe(1);
  });

  it('discloses the nights the checkpoint draws, and warns that the bundle names the wallet', async () => {
    size = await goodCheckpoint();
    bundle = file('sample.json');
    const run = await audit(['disclose', '--sample', '4', '--checkpoint', String(size), '--nonce', NONCE, '--signature', await signedControl(), '--out', bundle]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^wrote ${bundle}: 4 nights drawn from checkpoint ${size} `));
    expect(run.stderr).toMatch(/learns the wallet/);
    expect(statSync(bundle).mode & 0o777).toBe(0o600);
    const nights = (JSON.parse(readFileSync(bundle, 'utf8')) as { nights: { date: string }[] }).nights.map((n) => n.date);
    expect(nights).toHaveLength(4);
    for (const d of nights) expect(GOOD.map(night)).toContain(d);
  });

  it('checks every night against the log and the chain', async () => {
    const run = await check(bundle, '--state', file('auditor-state.json'), '--checkpoint', String(size));
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^checked 4 nights of \S+ against checkpoint \d+ and chain 137: 4 matched$/);
    expect(lines.slice(1)).toHaveLength(4);
    for (const line of lines.slice(1)) expect(line).toMatch(/^ok \d{4}-\d{2}-\d{2} entry \d+: \d transfers?, \d+\.\d{2} USD as published$/);
    expect(run.stdout.toLowerCase()).not.toContain(wallet.toLowerCase());
    for (const tx of txs) expect(run.stdout).not.toContain(tx);
  });

  it('attests, publishes, and every reader sees it', async () => {
    const keygen = await audit(['keygen', '--name', 'auditor.example', '--out', file('auditor.key')]);
    expect(keygen.code, keygen.stderr).toBe(0);
    const vkey = keygen.stdout.trim().split('\n').at(-1)!;
    expect(vkey).toMatch(/^auditor\.example\+[0-9a-f]{8}\+/);
    const attest = await audit(['attest', bundle, '--rpc', chain.rpcUrl, '--site', stack.cfg.siteUrl, '--nonce', NONCE, '--payers', file('payers.json'),
      '--key', file('auditor.key'), '--out', file('attestation.txt')]);
    expect(attest.code, attest.stdout + attest.stderr).toBe(0);
    const note = readFileSync(file('attestation.txt'), 'utf8');
    expect(note).toMatch(new RegExp(`^public-stats audit attestation v1\\norigin \\S+\\ncheckpoint ${size} \\S+\\nchain 137\\nnights [\\d,-]+\\nmatched 4\\ndate ${today}\\nauditor ${vkey.replace(/[+]/g, '\\+')}\\n\\n\u2014 auditor\\.example \\S+\\n$`));
    expect(note.toLowerCase()).not.toContain(wallet.toLowerCase().slice(2));

    const published = await audit(['publish', file('attestation.txt')]);
    expect(published.code, published.stderr).toBe(0);
    expect(published.stdout).toMatch(/^published the attestation by auditor\.example of \d{4}-\d{2}-\d{2}: 4 of 4 nights matched against checkpoint \d+\n$/);
    expect((await audit(['publish', file('attestation.txt')])).code).toBe(1);

    // Readers see it once the caches they share have turned over (the records' TTL and stale-while-revalidate).
    const read = async <T>(route: string, parse: (r: Response) => Promise<T>) => parse(await fetch(new URL(route, stack.cfg.siteUrl)));
    const audits = await until('the attestation at /log/audits', async () =>
      (await read('/log/audits', (r) => r.json() as Promise<{ audits: { note: string }[] }>)).audits.find((a) => a.note === note) && true, 60_000);
    expect(audits).toBe(true);
    const stats = await until('the audit in /api/stats', async () => (await read('/api/stats', (r) => r.json() as Promise<{ audit: Record<string, unknown> | null }>)).audit, 60_000);
    expect(stats).toMatchObject({ date: today, auditor: 'auditor.example', nights_checked: 4, nights_matched: 4, checkpoint_size: size });
    const page = await until('the audit on the page', async () => { const text = await read('/', (r) => r.text()); return text.includes('auditor.example') && text; }, 60_000);
    expect(page).toMatch(/4 of 4 nights/);

    const logKey = (await audit(['control-message', '--nonce', NONCE])).stdout.split('\n')[2]!.slice('log-key '.length);
    writeFileSync(file('trusting.policy'), `log ${logKey}\nauditor ${vkey}\nquorum none\n`);
    writeFileSync(file('other.policy'), `log ${logKey}\nquorum none\n`);
    const counted = await node([...VERIFY, '--site', stack.cfg.siteUrl, '--policy', file('trusting.policy')], env);
    expect(counted.code, counted.stdout + counted.stderr).toBe(0);
    expect(counted.stdout).toMatch(/audit by auditor\.example on \d{4}-\d{2}-\d{2}: 4 of 4 nights matched against checkpoint \d+/);
    const unlisted = await node([...VERIFY, '--site', stack.cfg.siteUrl, '--policy', file('other.policy')], env);
    expect(unlisted.code, unlisted.stdout + unlisted.stderr).toBe(0);
    expect(unlisted.stdout).toMatch(/attestation by auditor\.example \(key [^)]+\) is not by an auditor the policy lists: not counted/);
  }, 120_000);

  it('fails a bundle whose nights are not the ones the checkpoint draws', async () => {
    const sample = JSON.parse(readFileSync(bundle, 'utf8')) as { nights: { date: string }[] };
    const drawn = sample.nights.map((n) => n.date);
    const swapped = [...drawn.slice(1), GOOD.map(night).find((d) => !drawn.includes(d) && d !== night(ZERO))!].sort();
    const named = file('named.json');
    expect((await audit(['disclose', '--nights', swapped.join(','), '--nonce', NONCE, '--signature', await signedControl(), '--out', named])).code).toBe(0);
    const forged = { ...JSON.parse(readFileSync(named, 'utf8')) as object, sample: { k: 4, checkpoint: size } };
    writeFileSync(file('forged-sample.json'), JSON.stringify(forged));
    const run = await check(file('forged-sample.json'));
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(new RegExp(`FAIL the nights opened \\(${swapped.join(', ')}\\) are not the 4 that checkpoint ${size} draws \\(${drawn.join(', ')}\\)`));
  });

  it('fails a wrong salt, a night without a commitment, and a control signature by another key', async () => {
    const good = JSON.parse(readFileSync(bundle, 'utf8')) as { nights: { date: string; log_index: number; salt: string; payload: { date: string } }[]; control: { signature: string } };
    const [first, second] = good.nights;
    const entries = await logged();
    const old = entries.find((e) => e.date === night(IMPORTED[0]!))!;
    const tampered = {
      ...good,
      nights: [
        { ...first!, salt: Buffer.alloc(32, 7).toString('base64') },
        { ...second!, date: old.date, log_index: old.idx, payload: { ...second!.payload, date: old.date } },
        ...good.nights.slice(2),
      ],
    };
    writeFileSync(file('tampered.json'), JSON.stringify(tampered));
    const run = await check(file('tampered.json'));
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`FAIL ${first!.date} entry ${first!.log_index}: the salt and payload do not give the commitment in its entry`);
    expect(run.stdout).toMatch(new RegExp(`FAIL ${old.date} entry ${old.idx}: its entry carries no commitment to reward transfers`));

    const otherKey = { ...good, control: { ...good.control, signature: await signedControl(chain.accounts[2]) } };
    writeFileSync(file('other-key.json'), JSON.stringify(otherKey));
    const refused = await check(file('other-key.json'));
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('FAIL the control signature is not the wallet\'s: neither the address recovered from it (EOA) nor the wallet\'s EIP-1271 isValidSignature accepts it on chain 137');
    expect(refused.stdout).toMatch(/: 0 matched\n/);
    const attest = await audit(['attest', file('other-key.json'), '--rpc', chain.rpcUrl, '--site', stack.cfg.siteUrl, '--nonce', NONCE, '--payers', file('payers.json'),
      '--key', file('auditor.key'), '--out', file('refused.txt')]);
    expect(attest.code).toBe(1);
    expect(attest.stdout).toContain('no attestation written');
  });

  it('fails a log that forks from the auditor\'s earlier state', async () => {
    const state = JSON.parse(readFileSync(file('auditor-state.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(file('forked-state.json'), JSON.stringify({ ...state, root: Buffer.alloc(32, 1).toString('base64') }));
    const run = await check(bundle, '--state', file('forked-state.json'));
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/FAIL the site's log is a fork of the one in \S+forked-state\.json: checkpoint \d+ is not consistent with checkpoint \d+ seen on /);
  });
});
