// Witnesses for the tests, as real processes: `npm run witness` (or the node command it runs) and
// the Go witness and log client of tests/go, built once per test file. And a log, made with the
// service's own tree and note code, that writes add-checkpoint requests.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { base64, noteVerifierKey } from '../../contract/log-key.ts';
import { buildTree, type Tree } from '../../contract/tlog/merkle.ts';
import { checkpointBody, signNote } from '../../contract/tlog/note.ts';
import { ROOT_DIR } from '../../config/checkout.ts';

export const run = promisify(execFile);

export interface Running {
  child: ChildProcess;
  url: string;
  vkey: string;
  /** Everything printed so far, stdout and stderr. */
  output: () => string;
  /** Sends the signal and resolves with the exit code. */
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

function watch(child: ChildProcess, ready: RegExp, parse: (match: RegExpExecArray, text: string) => { url: string; vkey: string }): Promise<Running> {
  let text = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start within 30 s:\n${text}`)), 30_000);
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      const match = ready.exec(text);
      if (match) {
        clearTimeout(timer);
        resolve({
          child,
          ...parse(match, text),
          output: () => text,
          stop: (signal = 'SIGTERM') => { child.kill(signal); return exited; },
        });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => { clearTimeout(timer); reject(new Error(`exited ${code} before it listened:\n${text}`)); });
  });
}

export interface WitnessArgs { key: string; name: string; policy: string; state: string; listen?: string }

const witnessArgs = (a: WitnessArgs) => ['--key', a.key, '--name', a.name, '--policy', a.policy, '--state', a.state, '--listen', a.listen ?? '127.0.0.1:0'];

/** Our witness; through `npm run witness` when `npm` is set (npm does not pass signals on, so stop() then ends npm only). */
export function startWitness(args: WitnessArgs, { npm = false } = {}): Promise<Running> {
  const child = npm
    ? spawn('npm', ['run', '--silent', 'witness', '--', ...witnessArgs(args)], { cwd: ROOT_DIR, detached: true })
    : spawn(process.execPath, [path.join(ROOT_DIR, 'witness', 'cli.ts'), ...witnessArgs(args)], { cwd: ROOT_DIR });
  return watch(child, /^listening on (http:\S+) /m, (match, text) => ({ url: match[1]!, vkey: /^vkey: (\S+)$/m.exec(text)![1]! }));
}

/** Runs the witness command to its end: for bad usage. */
export function witnessCommand(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return run(process.execPath, [path.join(ROOT_DIR, 'witness', 'cli.ts'), ...args], { cwd: ROOT_DIR }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );
}

const GO_ENV = { ...process.env, GO111MODULE: 'off', GOPATH: '/usr/share/gocode', GOCACHE: path.join(tmpdir(), 'public-stats-go-cache') };

/** Builds tests/go/witness and tests/go/witnessclient into `dir`. */
export async function buildGo(dir: string): Promise<{ witness: string; client: string }> {
  mkdirSync(dir, { recursive: true });
  const witness = path.join(dir, 'witness');
  const client = path.join(dir, 'witnessclient');
  await run('go', ['build', '-o', witness, './tests/go/witness'], { cwd: ROOT_DIR, env: GO_ENV });
  await run('go', ['build', '-o', client, './tests/go/witnessclient'], { cwd: ROOT_DIR, env: GO_ENV });
  return { witness, client };
}

export function startGoWitness(binary: string, name: string, logVkeys: string[]): Promise<Running> {
  const child = spawn(binary, ['--name', name, ...logVkeys.flatMap((v) => ['--policy-log-vkey', v]), '--listen', '127.0.0.1:0']);
  return watch(child, /^listening (http:\S+)$/m, (match, text) => ({ url: match[1]!, vkey: /^vkey (\S+)$/m.exec(text)![1]! }));
}

interface LogKey { origin: string; privateKey: CryptoKey; publicKey: Uint8Array<ArrayBuffer> }

export interface TestLog extends LogKey {
  tree: Tree;
  vkey: string;
  body(n: number): Promise<string>;
  signed(n: number): Promise<string>;
  /** The add-checkpoint body: "old", the proof from old to n (or the one given), a blank line, the signed checkpoint (or the one given). */
  request(old: number, n: number, options?: { proof?: Uint8Array[]; signed?: string }): Promise<string>;
  /** The same log, under the same key, with entry `at` rewritten. */
  fork(at: number): Promise<TestLog>;
}

async function logOf(key: LogKey, entries: Uint8Array[]): Promise<TestLog> {
  const tree = await buildTree(entries);
  const body = async (n: number) => checkpointBody(key.origin, n, await tree.root(n));
  const signed = async (n: number) => signNote(await body(n), key.origin, key.privateKey, key.publicKey);
  return {
    ...key,
    tree,
    vkey: await noteVerifierKey(key.origin, key.publicKey),
    body,
    signed,
    async request(old, n, options = {}) {
      const proof = options.proof ?? (old === 0 || old >= n ? [] : await tree.consistencyProof(old, n));
      return [`old ${old}`, ...proof.map(base64), '', options.signed ?? (await signed(n))].join('\n');
    },
    fork: (at) => logOf(key, entries.map((e, i) => (i === at ? new TextEncoder().encode('rewritten') : e))),
  };
}

/** A log of `size` entries, "entry 0" onwards, with a new key named by its origin. */
export async function testLog(origin: string, size: number): Promise<TestLog> {
  const pair = (await crypto.subtle.generateKey('Ed25519', true, ['sign', 'verify'])) as CryptoKeyPair;
  const publicKey = new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey));
  return logOf({ origin, privateKey: pair.privateKey, publicKey }, Array.from({ length: size }, (_, i) => new TextEncoder().encode(`entry ${i}`)));
}

export async function post(url: string, body: string | Uint8Array<ArrayBuffer>): Promise<{ status: number; contentType: string; text: string }> {
  const res = await fetch(`${url}/add-checkpoint`, { method: 'POST', body });
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', text: await res.text() };
}
