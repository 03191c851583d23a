// The service as the verifiable tests meet it from outside: a stack whose public site URL is a proxy
// that relays, or tampers with, what the site serves; three witnesses under a quorum of two; 300 nights
// imported; and the readers of its log (Go's sumdb/{note,tlog} through tests/go/tlogcheck, `npm run verify`).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import { addDays, todayUtc } from '../../contract/dates.ts';
import { noteVerifierKey } from '../../contract/log-key.ts';
import { logOrigin, SITE_PATHS } from '../../contract/paths.ts';
import type { Tree } from '../../contract/tlog/merkle.ts';
import { createAnswerSigner, type AnswerSigner } from '../../edge/response-signature.ts';
import { parseTilePath, tileBytes } from '../../edge/tlog/tiles.ts';
import { ROOT_DIR } from '../../config/checkout.ts';
import { freePort } from '../../stack/processes.ts';
import { startTestStack, type TestStack } from './stack.ts';
import { verify as verifyCommand } from './verifier.ts';
import { startWitness, type Running } from './witness.ts';
import { cliEnv, runCli } from './writer.ts';

const run = promisify(execFile);
export const NIGHTS = 300;
export const today = todayUtc();
export const FORK_RAISE = 7;

/**
 * What the proxy does to the answers it relays: change bytes as they pass ('entry', 'night',
 * 'stats'); serve an older checkpoint ('rollback'); or, holding our keys, drop a night, inflate the
 * total or claim the first night was witnessed on time and re-sign the answer with our HTTP key
 * ('drop', 'inflate', 'claim'), list our HTTP key as retired ('retired'), serve the checkpoint signed by
 * another log key alone ('key') or beside ours ('overlap'), or serve a whole other history under our
 * log key: tiles, checkpoint, nights and total ('fork').
 */
export type Tamper = 'none' | 'entry' | 'rollback' | 'night' | 'stats' | 'drop' | 'inflate' | 'claim' | 'retired' | 'key' | 'overlap' | 'fork';

export interface Tampering {
  tamper: Tamper;
  /** The older checkpoint served ('rollback'). */
  rolledBack: string;
  /** When the key directory says our HTTP key was retired ('retired'), in unix seconds. */
  retiredAt: number;
  /** The other log key ('key', 'overlap'): its vkey, and the checkpoint as served, signed by it. */
  otherKey?: { vkey: string; alone: string; beside: string };
  /** The other history ('fork'): one old night raised by FORK_RAISE USD, the tree rebuilt and signed with our log key. */
  fork?: { tree: Tree; entries: Uint8Array[]; checkpoint: string; root: string; date: string };
}

const NO_TAMPERING: Tampering = { tamper: 'none', rolledBack: '', retiredAt: 0 };

/** Rewrites what the proxy relays; re-signed answers are signed as the edge signs them, with our HTTP key. */
async function tampered(t: Tampering, signer: { proxyHost: string; answerSigner?: AnswerSigner }, url: string, status: number, headers: http.IncomingHttpHeaders, body: Buffer): Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }> {
  const json = () => JSON.parse(body.toString('utf8'));
  const resign = async (changed: unknown, logCheckpoint = headers['log-checkpoint'] as string) => {
    const bytes = Buffer.from(`${JSON.stringify(changed)}\n`);
    const [path, query] = url.split('?') as [string, string | undefined];
    const signed = await signer.answerSigner!.sign({ status, contentType: headers['content-type']!, body: bytes, authority: signer.proxyHost, path, query: query === undefined ? undefined : `?${query}`, logCheckpoint });
    return { headers: { ...headers, ...signed, 'log-checkpoint': logCheckpoint }, body: bytes };
  };
  if (t.tamper === 'entry' && url.startsWith('/log/tile/entries/000')) {
    // One digit of the first entry's payout, its length kept.
    return { headers, body: Buffer.from(body.toString('latin1').replace(/"usd":(\d)/, (_, d: string) => `"usd":${(Number(d) + 1) % 10}`), 'latin1') };
  }
  if (t.tamper === 'rollback' && url === '/log/checkpoint') return { headers, body: Buffer.from(t.rolledBack) };
  if (t.tamper === 'night' && url === '/api/history') {
    const record = json();
    record.nights[5].usd += 1;
    return { headers, body: Buffer.from(`${JSON.stringify(record)}\n`) };
  }
  if (t.tamper === 'stats' && url === '/api/stats') return { headers, body: Buffer.from(body.toString('utf8').replace('"total_usd":', '"total_usd":9')) };
  if (t.tamper === 'drop' && url === '/api/history') {
    const record = json();
    record.nights.splice(20, 1);
    return resign(record);
  }
  if (t.tamper === 'inflate' && url === '/api/stats') {
    const record = json();
    record.total_usd = Math.round((record.total_usd + FORK_RAISE) * 100) / 100;
    return resign(record);
  }
  if (t.tamper === 'claim' && url === '/api/history') {
    const record = json();
    record.nights[0].witnessed_on_time = true;
    return resign(record);
  }
  if (t.tamper === 'retired' && url === SITE_PATHS.SIG_DIRECTORY) {
    const directory = json();
    for (const key of directory.keys) key.exp = t.retiredAt;
    return { headers, body: Buffer.from(JSON.stringify(directory)) };
  }
  if ((t.tamper === 'key' || t.tamper === 'overlap') && url === '/log/checkpoint') return { headers, body: Buffer.from(t.tamper === 'key' ? t.otherKey!.alone : t.otherKey!.beside) };
  if ((t.tamper === 'key' || t.tamper === 'overlap') && url === '/log/checkpoint/') return { headers, body: Buffer.from(`${JSON.stringify({ ...json(), vkey: t.otherKey!.vkey })}\n`) };
  if (t.tamper === 'fork') {
    const fork = t.fork!;
    const head = (value: string) => value.replace(/root=:[^:]*:/, `root=:${fork.root}:`);
    if (url === '/log/checkpoint') return { headers, body: Buffer.from(fork.checkpoint) };
    const tile = url.startsWith('/log/tile/') ? parseTilePath(url.slice('/log/'.length)) : undefined;
    if (tile) {
      const { 'content-encoding': _coding, ...plain } = headers;
      return { headers: plain, body: Buffer.from(tileBytes(fork.tree, fork.entries, tile)!) };
    }
    if (url === '/api/history') {
      const record = json();
      for (const night of record.nights) {
        if (night.date === fork.date) night.usd = Math.round((night.usd + FORK_RAISE) * 100) / 100;
        if (night.date >= fork.date) night.total_usd = Math.round((night.total_usd + FORK_RAISE) * 100) / 100;
      }
      return resign(record, head(headers['log-checkpoint'] as string));
    }
    if (url === '/api/stats') {
      const record = json();
      record.total_usd = Math.round((record.total_usd + FORK_RAISE) * 100) / 100;
      return resign(record, head(headers['log-checkpoint'] as string));
    }
  }
  return { headers, body };
}

function relay(sitePort: number, tampering: () => Tampering, signer: { proxyHost: string; answerSigner?: AnswerSigner }) {
  return http.createServer((req, res) => {
    const upstream = http.request({ host: '127.0.0.1', port: sitePort, path: req.url, method: req.method, headers: req.headers }, (reply) => {
      const chunks: Buffer[] = [];
      reply.on('data', (c: Buffer) => chunks.push(c));
      reply.on('end', () => {
        const { 'transfer-encoding': _chunked, ...kept } = reply.headers;
        tampered(tampering(), signer, req.url ?? '', reply.statusCode ?? 502, kept, Buffer.concat(chunks)).then(
          ({ headers, body }) => res.writeHead(reply.statusCode ?? 502, { ...headers, 'content-length': String(body.length) }).end(body),
          () => res.writeHead(502).end(),
        );
      });
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
}

export interface VerifiableService {
  stack: TestStack;
  /** A scratch folder: the witnesses' keys and state, the policies, and what the tests save. */
  dir: string;
  /** The log's witness policy (https://c2sp.org/tlog-policy): three witnesses, any two of which make the quorum. */
  policy: string;
  /** The public site URL: the proxy's. */
  site: string;
  /** Imports events with the writer's CLI under the policy, as the setup imported the nights. */
  importEvents(events: object[]): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the service behind its proxy, which does to what it relays what `tampering()` says at each request. */
export async function startVerifiableService(tampering: () => Tampering = () => NO_TAMPERING): Promise<VerifiableService> {
  const dir = mkdtempSync(path.join(tmpdir(), 'verifiable-'));
  const [proxyPort, sitePort] = [await freePort(), await freePort()];
  const signer: { proxyHost: string; answerSigner?: AnswerSigner } = { proxyHost: `127.0.0.1:${proxyPort}` };
  const site = `http://${signer.proxyHost}`;
  const proxy = relay(sitePort, tampering, signer);
  await new Promise<void>((resolve) => proxy.listen(proxyPort, '127.0.0.1', resolve));
  let started: TestStack | undefined;
  let witnesses: Running[] = [];
  const stop = async () => {
    await Promise.all(witnesses.map((w) => w.stop()));
    await started?.destroy();
    await new Promise((resolve) => proxy.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const stack = await startTestStack({ env: { SITE_URL: site, SITE_PORT: String(sitePort) } });
    started = stack;
    // The witnesses trust the log's key, as its followers would; the writer asks them under the policy.
    const logVkey = await noteVerifierKey(logOrigin(stack.cfg, false), Buffer.from(stack.cfg.LOG_PUBLIC_KEY, 'base64url'));
    const trust = path.join(dir, 'trust.policy');
    writeFileSync(trust, `log ${logVkey}\nquorum none\n`);
    const names = ['alpha', 'beta', 'gamma'];
    witnesses = await Promise.all(names.map((name) => startWitness({ key: path.join(dir, `${name}.key`), name: `witness.test/${name}`, policy: trust, state: path.join(dir, `${name}-state`) })));
    const policy = path.join(dir, 'log.policy');
    writeFileSync(policy, [`log ${logVkey}`, ...names.map((name, i) => `witness ${name} ${witnesses[i]!.vkey} ${witnesses[i]!.url}`), 'group two-of-three 2 alpha beta gamma', 'quorum two-of-three', ''].join('\n'));
    const importEvents = async (events: object[]) => {
      const result = await runCli(['import', '-'], cliEnv(stack, { LOG_POLICY: policy }), events.map((e) => JSON.stringify(e)).join('\n') + '\n');
      expect(result.code, result.stderr).toBe(0);
    };
    const events: object[] = [];
    for (let i = NIGHTS; i >= 1; i--) {
      const date = addDays(today, -i);
      events.push({ type: 'payout', date, usd: 20 + (i % 37) + 0.25 });
      if (i % 3) events.push({ type: 'trading_cost', date, usd: (i % 11) - 4 });
      if (i % 2) events.push({ type: 'capital', at: `${date}T18:00:00Z`, cash_usd: 5000 + i, inventory_usd: 250.5, positions: 4 });
    }
    await importEvents(events);
    signer.answerSigner = await createAnswerSigner(stack.cfg.HTTP_SIG_PRIVATE_KEY);
    return { stack, dir, policy, site, importEvents, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The readers of the log the service's site serves, keeping what they save in the service's folder. */
export function logReaders(service: () => VerifiableService) {
  const vkey = async () => {
    const llms = await (await fetch(service().site + SITE_PATHS.LLMS_TXT)).text();
    return /note verifier key \(C2SP signed-note\) is `([^`]+)`/.exec(llms)![1]!;
  };
  const tlogcheck = async (...args: string[]) => {
    const { stdout } = await run('go', ['run', './tests/go/tlogcheck', '-log', service().site + SITE_PATHS.LOG.replace(/\/$/, ''), '-vkey', await vkey(), ...args], {
      cwd: ROOT_DIR,
      env: { ...process.env, GO111MODULE: 'off', GOPATH: '/usr/share/gocode', GOCACHE: path.join(tmpdir(), 'public-stats-go-cache') },
    });
    return JSON.parse(stdout) as { origin: string; size: number; entries: string[]; extends?: number; receipts: { index: number; entry: string; size: number }[] };
  };
  const checkpoint = async () => (await fetch(service().site + SITE_PATHS.LOG_CHECKPOINT)).text();
  const history = async () => (await (await fetch(service().site + SITE_PATHS.SITE_HISTORY)).json()) as { nights: { date: string; usd: number; log_index: number | null }[] };
  const verify = (...args: string[]) => verifyCommand('--site', service().site, ...args);
  const state = () => path.join(service().dir, 'verify-state.json');
  const receipt = (date: string) => path.join(service().dir, `${date}.tlog-proof`);
  return { vkey, tlogcheck, checkpoint, history, verify, state, receipt };
}
