// `npm run witness` as a real process keeping its state: across a restart, a failed write and
// racing requests, and the state directory's lock against a second witness or one never reaped.
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyCosignature } from '../../contract/tlog/cosignature.ts';
import { ROOT_DIR } from '../../config/checkout.ts';
import { parseVerifierKey } from '../../contract/tlog/vkey.ts';
import { post, startWitness, witnessCommand, type Running, type TestLog } from '../support/witness.ts';
import { witnessArgs, witnessFolder, witnessState } from '../support/witness-files.ts';

let dir: string;
let log: TestLog;
let policy: string;
const args = (sub: string) => witnessArgs(dir, policy, sub);
const stateOf = (sub: string) => witnessState(dir, sub);

beforeAll(async () => ({ dir, log, policy } = await witnessFolder()));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

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
