// `npm run witness` as a real process: its key file, every answer tlog-witness names for
// add-checkpoint, its state across a restart, racing requests, bad usage and a clean stop.
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { spawn, type ChildProcess } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyCosignature } from '../../contract/tlog/cosignature.ts';
import { ROOT_DIR } from '../../config/checkout.ts';
import { LOCK_FILE } from '../../witness/lock.ts';
import { cosignerVerifierKey, parseVerifierKey } from '../../contract/tlog/vkey.ts';
import { post, startWitness, testLog, witnessCommand, type Running, type TestLog } from '../support/witness.ts';

const NAME = 'witness.example/test';
let dir: string;
let log: TestLog;
let policy: string;
const args = (sub: string) => (mkdirSync(path.join(dir, sub), { recursive: true }), { key: path.join(dir, sub, 'key'), name: NAME, policy, state: path.join(dir, sub, 'state') });
const stateOf = (sub: string) => {
  const files = readdirSync(path.join(dir, sub, 'state')).filter((f) => f.endsWith('.json'));
  expect(files).toHaveLength(1);
  return JSON.parse(readFileSync(path.join(dir, sub, 'state', files[0]!), 'utf8')) as { origin: string; size: number; root: string; checkpoint: string };
};

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'witness-test-'));
  log = await testLog('example.com/log', 100);
  policy = path.join(dir, 'policy');
  writeFileSync(policy, `# the log this witness cosigns\nlog ${log.vkey} https://example.com/log/\nquorum none\n`);
});
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

describe('add-checkpoint', () => {
  let w: Running;
  let witnessKey: { name: string; publicKey: Uint8Array<ArrayBuffer> };
  const cosigned = async (n: number, answer: { status: number; text: string }) => {
    expect(answer.status, answer.text).toBe(200);
    expect(answer.text).toMatch(/^\u2014 witness\.example\/test \S+\n$/u);
    return verifyCosignature(await log.body(n), answer.text, witnessKey);
  };
  beforeAll(async () => {
    w = await startWitness(args('cases'));
    witnessKey = await parseVerifierKey(w.vkey);
  });
  afterAll(async () => { await w.stop(); });

  it('answers 404 for an unknown origin and 403 without a valid signature by the policy\'s key', async () => {
    const stranger = await testLog('example.com/other', 10);
    expect((await post(w.url, await stranger.request(0, 5))).status).toBe(404);
    const impostor = await testLog('example.com/log', 10);
    expect((await post(w.url, await impostor.request(0, 5))).status).toBe(403);
    // The trusted key's signature over another checkpoint: a known key whose signature fails.
    const wrong = (await log.signed(6)).replace(await log.body(6), await log.body(5));
    expect((await post(w.url, await log.request(0, 5, { signed: wrong }))).status).toBe(403);
    // An unknown key's signature next to no valid one, under the log's name.
    const unsigned = `${await log.body(5)}\n\u2014 example.com/log AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n`;
    expect((await post(w.url, await log.request(0, 5, { signed: unsigned }))).status).toBe(403);
    expect(readdirSync(args('cases').state).filter((f) => f.endsWith('.json'))).toEqual([]);
  });

  it('answers 422 for a proof from size 0, then cosigns the first checkpoint and stores it first', async () => {
    const answer = await post(w.url, await log.request(0, 10, { proof: [await log.tree.root(5)] }));
    expect(answer.status).toBe(422);
    const before = Math.floor(Date.now() / 1000);
    const first = await post(w.url, await log.request(0, 10));
    const cosignature = await cosigned(10, first);
    expect(cosignature!.timestamp).toBeGreaterThanOrEqual(before);
    expect(cosignature!.timestamp).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    expect(stateOf('cases')).toMatchObject({ origin: 'example.com/log', size: 10, checkpoint: await log.signed(10) });
  });

  it('answers 400 for an old size above the size, and for malformed bodies', async () => {
    expect((await post(w.url, await log.request(20, 10))).status).toBe(400);
    const good = await log.request(10, 20);
    const lines = good.split('\n');
    for (const bad of [
      good.replace('old 10', 'old 010'),
      good.replace('old 10', 'old  10'),
      good.replace('old 10', 'old -10'),
      good.replace('old 10', 'new 10'),
      good.replace(lines[1]!, lines[1]!.slice(1)),
      good.replace(lines[1]!, lines[1]!.replace(/=$/, '')),
      good.replace(lines[1]!, `${lines[1]!}\n${lines[1]!.slice(0, 40)}AAAA`),
      good.replace('\n\n', '\n'),
      good.replace(/\n$/, ''),
      good.replace('example.com/log\n20\n', 'example.com/log\n020\n'),
      await log.request(10, 20, { proof: Array.from({ length: 64 }, () => new Uint8Array(32)) }),
      '',
    ]) {
      const answer = await post(w.url, bad);
      expect(answer.status, JSON.stringify(bad)).toBe(400);
    }
    expect((await post(w.url, new Uint8Array([0xff, 0xfe, 0x0a, 0x0a]))).status).toBe(400);
    expect(stateOf('cases').size).toBe(10);
  });

  it('answers 409 with text/x.tlog.size and the latest size when the old size is not the latest', async () => {
    for (const old of [0, 5, 11]) {
      const answer = await post(w.url, await log.request(old, 20));
      expect(answer).toEqual({ status: 409, contentType: 'text/x.tlog.size', text: '10\n' });
    }
  });

  it('answers 422 for a proof that does not verify, a fork among them, and keeps its state', async () => {
    const proof = await log.tree.consistencyProof(10, 20);
    for (let i = 0; i < proof.length; i++) {
      const changed = proof.map((h, j) => (j === i ? h.map((b, k) => (k === 0 ? b ^ 1 : b)) : h));
      expect((await post(w.url, await log.request(10, 20, { proof: changed }))).status).toBe(422);
    }
    expect((await post(w.url, await log.request(10, 20, { proof: proof.slice(1) }))).status).toBe(422);
    expect((await post(w.url, await log.request(10, 20, { proof: [] }))).status).toBe(422);
    const fork = await log.fork(3);
    expect((await post(w.url, await fork.request(10, 20))).status).toBe(422);
    expect(stateOf('cases').size).toBe(10);
  });

  it('cosigns a consistent checkpoint, the same one again, and answers 409 for the same size with another root', async () => {
    await cosigned(20, await post(w.url, await log.request(10, 20)));
    expect(stateOf('cases').size).toBe(20);
    const fork = await log.fork(15);
    const other = await post(w.url, await fork.request(20, 20));
    expect(other.status).toBe(409);
    expect(other.contentType).not.toBe('text/x.tlog.size');
    expect((await post(w.url, await log.request(20, 20, { proof: [await log.tree.root(20)] }))).status).toBe(422);
    await cosigned(20, await post(w.url, await log.request(20, 20)));
    await cosigned(37, await post(w.url, await log.request(20, 37)));
    expect(stateOf('cases').size).toBe(37);
  });

  it('answers only POST /add-checkpoint, refuses bodies over 64 KiB, and logs one line per request', async () => {
    expect((await fetch(`${w.url}/add-checkpoint`)).status).toBe(405);
    expect((await fetch(`${w.url}/add-checkpoint`)).headers.get('allow')).toBe('POST');
    expect((await fetch(`${w.url}/`, { method: 'POST' })).status).toBe(404);
    expect((await post(w.url, `${await log.request(37, 37)}${'x'.repeat(65 * 1024)}`)).status).toBe(413);
    expect(w.output()).toMatch(/^\S+Z 200 POST \/add-checkpoint origin="example\.com\/log" old=20 size=37 cosigned$/m);
    expect(w.output()).toMatch(/^\S+Z 409 POST \/add-checkpoint origin="example\.com\/log" old=5 size=20 /m);
    expect(w.output()).toMatch(/^\S+Z 404 POST \/add-checkpoint origin="example\.com\/other" old=0 size=5 /m);
  });
});

describe('the witness state', () => {
  it('survives a restart: the restarted witness knows the latest size and goes on from it', async () => {
    const first = await startWitness(args('restart'));
    await post(first.url, await log.request(0, 30));
    expect(await first.stop('SIGINT')).toBe(0);
    const second = await startWitness(args('restart'));
    try {
      expect(second.vkey).toBe(first.vkey);
      expect(await post(second.url, await log.request(0, 40))).toEqual({ status: 409, contentType: 'text/x.tlog.size', text: '30\n' });
      expect((await post(second.url, await (await log.fork(2)).request(30, 40))).status).toBe(422);
      expect((await post(second.url, await log.request(30, 40))).status).toBe(200);
    } finally {
      await second.stop();
    }
    expect(stateOf('restart').size).toBe(40);
  });

  it('answers 500 and no cosignature when the state cannot be written, and reads the state file again after', async () => {
    const w = await startWitness(args('broken'));
    try {
      expect((await post(w.url, await log.request(0, 10))).status).toBe(200);
      const file = path.join(args('broken').state, readdirSync(args('broken').state).find((f) => f.endsWith('.json'))!);
      const saved = readFileSync(file, 'utf8');
      rmSync(file);
      mkdirSync(file);
      expect((await post(w.url, await log.request(10, 20))).status).toBe(500);
      // As if the failed write had renamed its file into place after all: the witness must not go on from size 10.
      rmSync(file, { recursive: true });
      writeFileSync(file, saved.replace('"size": 10', '"size": 20').replace(/"root": "[^"]+"/, `"root": "${Buffer.from(await log.tree.root(20)).toString('base64')}"`));
      expect(await post(w.url, await log.request(10, 15))).toEqual({ status: 409, contentType: 'text/x.tlog.size', text: '20\n' });
      expect((await post(w.url, await log.request(20, 25))).status).toBe(200);
      expect(readdirSync(args('broken').state).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    } finally {
      await w.stop();
    }
  });

  it('never goes back when requests race: of those from the same old size, exactly one wins', async () => {
    const w = await startWitness(args('race'));
    try {
      let latest = 0;
      for (let round = 0; round < 8; round++) {
        const sizes = [latest + 1, latest + 2, latest + 3, latest + 5].sort(() => Math.random() - 0.5);
        const bodies = await Promise.all(sizes.map((n) => log.request(latest, n)));
        const answers = await Promise.all(bodies.map((body) => post(w.url, body)));
        const won = answers.flatMap((a, i) => (a.status === 200 ? [sizes[i]!] : []));
        expect(won, JSON.stringify(answers)).toHaveLength(1);
        for (const lost of answers.filter((a) => a.status !== 200)) expect(lost).toEqual({ status: 409, contentType: 'text/x.tlog.size', text: `${won[0]}\n` });
        expect(won[0]!).toBeGreaterThan(latest);
        latest = won[0]!;
        expect(stateOf('race').size).toBe(latest);
      }
    } finally {
      await w.stop();
    }
  });
});

describe('the state directory lock', () => {
  const killed = async (w: Running) => {
    const exited = new Promise((resolve) => w.child.once('exit', (_code, signal) => resolve(signal)));
    w.child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
  };
  const flags = (a: ReturnType<typeof args>) => ['--key', a.key, '--name', a.name, '--policy', a.policy, '--state', a.state, '--listen', '127.0.0.1:0'];
  const processState = (pid: number) => readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0];

  /** A witness whose parent never reaps it: the shell starts it, then becomes `sleep`, which never waits. */
  async function startUnreaped(a: ReturnType<typeof args>): Promise<{ sleeper: ChildProcess; pid: number; url: string; vkey: string }> {
    const sleeper = spawn('sh', ['-c', '"$0" "$@" & echo "witness pid $!"; exec sleep 600', process.execPath, path.join(ROOT_DIR, 'witness', 'cli.ts'), ...flags(a)], { cwd: ROOT_DIR });
    let text = '';
    const ready = new Promise<RegExpExecArray>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        text += chunk.toString();
        const match = /^witness pid (\d+)$[\s\S]*^vkey: (\S+)$[\s\S]*^listening on (http:\S+) /m.exec(text);
        if (match) resolve(match);
      };
      sleeper.stdout!.on('data', onData);
      // A witness that starts well writes nothing to stderr; one that is refused says why there and ends.
      sleeper.stderr!.on('data', (chunk: Buffer) => reject(new Error(`the witness did not start: ${text}${chunk.toString()}`)));
    });
    const match = await ready;
    return { sleeper, pid: Number(match[1]), vkey: match[2]!, url: match[3]! };
  }

  it('is let go by a witness killed with SIGKILL and never reaped: each of ten restarts at once serves and remembers', async () => {
    const sleepers: ChildProcess[] = [];
    try {
      let size = 0;
      for (let round = 0; round < 10; round++) {
        const w = await startUnreaped(args('crash'));
        sleepers.push(w.sleeper);
        const witnessKey = await parseVerifierKey(w.vkey);
        // It knows the size its killed predecessor cosigned last, and goes on from there.
        if (size > 0) expect(await post(w.url, await log.request(0, size + 5))).toEqual({ status: 409, contentType: 'text/x.tlog.size', text: `${size}\n` });
        const answer = await post(w.url, await log.request(size, size + 5));
        expect(answer.status, answer.text).toBe(200);
        expect(await verifyCosignature(await log.body(size + 5), answer.text, witnessKey)).toBeDefined();
        size += 5;
        expect(stateOf('crash').size).toBe(size);
        process.kill(w.pid, 'SIGKILL');
        // Dead but not reaped, so its pid still names a process: the next one starts all the same.
        while (processState(w.pid) !== 'Z') await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(size).toBe(50);
    } finally {
      for (const sleeper of sleepers) sleeper.kill('SIGKILL');
    }
  });

  it('refuses a second witness on the same state while the first lives, and takes the next at once once it is killed', async () => {
    const first = await startWitness(args('second'));
    const other = { ...args('second'), key: path.join(dir, 'second', 'key2') };
    const refused = await witnessCommand(Object.entries({ ...other, listen: '127.0.0.1:0' }).flatMap(([k, v]) => [`--${k}`, v]));
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`another witness is running with the state directory ${other.state}`);
    expect(refused.stdout).toBe('');
    // The refused one left the first one's lock as it was.
    expect((await post(first.url, await log.request(0, 10))).status).toBe(200);
    await killed(first);
    const second = await startWitness(other);
    try {
      expect(await post(second.url, await log.request(0, 20))).toEqual({ status: 409, contentType: 'text/x.tlog.size', text: '10\n' });
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
