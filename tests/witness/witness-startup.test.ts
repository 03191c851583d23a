// `npm run witness` starting as a real process: the key file it makes on first start and reads
// on the next, and the sentence and exit code 2 for every kind of bad usage.
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCK_FILE } from '../../witness/lock.ts';
import { cosignerVerifierKey, parseVerifierKey } from '../../contract/tlog/vkey.ts';
import { startWitness, witnessCommand, type TestLog } from '../support/witness.ts';
import { NAME, witnessArgs, witnessFolder } from '../support/witness-files.ts';

let dir: string;
let log: TestLog;
let policy: string;
const args = (sub: string) => witnessArgs(dir, policy, sub);

beforeAll(async () => ({ dir, log, policy } = await witnessFolder()));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the witness key', () => {
  it('is made on first start (PKCS#8 base64url, 0600), its vkey printed, and read again on the next', async () => {
    const first = await startWitness(args('key'), { npm: true });
    try {
      expect(first.output()).toContain(`Created a new witness key in ${args('key').key}`);
      expect(statSync(args('key').key).mode & 0o777).toBe(0o600);
      const pkcs8 = Buffer.from(readFileSync(args('key').key, 'utf8').trim(), 'base64url');
      const privateKey = await crypto.subtle.importKey('pkcs8', pkcs8, 'Ed25519', true, ['sign']);
      const publicKey = new Uint8Array(Buffer.from((await crypto.subtle.exportKey('jwk', privateKey)).x!, 'base64url'));
      expect(first.vkey).toBe(await cosignerVerifierKey(NAME, publicKey));
      expect((await parseVerifierKey(first.vkey)).type).toBe(0x04);
      expect(first.output()).toContain(`witness <short name> ${first.vkey} ${first.url}`);
    } finally {
      // npm does not pass SIGTERM on: end the whole process group npm leads.
      process.kill(-first.child.pid!, 'SIGTERM');
      await new Promise((resolve) => first.child.once('exit', resolve));
    }
    const second = await startWitness(args('key'));
    try {
      expect(second.output()).toContain(`Read the witness key from ${args('key').key}`);
      expect(second.vkey).toBe(first.vkey);
    } finally {
      expect(await second.stop()).toBe(0);
    }
  });
});

describe('bad usage', () => {
  it('exits 2 with a sentence for missing or bad flags, a bad policy or key file, and a state directory in use', async () => {
    const missing = await witnessCommand(['--name', NAME]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('Missing --key, --policy, --state, --listen.');
    const full = (over: Record<string, string>) => Object.entries({ ...args('usage'), listen: '127.0.0.1:0', ...over }).flatMap(([k, v]) => [`--${k}`, v]);
    expect((await witnessCommand([...full({}), '--verbose'])).code).toBe(2);
    expect((await witnessCommand(full({ listen: '127.0.0.1' }))).stderr).toContain('--listen "127.0.0.1" is not HOST:PORT');
    expect((await witnessCommand(full({ name: 'a+b' }))).code).toBe(2);
    writeFileSync(path.join(dir, 'bad-policy'), `log ${log.vkey}\nquorum nobody\n`);
    const badPolicy = await witnessCommand(full({ policy: path.join(dir, 'bad-policy') }));
    expect(badPolicy.code).toBe(2);
    expect(badPolicy.stderr).toContain('policy line 2: "nobody" is not defined on an earlier line');
    writeFileSync(path.join(dir, 'no-log'), 'quorum none\n');
    expect((await witnessCommand(full({ policy: path.join(dir, 'no-log') }))).stderr).toContain('the policy has no "log" line');
    writeFileSync(path.join(dir, 'bad-key'), 'not a key\n');
    const badKey = await witnessCommand(full({ key: path.join(dir, 'bad-key') }));
    expect(badKey.code).toBe(2);
    expect(badKey.stderr).toContain('does not hold an Ed25519 private key');
    expect((await witnessCommand(full({ key: path.join(dir, 'nowhere', 'key') }))).stderr).toContain('cannot create the key file');
    const running = await startWitness(args('usage'));
    try {
      const second = await witnessCommand(full({ key: path.join(dir, 'usage', 'key2') }));
      expect(second.code).toBe(2);
      expect(second.stderr).toContain(`--state: another witness is running with the state directory ${args('usage').state} (it holds the lock on ${path.join(args('usage').state, LOCK_FILE)}); stop it first, or give this one another --state`);
    } finally {
      await running.stop();
    }
  });
});
