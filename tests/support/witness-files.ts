// The files the witness process tests give a witness: a scratch folder with a test log and a policy
// that trusts it, and per case a subfolder holding that witness's key and state directory.
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { testLog, type TestLog } from './witness.ts';

export const NAME = 'witness.example/test';

/** A new scratch folder, a log of 100 entries, and the policy file that names the log. */
export async function witnessFolder(): Promise<{ dir: string; log: TestLog; policy: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'witness-test-'));
  const log = await testLog('example.com/log', 100);
  const policy = path.join(dir, 'policy');
  writeFileSync(policy, `# the log this witness cosigns\nlog ${log.vkey} https://example.com/log/\nquorum none\n`);
  return { dir, log, policy };
}

/** The arguments of a witness whose key and state live under `sub`, made if missing. */
export const witnessArgs = (dir: string, policy: string, sub: string) =>
  (mkdirSync(path.join(dir, sub), { recursive: true }), { key: path.join(dir, sub, 'key'), name: NAME, policy, state: path.join(dir, sub, 'state') });

/** The one state file the witness under `sub` keeps. */
export const witnessState = (dir: string, sub: string) => {
  const files = readdirSync(path.join(dir, sub, 'state')).filter((f) => f.endsWith('.json'));
  expect(files).toHaveLength(1);
  return JSON.parse(readFileSync(path.join(dir, sub, 'state', files[0]!), 'utf8')) as { origin: string; size: number; root: string; checkpoint: string };
};
