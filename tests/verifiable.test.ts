// A track record anyone can verify, checked from outside with code we did not write: every data
// answer of both hosts, in every encoding, verifies with two RFC 9421 libraries (and fails once a
// body byte changes); the log's checkpoint, tiles, receipts and a consistency proof across a
// correction verify with Go's golang.org/x/mod/sumdb/{note,tlog}; and `npm run verify` passes on the
// live stack and fails with the right sentence behind a proxy that tampers with what it serves.
// The stack's public site URL is that proxy, so what it signs is what a client of the proxy sees.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, todayUtc } from '../contract/dates.ts';
import { ROOT_DIR } from '../scripts/lib/config.ts';
import { freePort } from '../scripts/lib/processes.ts';
import { API_PATHS, SITE_PATHS } from '../contract/paths.ts';
import { startTestStack, type TestStack } from './support/stack.ts';
import { rawGet, sha256Digest, verifies, verifyWithHttpMessageSig, type DirectoryKey, type RawAnswer } from './support/signatures.ts';
import { cliEnv, runCli } from './support/writer.ts';

const run = promisify(execFile);
const NIGHTS = 300;
const today = todayUtc();
let stack: TestStack;
let dir: string;
let proxy: http.Server;
let site: string;
/** What the proxy does to the answers it relays. */
let tamper: 'none' | 'entry' | 'rollback' | 'night' | 'stats' = 'none';
let rolledBack = '';

function relay(sitePort: number) {
  return http.createServer((req, res) => {
    const upstream = http.request({ host: '127.0.0.1', port: sitePort, path: req.url, method: req.method, headers: req.headers }, (reply) => {
      const chunks: Buffer[] = [];
      reply.on('data', (c: Buffer) => chunks.push(c));
      reply.on('end', () => {
        let body = Buffer.concat(chunks);
        const url = req.url ?? '';
        if (tamper === 'entry' && url.startsWith('/log/tile/entries/000')) {
          // One digit of the first entry's payout, its length kept.
          body = Buffer.from(body.toString('latin1').replace(/"usd":(\d)/, (_, d: string) => `"usd":${(Number(d) + 1) % 10}`), 'latin1');
        }
        if (tamper === 'rollback' && url === '/log/checkpoint') body = Buffer.from(rolledBack);
        if (tamper === 'night' && url === '/api/history') {
          const record = JSON.parse(body.toString('utf8'));
          record.nights[5].usd += 1;
          body = Buffer.from(`${JSON.stringify(record)}\n`);
        }
        if (tamper === 'stats' && url === '/api/stats') body = Buffer.from(body.toString('utf8').replace('"total_usd":', '"total_usd":9'));
        const { 'transfer-encoding': _chunked, ...kept } = reply.headers;
        const headers = { ...kept, 'content-length': String(body.length) };
        res.writeHead(reply.statusCode ?? 502, headers).end(body);
      });
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
}

async function importEvents(events: object[]) {
  const result = await runCli(['import', '-'], cliEnv(stack), events.map((e) => JSON.stringify(e)).join('\n') + '\n');
  expect(result.code, result.stderr).toBe(0);
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'verifiable-'));
  const [proxyPort, sitePort] = [await freePort(), await freePort()];
  site = `http://127.0.0.1:${proxyPort}`;
  proxy = relay(sitePort);
  await new Promise<void>((resolve) => proxy.listen(proxyPort, '127.0.0.1', resolve));
  stack = await startTestStack({ env: { SITE_URL: site, SITE_PORT: String(sitePort) } });
  const events: object[] = [];
  for (let i = NIGHTS; i >= 1; i--) {
    const date = addDays(today, -i);
    events.push({ type: 'payout', date, usd: 20 + (i % 37) + 0.25 });
    if (i % 3) events.push({ type: 'trading_cost', date, usd: (i % 11) - 4 });
    if (i % 2) events.push({ type: 'capital', at: `${date}T18:00:00Z`, cash_usd: 5000 + i, inventory_usd: 250.5, positions: 4 });
  }
  await importEvents(events);
}, 180_000);

afterAll(async () => {
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
  const verify = (...args: string[]) => run(process.execPath, [path.join(ROOT_DIR, 'scripts', 'verify.ts'), '--site', site, ...args]).then(
    ({ stdout }) => ({ code: 0, stdout, stderr: '' }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );
  const state = () => path.join(dir, 'verify-state.json');
  let before: string;

  it('holds every final night, and its checkpoint, tiles and receipts verify with Go\'s sumdb/note and sumdb/tlog', async () => {
    before = await checkpoint();
    writeFileSync(path.join(dir, 'before.checkpoint'), before);
    const receipt = path.join(dir, 'receipt');
    writeFileSync(receipt, await (await fetch(`${site}${SITE_PATHS.LOG_PROOF}${addDays(today, -200)}`)).text());
    const log = await tlogcheck('-receipt', receipt);
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

  it('npm run verify passes on the live stack and saves the checkpoint it saw', async () => {
    const result = await verify('--state', state());
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`checkpoint of ${NIGHTS - 2} entries`);
    expect(result.stdout).toContain(`saved checkpoint ${NIGHTS - 2}`);
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
  }, 120_000);

  it('npm run verify fails with the right sentence against each tampering', async () => {
    try {
      tamper = 'entry';
      let result = await verify();
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toBe(`verify: the log's entries do not hash to the root of checkpoint ${NIGHTS - 1}`);

      tamper = 'rollback';
      rolledBack = before;
      result = await verify('--state', state());
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toMatch(new RegExp(`^verify: the log was rewritten: checkpoint ${NIGHTS - 2} does not extend checkpoint ${NIGHTS - 1} seen on \\d{4}-\\d{2}-\\d{2}T`));

      tamper = 'night';
      result = await verify();
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toBe(`verify: night ${addDays(today, -NIGHTS + 5)} in /api/history is not in the log`);

      tamper = 'stats';
      result = await verify();
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toMatch(/^verify: the signature of \/api\/stats does not verify/);
    } finally {
      tamper = 'none';
    }
    // The state file still holds the last good checkpoint: the failed runs saved nothing.
    expect((await verify('--state', state())).code).toBe(0);
  }, 120_000);
});
