// A track record anyone can verify, checked from outside with code we did not write: every data
// answer of both hosts, in every encoding, verifies with two RFC 9421 libraries (and fails once a
// body byte changes); the log's checkpoint, tiles, receipts and a consistency proof across a
// correction verify with Go's golang.org/x/mod/sumdb/{note,tlog}; and `npm run verify` passes on the
// live stack, witnessed by three witnesses under a quorum of two, and fails with the right sentence
// behind a proxy that tampers with what it serves, even one that holds every key of ours and re-signs
// what it changed. The stack's public site URL is that proxy, so what it signs is what a client of
// the proxy sees.
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, todayUtc } from '../contract/dates.ts';
import { base64, noteVerifierKey } from '../contract/log-key.ts';
import { logOrigin } from '../contract/paths.ts';
import { buildTree, type Tree } from '../contract/tlog/merkle.ts';
import { checkpointBody, importNoteSigningKey, signNote } from '../contract/tlog/note.ts';
import { createAnswerSigner, type AnswerSigner } from '../edge/response-signature.ts';
import { parseTilePath, tileBytes } from '../edge/tlog/tiles.ts';
import { ROOT_DIR } from '../config/checkout.ts';
import { freePort } from '../stack/processes.ts';
import { API_PATHS, SITE_PATHS } from '../contract/paths.ts';
import { SITE_DOCUMENTS } from '../contract/documents.ts';
import { verifierScript } from '../site/render/verifier.ts';
import { startTestStack, type TestStack } from './support/stack.ts';
import { rawGet, sha256Digest, verifies, verifyWithHttpMessageSig, type DirectoryKey, type RawAnswer } from './support/signatures.ts';
import { startWitness, type Running } from './support/witness.ts';
import { verify as verifyCommand } from './support/verifier.ts';
import { cliEnv, runCli } from './support/writer.ts';

const run = promisify(execFile);
const NIGHTS = 300;
const today = todayUtc();
let stack: TestStack;
let dir: string;
/** The log's witness policy (https://c2sp.org/tlog-policy): three witnesses, any two of which make the quorum. */
let policy: string;
let witnesses: Running[] = [];
let proxy: http.Server;
let site: string;
/**
 * What the proxy does to the answers it relays: change bytes as they pass ('entry', 'night',
 * 'stats'); serve an older checkpoint ('rollback'); or, holding our keys, drop a night, inflate the
 * total or claim the first night was witnessed on time and re-sign the answer with our HTTP key
 * ('drop', 'inflate', 'claim'), list our HTTP key as retired ('retired'), serve the checkpoint signed by
 * another log key alone ('key') or beside ours ('overlap'), or serve a whole other history under our
 * log key: tiles, checkpoint, nights and total ('fork').
 */
let tamper: 'none' | 'entry' | 'rollback' | 'night' | 'stats' | 'drop' | 'inflate' | 'claim' | 'retired' | 'key' | 'overlap' | 'fork' = 'none';
let rolledBack = '';
/** When the key directory says our HTTP key was retired ('retired'), in unix seconds. */
let retiredAt = 0;
let proxyHost = '';
let answerSigner: AnswerSigner;
/** The other log key ('key', 'overlap'): its vkey, and the checkpoint as served, signed by it. */
let otherKey: { vkey: string; alone: string; beside: string };
/** The other history ('fork'): one old night raised by 7 USD, the tree rebuilt and signed with our log key. */
let fork: { tree: Tree; entries: Uint8Array[]; checkpoint: string; root: string; date: string };
const FORK_INDEX = 10;
const FORK_RAISE = 7;

/** Rewrites what the proxy relays; re-signed answers are signed as the edge signs them, with our HTTP key. */
async function tampered(url: string, status: number, headers: http.IncomingHttpHeaders, body: Buffer): Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }> {
  const json = () => JSON.parse(body.toString('utf8'));
  const resign = async (changed: unknown, logCheckpoint = headers['log-checkpoint'] as string) => {
    const bytes = Buffer.from(`${JSON.stringify(changed)}\n`);
    const [path, query] = url.split('?') as [string, string | undefined];
    const signed = await answerSigner.sign({ status, contentType: headers['content-type']!, body: bytes, authority: proxyHost, path, query: query === undefined ? undefined : `?${query}`, logCheckpoint });
    return { headers: { ...headers, ...signed, 'log-checkpoint': logCheckpoint }, body: bytes };
  };
  if (tamper === 'entry' && url.startsWith('/log/tile/entries/000')) {
    // One digit of the first entry's payout, its length kept.
    return { headers, body: Buffer.from(body.toString('latin1').replace(/"usd":(\d)/, (_, d: string) => `"usd":${(Number(d) + 1) % 10}`), 'latin1') };
  }
  if (tamper === 'rollback' && url === '/log/checkpoint') return { headers, body: Buffer.from(rolledBack) };
  if (tamper === 'night' && url === '/api/history') {
    const record = json();
    record.nights[5].usd += 1;
    return { headers, body: Buffer.from(`${JSON.stringify(record)}\n`) };
  }
  if (tamper === 'stats' && url === '/api/stats') return { headers, body: Buffer.from(body.toString('utf8').replace('"total_usd":', '"total_usd":9')) };
  if (tamper === 'drop' && url === '/api/history') {
    const record = json();
    record.nights.splice(20, 1);
    return resign(record);
  }
  if (tamper === 'inflate' && url === '/api/stats') {
    const record = json();
    record.total_usd = Math.round((record.total_usd + FORK_RAISE) * 100) / 100;
    return resign(record);
  }
  if (tamper === 'claim' && url === '/api/history') {
    const record = json();
    record.nights[0].witnessed_on_time = true;
    return resign(record);
  }
  if (tamper === 'retired' && url === SITE_PATHS.SIG_DIRECTORY) {
    const directory = json();
    for (const key of directory.keys) key.exp = retiredAt;
    return { headers, body: Buffer.from(JSON.stringify(directory)) };
  }
  if ((tamper === 'key' || tamper === 'overlap') && url === '/log/checkpoint') return { headers, body: Buffer.from(tamper === 'key' ? otherKey.alone : otherKey.beside) };
  if ((tamper === 'key' || tamper === 'overlap') && url === '/log/checkpoint/') return { headers, body: Buffer.from(`${JSON.stringify({ ...json(), vkey: otherKey.vkey })}\n`) };
  if (tamper === 'fork') {
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

function relay(sitePort: number) {
  return http.createServer((req, res) => {
    const upstream = http.request({ host: '127.0.0.1', port: sitePort, path: req.url, method: req.method, headers: req.headers }, (reply) => {
      const chunks: Buffer[] = [];
      reply.on('data', (c: Buffer) => chunks.push(c));
      reply.on('end', () => {
        const { 'transfer-encoding': _chunked, ...kept } = reply.headers;
        tampered(req.url ?? '', reply.statusCode ?? 502, kept, Buffer.concat(chunks)).then(
          ({ headers, body }) => res.writeHead(reply.statusCode ?? 502, { ...headers, 'content-length': String(body.length) }).end(body),
          () => res.writeHead(502).end(),
        );
      });
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
}

async function importEvents(events: object[]) {
  const result = await runCli(['import', '-'], cliEnv(stack, { LOG_POLICY: policy }), events.map((e) => JSON.stringify(e)).join('\n') + '\n');
  expect(result.code, result.stderr).toBe(0);
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'verifiable-'));
  const [proxyPort, sitePort] = [await freePort(), await freePort()];
  proxyHost = `127.0.0.1:${proxyPort}`;
  site = `http://${proxyHost}`;
  proxy = relay(sitePort);
  await new Promise<void>((resolve) => proxy.listen(proxyPort, '127.0.0.1', resolve));
  stack = await startTestStack({ env: { SITE_URL: site, SITE_PORT: String(sitePort) } });
  // The witnesses trust the log's key, as its followers would; the writer asks them under the policy.
  const logVkey = await noteVerifierKey(logOrigin(stack.cfg, false), Buffer.from(stack.cfg.LOG_PUBLIC_KEY, 'base64url'));
  const trust = path.join(dir, 'trust.policy');
  writeFileSync(trust, `log ${logVkey}\nquorum none\n`);
  const names = ['alpha', 'beta', 'gamma'];
  witnesses = await Promise.all(names.map((name) => startWitness({ key: path.join(dir, `${name}.key`), name: `witness.test/${name}`, policy: trust, state: path.join(dir, `${name}-state`) })));
  policy = path.join(dir, 'log.policy');
  writeFileSync(policy, [`log ${logVkey}`, ...names.map((name, i) => `witness ${name} ${witnesses[i]!.vkey} ${witnesses[i]!.url}`), 'group two-of-three 2 alpha beta gamma', 'quorum two-of-three', ''].join('\n'));
  const events: object[] = [];
  for (let i = NIGHTS; i >= 1; i--) {
    const date = addDays(today, -i);
    events.push({ type: 'payout', date, usd: 20 + (i % 37) + 0.25 });
    if (i % 3) events.push({ type: 'trading_cost', date, usd: (i % 11) - 4 });
    if (i % 2) events.push({ type: 'capital', at: `${date}T18:00:00Z`, cash_usd: 5000 + i, inventory_usd: 250.5, positions: 4 });
  }
  await importEvents(events);
  answerSigner = await createAnswerSigner(stack.cfg.HTTP_SIG_PRIVATE_KEY);
}, 180_000);

afterAll(async () => {
  await Promise.all(witnesses.map((w) => w.stop()));
  await stack?.destroy();
  await new Promise((resolve) => proxy?.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

const directoryKeys = async (): Promise<DirectoryKey[]> => (await (await fetch(site + SITE_PATHS.SIG_DIRECTORY)).json()).keys;

describe('signed answers', () => {
  const answers = (): { url: string; headers: Record<string, string> }[] => [
    { url: stack.cfg.apiUrl + API_PATHS.STATS, headers: { apikey: stack.cfg.ANON_KEY } },
    { url: stack.cfg.apiUrl + API_PATHS.HISTORY, headers: { apikey: stack.cfg.ANON_KEY } },
    { url: stack.cfg.apiUrl + API_PATHS.LOG, headers: { apikey: stack.cfg.ANON_KEY } },
    { url: site + SITE_PATHS.SITE_STATS, headers: {} },
    { url: site + SITE_PATHS.SITE_HISTORY, headers: {} },
    { url: site + SITE_PATHS.SITE_HISTORY_CSV, headers: {} },
    { url: `${site}${SITE_PATHS.SITE_HISTORY}?from=${addDays(today, -20)}&to=${addDays(today, -10)}`, headers: {} },
    { url: `${site}${SITE_PATHS.SITE_HISTORY_CSV}?to=${addDays(today, -100)}`, headers: {} },
  ];
  const brotli = existsSync('/usr/lib/nginx/modules/ngx_http_brotli_filter_module.so');

  it('every data answer, in every encoding, verifies with http-message-sig and http-message-signatures, covering what it must', async () => {
    const keys = await directoryKeys();
    for (const { url, headers } of answers()) {
      for (const encoding of ['identity', 'gzip', ...(brotli ? ['br'] : [])]) {
        const answer = await rawGet(url, { ...headers, 'accept-encoding': encoding });
        expect(answer.status, url).toBe(200);
        expect(answer.headers['content-encoding'], `${url} ${encoding}`).toBe(encoding === 'identity' ? undefined : encoding);
        expect(await verifies(answer, keys), `${url} ${encoding}`).toBe(true);
        const params = await verifyWithHttpMessageSig(answer, keys);
        expect(params).toMatchObject({ alg: 'ed25519', tag: 'public-stats', keyid: keys[0]!.kid });
        expect(params.expires).toBeUndefined();
        const input = answer.headers['signature-input']!;
        expect(input).toContain('("@status" "content-type" "content-digest" "@authority";req "@path";req');
        expect(input.includes('"@query";req')).toBe(url.includes('?'));
        // The gateway keeps the signed answer: asked again, it is the same signature.
        const again = await rawGet(url, { ...headers, 'accept-encoding': encoding });
        expect(again.headers.signature).toBe(answer.headers.signature);
      }
    }
  }, 60_000);

  it('fails once one byte of a body changes, or the request it answered was another', async () => {
    const keys = await directoryKeys();
    for (const { url, headers } of answers()) {
      const answer = await rawGet(url, { ...headers, 'accept-encoding': 'gzip' });
      const body = Buffer.from(answer.body);
      const middle = body.length >> 1;
      body[middle] = body[middle]! ^ 1;
      // The digest no longer matches; and a digest made to match the new body breaks the signature.
      expect(await verifies({ ...answer, body }, keys)).toBe(false);
      expect(await verifies({ ...answer, body, headers: { ...answer.headers, 'content-digest': sha256Digest(body) } }, keys)).toBe(false);
      expect(await verifies({ ...answer, url: url.replace('127.0.0.1', 'localhost') }, keys)).toBe(false);
      expect(await verifies({ ...answer, status: 203 }, keys)).toBe(false);
    }
  }, 60_000);
});

describe('the transparency log', () => {
  const vkey = async () => {
    const llms = await (await fetch(site + SITE_PATHS.LLMS_TXT)).text();
    return /note verifier key \(C2SP signed-note\) is `([^`]+)`/.exec(llms)![1]!;
  };
  const tlogcheck = async (...args: string[]) => {
    const { stdout } = await run('go', ['run', './tests/go/tlogcheck', '-log', site + SITE_PATHS.LOG.replace(/\/$/, ''), '-vkey', await vkey(), ...args], {
      cwd: ROOT_DIR,
      env: { ...process.env, GO111MODULE: 'off', GOPATH: '/usr/share/gocode', GOCACHE: path.join(tmpdir(), 'public-stats-go-cache') },
    });
    return JSON.parse(stdout) as { origin: string; size: number; entries: string[]; extends?: number; receipts: { index: number; entry: string; size: number }[] };
  };
  const checkpoint = async () => (await fetch(site + SITE_PATHS.LOG_CHECKPOINT)).text();
  const history = async () => (await (await fetch(site + SITE_PATHS.SITE_HISTORY)).json()) as { nights: { date: string; usd: number; log_index: number | null }[] };
  const verify = (...args: string[]) => verifyCommand('--site', site, ...args);
  const state = () => path.join(dir, 'verify-state.json');
  const receipt = (date: string) => path.join(dir, `${date}.tlog-proof`);
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

  it('a correction appends an entry, and the old checkpoint is provably a prefix of the new one', async () => {
    const date = addDays(today, -50);
    await importEvents([{ type: 'payout', date, usd: 123.45 }]);
    let grown = before;
    for (let i = 0; i < 40 && grown === before; i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      grown = await checkpoint();
    }
    const log = await tlogcheck('-old', path.join(dir, 'before.checkpoint'));
    expect(log.size).toBe(NIGHTS - 1);
    expect(log.extends).toBe(NIGHTS - 2);
    const corrected = JSON.parse(log.entries.at(-1)!);
    expect(corrected).toMatchObject({ date, usd: 123.45, supersedes: NIGHTS - 50 });
    // The old entry is still there, unchanged.
    expect(JSON.parse(log.entries[NIGHTS - 50]!)).toMatchObject({ date, supersedes: null });
    let night = (await history()).nights.find((n) => n.date === date)!;
    for (let i = 0; i < 40 && night.log_index !== NIGHTS - 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      night = (await history()).nights.find((n) => n.date === date)!;
    }
    expect(night).toMatchObject({ usd: 123.45, log_index: NIGHTS - 2 });

    const result = await verify('--state', state());
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`the log extends checkpoint ${NIGHTS - 2}`);
    // The receipt saved before the correction still verifies, and says the night was corrected since.
    const receipted = await verify('--receipt', receipt(date), '--state', state());
    expect(receipted.code, receipted.stderr).toBe(0);
    expect(receipted.stdout).toContain(`night ${date} was corrected since: entry ${NIGHTS - 2} (123.45 USD) is now the latest for its date`);
  }, 120_000);

  it('npm run verify fails with the right sentence against each tampering', async () => {
    try {
      tamper = 'entry';
      let result = await verify();
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toBe(`verify: the log's entries do not hash to the root of checkpoint ${NIGHTS - 1}`);

      // An older checkpoint that is a prefix of the one seen: an older view, not a rewrite.
      tamper = 'rollback';
      rolledBack = before;
      result = await verify('--state', state());
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toMatch(new RegExp(`^verify: checkpoint ${NIGHTS - 2} is older than checkpoint ${NIGHTS - 1} seen on \\d{4}-\\d{2}-\\d{2}T[\\d:]+Z, though a prefix of it: an older view of the log \\(a lagging node, or a replayed answer\\)$`));

      tamper = 'night';
      result = await verify();
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toBe(`verify: night ${addDays(today, -NIGHTS + 5)} in /api/history is not in the log`);

      tamper = 'stats';
      result = await verify();
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toMatch(/^verify: the signature of \/api\/stats does not verify/);

      // Re-signed with our HTTP key, a night left out and an inflated total each fail on their own.
      tamper = 'drop';
      result = await verify();
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toBe(`verify: night ${addDays(today, -NIGHTS + 20)} is in the log (entry 20) but missing from /api/history`);

      tamper = 'inflate';
      result = await verify();
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toMatch(new RegExp(`^verify: /api/stats says the all-time total is [\\d.]+ USD, but the log's ${NIGHTS - 2} nights and the 2 nights not yet final in /api/history add up to [\\d.]+ USD$`));

      // An answer signed by a key the directory lists as retired verifies only if it was made before.
      tamper = 'retired';
      retiredAt = 1;
      result = await verify();
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toMatch(/^verify: the signature of \/api\/history does not verify: it was created at \S+, after its key \S+ was retired at 1970-01-01T00:00:01Z$/);
      retiredAt = Math.floor(Date.now() / 1000) + 3600;
      result = await verify();
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain(`, retired ${new Date(retiredAt * 1000).toISOString().replace('.000Z', 'Z')}, created `);

      // With the policy, the site's own account of when a night was witnessed is checked too.
      tamper = 'claim';
      result = await verify('--policy', policy);
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toMatch(new RegExp(`^verify: night ${addDays(today, -NIGHTS)} in /api/history claims it was witnessed on time, but the quorum first cosigned it at \\S+, after ${addDays(today, -NIGHTS + 4)}T00:00:00Z$`));
    } finally {
      tamper = 'none';
    }
    // The state file still holds the last good checkpoint: the failed runs saved nothing.
    expect((await verify('--state', state())).code).toBe(0);
  }, 120_000);

  it('fails on a checkpoint signed by another log key than the pinned one, and moves to a new key only through a checkpoint signed by both', async () => {
    const pinned = await vkey();
    const pair = (await crypto.subtle.generateKey('Ed25519', true, ['sign', 'verify'])) as CryptoKeyPair;
    const publicKey = new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey));
    const real = await checkpoint();
    const origin = real.slice(0, real.indexOf('\n'));
    const body = real.slice(0, real.indexOf('\n\n') + 1);
    const alone = await signNote(body, origin, pair.privateKey, publicKey);
    otherKey = { vkey: await noteVerifierKey(origin, publicKey), alone, beside: real + alone.slice(body.length + 1) };
    const replaced = (key: string) => `verify: the checkpoint is signed by another log key than the pinned one (${key}): a new key is trusted only from a checkpoint the pinned key signs too`;
    const moving = path.join(dir, 'moving-state.json');
    copyFileSync(state(), moving);
    try {
      tamper = 'key';
      for (const pin of [['--state', state()], ['--vkey', pinned]]) {
        const result = await verify(...pin);
        expect(result.code).toBe(1);
        expect(result.stderr.trim()).toBe(replaced(pinned));
      }
      tamper = 'overlap';
      const result = await verify('--state', moving);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain(`the log key moved from ${pinned} to ${otherKey.vkey}: checkpoint ${NIGHTS - 1} is signed by both`);
      expect(JSON.parse(readFileSync(moving, 'utf8'))).toMatchObject({ vkey: otherKey.vkey, previous_vkeys: [pinned] });
    } finally {
      tamper = 'none';
    }
    // Once moved, the checkpoint our key alone signs is another key's.
    expect((await verify('--state', moving)).stderr.trim()).toBe(replaced(otherKey.vkey));
  }, 120_000);

  it('a whole other history under our log key passes a verifier that trusts the site, fails with the policy, and against the state file is named a rewrite first and leaves evidence, with or without the policy', async () => {
    // The log as it is now, from PostgREST itself: the API host's cached answer may be seconds old.
    const landing = (await (await fetch(`http://${stack.cfg.bindHost}:${stack.cfg.postgrestPort}/rpc/landing_log`)).json()) as { entries: string[] };
    const date = JSON.parse(landing.entries[FORK_INDEX]!).date as string;
    const entries = landing.entries.map((entry, i) => {
      const night = JSON.parse(entry);
      if (i === FORK_INDEX) night.usd = Math.round((night.usd + FORK_RAISE) * 100) / 100;
      return new TextEncoder().encode(JSON.stringify(night));
    });
    const tree = await buildTree(entries);
    const root = await tree.root();
    const real = await checkpoint();
    const origin = real.slice(0, real.indexOf('\n'));
    const key = await importNoteSigningKey(stack.cfg.LOG_SIGNING_KEY, 'LOG_SIGNING_KEY');
    // The witnesses' cosignatures of the real checkpoint go along, as a forger would try.
    const cosignatures = real.slice(real.indexOf('\n\n') + 2).split('\n').slice(1).join('\n');
    fork = { tree, entries, root: base64(root), date, checkpoint: await signNote(checkpointBody(origin, tree.size, root), origin, key.privateKey, key.publicKey) + cosignatures };
    // The policy's witnesses never cosigned it: their lines do not verify on its body. And the archive
    // still holds our checkpoints, signed by the same key: two histories.
    const cosignatureFails = "verify: the checkpoint's cosignature by the witness witness.test/alpha does not verify";
    const twoHistories = new RegExp(`^verify: archived checkpoint \\d+ is signed by the log's key but is not a state of the log the checkpoint of ${NIGHTS - 1} entries names: the log signed two histories$`);
    const rewrite = new RegExp(`^verify: the log was rewritten: checkpoint ${NIGHTS - 1} is not consistent with checkpoint ${NIGHTS - 1} seen on \\S+ \\(the evidence, both signed checkpoints and the failed proof, is in (\\S+)\\)$`);
    const evidenceFiles = () => readdirSync(dir).filter((f) => f.startsWith('log-rewrite-evidence-')).sort();
    /** The run names the rewrite on its first line, and the evidence file it names is new and holds both checkpoints. */
    const namesRewrite = (result: { code: number; stderr: string }, before: string[]) => {
      expect(result.code).toBe(1);
      const lines = result.stderr.trim().split('\n');
      const sentence = rewrite.exec(lines[0]!);
      expect(sentence, result.stderr).not.toBeNull();
      expect(evidenceFiles()).toEqual([...before, path.basename(sentence![1]!)].sort());
      const evidence = JSON.parse(readFileSync(sentence![1]!, 'utf8'));
      expect(evidence.saved.checkpoint).toBe(real);
      expect(evidence.served.checkpoint).toBe(fork.checkpoint);
      expect(evidence.consistency_proof).toMatchObject({ old_size: NIGHTS - 1, new_size: NIGHTS - 1, hashes: [], verifies: false });
      return lines.slice(1);
    };
    try {
      tamper = 'fork';
      const trusting = await verify();
      expect(trusting.code, trusting.stderr).toBe(0);
      const witnessed = await verify('--policy', policy);
      expect(witnessed.code).toBe(1);
      const [first, second, ...more] = witnessed.stderr.trim().split('\n');
      expect(first).toBe(cosignatureFails);
      expect(second).toMatch(twoHistories);
      expect(more).toEqual([]);
      // Against the state file: the rewrite alone, then with the policy the rewrite first and each other failure on its own line.
      let before = evidenceFiles();
      expect(namesRewrite(await verify('--state', state()), before)).toEqual([]);
      before = evidenceFiles();
      const others = namesRewrite(await verify('--policy', policy, '--state', state()), before);
      expect(others[0]).toBe(cosignatureFails);
      expect(others[1]).toMatch(twoHistories);
      expect(others).toHaveLength(2);
    } finally {
      tamper = 'none';
    }
    expect((await verify('--state', state())).code).toBe(0);
  }, 120_000);
});
