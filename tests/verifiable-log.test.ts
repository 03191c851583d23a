// The transparency log checked from outside with code we did not write: the verifier the site serves,
// the checkpoint, tiles and receipts verified with Go's golang.org/x/mod/sumdb/{note,tlog}, and
// `npm run verify` passing on the live stack, witnessed by three witnesses under a quorum of two.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays } from '../contract/dates.ts';
import { API_PATHS, SITE_PATHS } from '../contract/paths.ts';
import { SITE_DOCUMENTS } from '../contract/documents.ts';
import { verifierScript } from '../site/render/verifier.ts';
import type { TestStack } from './support/stack.ts';
import { verify as verifyCommand } from './support/verifier.ts';
import { logReaders, NIGHTS, startVerifiableService, today, type VerifiableService } from './support/verifiable.ts';

let service: VerifiableService;
let stack: TestStack;
let dir: string;
let policy: string;
let site: string;
const { vkey, tlogcheck, checkpoint, history, verify, state, receipt } = logReaders(() => service);

beforeAll(async () => {
  service = await startVerifiableService();
  ({ stack, dir, policy, site } = service);
}, 180_000);
afterAll(() => service?.stop());

describe('the transparency log', () => {
  let before: string;

  it('serves the verifier as the one JavaScript file the build makes of verify/: Node\'s own modules only, this site its default', async () => {
    const answer = await fetch(site + SITE_PATHS.LOG_VERIFIER);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe(SITE_DOCUMENTS.find((d) => d.path === SITE_PATHS.LOG_VERIFIER)!.mediaType);
    const served = await answer.text();
    expect(served).toBe(await verifierScript(site));
    const imports = [...served.matchAll(/^import\b[^;]*?from\s*"([^"]+)"/gm)].map((m) => m[1]!);
    expect(imports.length).toBeGreaterThan(0);
    expect(imports.filter((specifier) => !specifier.startsWith('node:'))).toEqual([]);
    expect(served).not.toMatch(/\brequire\(|\bimport\(/);
    expect((await verifyCommand('--site', site, '--help')).stdout).toContain(`(default ${site})`);
  });

  it('holds every final night, and its checkpoint, tiles and receipts verify with Go\'s sumdb/note and sumdb/tlog', async () => {
    before = await checkpoint();
    writeFileSync(path.join(dir, 'before.checkpoint'), before);
    for (const date of [addDays(today, -200), addDays(today, -50)]) writeFileSync(receipt(date), await (await fetch(`${site}${SITE_PATHS.LOG_PROOF}${date}`)).text());
    const log = await tlogcheck('-receipt', receipt(addDays(today, -200)));
    expect(log.origin).toBe(`${new URL(site).host}/log`);
    // Nights up to three days ago are final: 298 of the 300, in date order, one entry each.
    expect(log.size).toBe(NIGHTS - 2);
    expect(log.entries.map((e) => JSON.parse(e).date)).toEqual(Array.from({ length: NIGHTS - 2 }, (_, i) => addDays(today, -NIGHTS + i)));
    const landing = await (await fetch(stack.cfg.apiUrl + API_PATHS.LOG, { headers: { apikey: stack.cfg.ANON_KEY } })).json();
    expect(landing.entries).toEqual(log.entries);
    expect(log.receipts[0]).toMatchObject({ index: NIGHTS - 200, size: NIGHTS - 2 });
    expect(JSON.parse(log.receipts[0]!.entry).date).toBe(addDays(today, -200));
    for (const night of (await history()).nights) {
      expect(night.log_index).toBe(night.date <= addDays(today, -3) ? log.entries.findIndex((e) => JSON.parse(e).date === night.date) : null);
    }
  }, 120_000);

  it('npm run verify passes on the live stack, trusts the log key on first use and saves it with the checkpoint it saw', async () => {
    const result = await verify('--state', state());
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`trusting the log key ${await vkey()} on first use: the site named it; recorded in ${state()}`);
    expect(result.stdout).toContain(`checkpoint of ${NIGHTS - 2} entries signed by the log key ${await vkey()} (from the site, trusted on first use)`);
    expect(result.stdout).toContain(`/api/history: ${NIGHTS} nights checked, ${NIGHTS - 2} of them in the log`);
    expect(result.stdout).toContain(`a figure for every night from ${addDays(today, -NIGHTS)} to ${addDays(today, -3)}`);
    expect(result.stdout).toContain(`against checkpoint ${NIGHTS - 2}`);
    expect(result.stdout).toContain(`saved checkpoint ${NIGHTS - 2}`);
    expect(result.stdout).toContain('  no --policy: the audits published under /log/audits, and whether their auditors count, are not checked\n');
    expect(JSON.parse(readFileSync(state(), 'utf8'))).toMatchObject({ vkey: await vkey(), size: NIGHTS - 2, previous_vkeys: [] });
    // The next run takes the key from the state file, and so does one given the key itself.
    expect((await verify('--state', state())).stdout).toContain(`(from the state file ${state()})`);
    expect((await verify('--vkey', await vkey())).stdout).toContain('(from --vkey)');
  }, 60_000);

  it('with the policy, finds the checkpoint cosigned by its quorum and each night witnessed on time or logged late: only the night final today was on time', async () => {
    const result = await verify('--policy', policy, '--state', state(), '--strict');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`signed by the log key ${await vkey()} (from the policy ${policy})`);
    expect(result.stdout).toContain(`cosigned by alpha, beta, gamma: the quorum "two-of-three" of the policy ${policy}`);
    expect(result.stdout).toMatch(/ archived checkpoints? read: 1 night witnessed on time, 297 logged late, 0 not yet witnessed with the deadline ahead\n/);
    expect(result.stdout).toContain(`  logged late: ${addDays(today, -NIGHTS)}..${addDays(today, -4)}\n`);
    // No auditor has attested yet.
    expect(result.stdout).toMatch(/\n  no audit is published[: ]/);
  }, 60_000);

  it('checks a saved receipt offline against the key the state file pinned, and with the site whether its night is still the latest', async () => {
    const date = addDays(today, -200);
    const offline = await verifyCommand('--receipt', receipt(date), '--state', state());
    expect(offline.code, offline.stderr).toBe(0);
    expect(offline.stdout).toMatch(new RegExp(`night ${date} \\([\\d.]+ USD\\) is entry ${NIGHTS - 200} of the checkpoint of ${NIGHTS - 2} entries of ${new URL(site).host}/log, signed by the log key`));
    const witnessed = await verifyCommand('--receipt', receipt(date), '--policy', policy);
    expect(witnessed.code, witnessed.stderr).toBe(0);
    expect(witnessed.stdout).toContain(`cosigned by alpha, beta, gamma: the quorum "two-of-three" of the policy ${policy}`);
    const online = await verify('--receipt', receipt(date), '--state', state());
    expect(online.stdout).toContain(`night ${date}: entry ${NIGHTS - 200} is still the latest for its date`);
  }, 60_000);
});
