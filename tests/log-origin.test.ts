// The log's origin names it for life: the first real checkpoint fixes it, and a site that moves (here
// to another port, as it would to an https domain) keeps it. On a private stack with a witness under a
// policy: before real data `writer check` says the name will be fixed and how to choose it; real
// nights signed on one SITE_URL; the stack restarted on another with the same policy comes back, signs
// on under the first origin, and its checkpoint, log page and documents name it, as does a node that
// reads the database only as PostgREST does; `npm run verify` with the state file of before the move
// still verifies; `npm start` itself comes back with its policy; and a LOG_ORIGIN naming another
// origin is refused at start, naming both, as is a checkpoint naming another origin in the database.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, todayUtc } from '../contract/dates.ts';
import { noteVerifierKey } from '../contract/log-key.ts';
import { logOrigin, SITE_PATHS } from '../contract/paths.ts';
import type { LogRecord } from '../contract/records.ts';
import { ROOT_DIR } from '../config/checkout.ts';
import { freePort } from '../stack/processes.ts';
import { query, withClient } from './support/db.ts';
import { fakeAccount } from './support/fake-polymarket-account.ts';
import { FakePolymarket, writerEnv } from './support/fake-polymarket.ts';
import { startTestNode, startTestStack, type TestStack } from './support/stack.ts';
import { startWitness, type Running } from './support/witness.ts';
import { cliEnv, runCli, until } from './support/writer.ts';

const today = todayUtc();
const OTHER = 'stats.example.org/log';
let stack: TestStack;
let dir: string;
let fake: FakePolymarket;
let witness: Running;
let policy: string;
/** The origin the site's first URL makes, and the log's verifier key under it. */
let origin: string;
let vkey: string;
const state = () => path.join(dir, 'verify-state.json');

const logRecord = async () => (await query<{ l: LogRecord }>(stack.db.adminUrl, 'select stats.log_record() as l'))[0]!.l;
const storedOrigin = async () => (await query<{ o: string | null }>(stack.db.adminUrl, 'select stats.log_origin() as o'))[0]!.o;
const text = async (url: string) => {
  const answer = await fetch(url);
  expect(answer.status, url).toBe(200);
  return answer.text();
};
/** `npm run writer -- check` against the fake account: its JSON report. */
const check = async (extra: Record<string, string> = {}) => {
  const run = await runCli(['check'], cliEnv(stack, { ...writerEnv(fake), ...extra }));
  const line = run.stdout.split('\n').find((l) => l.startsWith('{"nights"'));
  expect(line, run.stdout + run.stderr).toBeDefined();
  return JSON.parse(line!) as { flags: string[]; notes: string[] };
};
const importNights = async (env: Record<string, string | undefined>, events: object[]) => {
  const run = await runCli(['import', '-'], env, events.map((e) => JSON.stringify(e)).join('\n') + '\n');
  expect(run.code, run.stdout + run.stderr).toBe(0);
  return run;
};
/** `npm run verify` (verify/cli.ts, what the npm script runs) with these arguments. */
const npmVerify = (...args: string[]) => promisify(execFile)(process.execPath, [path.join(ROOT_DIR, 'verify', 'cli.ts'), ...args], { cwd: ROOT_DIR }).then(
  ({ stdout }) => ({ code: 0, stdout, stderr: '' }),
  (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
);

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'log-origin-'));
  [stack, fake] = await Promise.all([startTestStack(), new FakePolymarket(fakeAccount()).start()]);
  origin = logOrigin(stack.cfg, false);
  expect(origin).toBe(`${new URL(stack.cfg.siteUrl).host}/log`);
  vkey = await noteVerifierKey(origin, Buffer.from(stack.cfg.LOG_PUBLIC_KEY, 'base64url'));
  // A witness that trusts the log under its first origin, as a follower's would, and the owner's policy naming both.
  const trust = path.join(dir, 'trust.policy');
  writeFileSync(trust, `log ${vkey}\nquorum none\n`);
  witness = await startWitness({ key: path.join(dir, 'alpha.key'), name: 'witness.test/alpha', policy: trust, state: path.join(dir, 'alpha-state') });
  policy = path.join(dir, 'log.policy');
  writeFileSync(policy, `log ${vkey}\nwitness alpha ${witness.vkey} ${witness.url}\nquorum alpha\n`);
}, 120_000);

afterAll(async () => {
  await witness?.stop();
  await fake?.stop();
  await stack?.destroy();
  rmSync(dir, { recursive: true, force: true });
});

describe('the log\'s origin', () => {
  it('before real data: `writer check` says the first checkpoint will fix the name made from a loopback SITE_URL, and how to choose it', async () => {
    expect(await storedOrigin()).toBeNull();
    const report = await check();
    const note = report.notes.find((n) => n.startsWith('The transparency log\'s name is not fixed yet'));
    expect(note, report.notes.join('\n')).toBe(`The transparency log's name is not fixed yet: its first real checkpoint will fix it as ${origin}, made from SITE_URL ${stack.cfg.siteUrl}, ` +
      'and the log keeps it for good, also after the site moves. To name the log after the address it will have, set LOG_ORIGIN in .env (such as stats.example.org/log) before the first real night is written.');
    // A name chosen says nothing more.
    expect((await check({ LOG_ORIGIN: OTHER })).notes.join('\n')).not.toContain('not fixed yet');
  }, 60_000);

  it('is fixed by the first real checkpoint, which the witness cosigns; then `check` no longer warns', async () => {
    const events = Array.from({ length: 10 }, (_, i) => ({ type: 'payout', date: addDays(today, -10 + i), usd: 20 + i + 0.25 }));
    await importNights(cliEnv(stack, { LOG_POLICY: policy }), events);
    expect(await storedOrigin()).toBe(origin);
    const record = await logRecord();
    expect(record.checkpoints.at(-1)!.note.split('\n').slice(0, 2)).toEqual([origin, '8']);
    expect(record.cosignatures.map((line) => line.split(' ')[1])).toEqual(['witness.test/alpha']);
    const first = await npmVerify('--site', stack.cfg.siteUrl, '--state', state(), '--policy', policy);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(JSON.parse(readFileSync(state(), 'utf8'))).toMatchObject({ vkey, origin, size: 8 });
    expect((await check()).notes.join('\n')).not.toContain('not fixed yet');
  }, 120_000);

  it('is kept when SITE_URL moves: the stack comes back, and every part names the first origin', async () => {
    const before = stack.cfg.siteUrl;
    stack = await stack.restart({ SITE_PORT: String(await freePort()) });
    expect(stack.cfg.siteUrl).not.toBe(before);
    expect(stack.storedLogOrigin).toBe(origin);
    expect(logOrigin(stack.cfg, false)).toBe(origin);
    const moved = `${new URL(stack.cfg.siteUrl).host}/log`;
    const site = stack.cfg.siteUrl;
    // The served checkpoint and the log's page.
    expect((await text(site + SITE_PATHS.LOG_CHECKPOINT)).split('\n')[0]).toBe(origin);
    const page = await text(site + SITE_PATHS.LOG);
    expect(page).toContain(`The nights are in the real log (origin ${origin})`);
    expect(page).toContain(`<code>${vkey}</code>`);
    // The documents that name the log and its verifier key, and the agent card.
    for (const document of [SITE_PATHS.LLMS_TXT, SITE_PATHS.AUTH_MD, SITE_PATHS.OPENAPI, SITE_PATHS.AGENT_CARD]) {
      const body = await text(site + document);
      expect(body, document).toContain(`origin ${origin}`);
      expect(body, document).not.toContain(`origin ${moved}`);
    }
    for (const document of [SITE_PATHS.LLMS_TXT, SITE_PATHS.AUTH_MD, SITE_PATHS.OPENAPI]) expect(await text(site + document), document).toContain(vkey);
  }, 120_000);

  it('signs on under the first origin with the same policy, read from the database by a writer given only the new SITE_URL', async () => {
    // As a writer started on its own (docker compose's) would be: SITE_URL moved, no LOG_ORIGIN.
    const env = cliEnv(stack, { LOG_POLICY: policy, LOG_ORIGIN: '' });
    const run = await importNights(env, [{ type: 'payout', date: addDays(today, -5), usd: 99.99 }]);
    expect(run.lines.find((l) => l.level === 'warn' && String(l.msg).startsWith('the transparency log keeps its origin'))?.msg)
      .toContain(`keeps its origin ${origin}, fixed by its first checkpoint, though SITE_URL now makes ${new URL(stack.cfg.siteUrl).host}/log`);
    const record = await logRecord();
    expect(record.checkpoints.at(-1)!.note.split('\n').slice(0, 2)).toEqual([origin, '9']);
    expect(record.checkpoints.every((c) => c.note.startsWith(`${origin}\n`))).toBe(true);
    expect(record.cosignatures.map((line) => line.split(' ')[1])).toEqual(['witness.test/alpha']);
    await until('the new checkpoint served', async () => (await text(stack.cfg.siteUrl + SITE_PATHS.LOG_CHECKPOINT)).startsWith(`${origin}\n9\n`));
    // `sign` names the log as it stands.
    const sign = await runCli(['sign'], env);
    expect(sign.lines.find((l) => l.msg === 'the transparency log is signed')).toMatchObject({ origin, vkey, size: 9 });
  }, 120_000);

  it('`npm run verify` with the state file of before the move still verifies, on the moved site', async () => {
    await until('the corrected night served', async () => {
      const { nights } = await (await fetch(stack.cfg.siteUrl + SITE_PATHS.SITE_HISTORY)).json() as { nights: { date: string; usd: number }[] };
      return nights.find((n) => n.date === addDays(today, -5))?.usd === 99.99;
    }, 90_000);
    const saved = await npmVerify('--site', stack.cfg.siteUrl, '--state', state());
    expect(saved.code, saved.stdout + saved.stderr).toBe(0);
    expect(saved.stdout).toContain(`log ${origin}: checkpoint of 9 entries signed by the log key ${vkey} (from the state file ${state()})`);
    const witnessed = await npmVerify('--site', stack.cfg.siteUrl, '--state', state(), '--policy', policy);
    expect(witnessed.code, witnessed.stdout + witnessed.stderr).toBe(0);
    expect(witnessed.stdout).toContain(`(from the policy ${policy})`);
    expect(JSON.parse(readFileSync(state(), 'utf8'))).toMatchObject({ vkey, origin, size: 9 });
  }, 180_000);

  it('is read from the database by a node too, which then names it though no LOG_ORIGIN is given', async () => {
    const node = await startTestNode(stack, { env: { LOG_ORIGIN: '' } });
    try {
      expect(node.cfg.logOrigin).toBe(origin);
      const local = `http://${node.cfg.bindHost}:${node.cfg.sitePort}`;
      expect(await text(local + SITE_PATHS.LLMS_TXT)).toContain(`origin \`${origin}\``);
      expect(await text(local + SITE_PATHS.LOG)).toContain(`The nights are in the real log (origin ${origin})`);
    } finally {
      await node.destroy();
    }
  }, 120_000);

  it('refuses, naming both, a LOG_ORIGIN or a checkpoint that names another origin', async () => {
    const sentence = `LOG_ORIGIN is "${OTHER}", but the transparency log's origin is "${origin}", fixed by its first checkpoint: an origin names a log for life, so set LOG_ORIGIN=${origin} or remove it, and start again.`;
    const writer = await runCli(['import', '-'], cliEnv(stack, { LOG_ORIGIN: OTHER }), `${JSON.stringify({ type: 'payout', date: addDays(today, -4), usd: 1 })}\n`);
    expect(writer.code).toBe(1);
    expect(writer.lines.map((l) => l.msg)).toEqual([sentence]);
    expect((await check({ LOG_ORIGIN: OTHER })).flags).toContain(sentence);
    // The database refuses a real checkpoint under another origin, whoever signs it.
    await withClient(stack.db.adminUrl, async (c) => {
      await c.query('begin');
      try {
        const { rows } = await c.query<{ size: string }>('select max(size) as size from stats.log_checkpoint');
        const size = Number(rows[0]!.size);
        await c.query(`insert into stats.log_entry (idx, date, entry, is_demo) values ($1, '2020-01-01', '{}', false)`, [size]);
        await expect(c.query(`insert into stats.log_checkpoint (size, root, note, vkey, is_demo) values ($1, 'r', $2, 'v', false)`, [size + 1, `${OTHER}\n${size + 1}\nr\n`]))
          .rejects.toThrow(`the log's origin is ${origin}, fixed by its first checkpoint: a checkpoint naming ${OTHER} is refused`);
      } finally {
        await c.query('rollback');
      }
    });
  }, 60_000);
});

describe('npm start on a moved site', () => {
  let child: ChildProcess | undefined;
  afterAll(() => { if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGTERM'); });

  it('comes back with its witness policy, says the origin is fixed, and signs on under it', async () => {
    // The same data directory and secrets as the test stack, on yet another port, with the writer's
    // Polymarket source (the fake) and the same policy.
    await stack.stop();
    const { cfg } = stack;
    const secrets = ['JWT_SECRET', 'ANON_KEY', 'AUTHENTICATOR_PASSWORD', 'WRITER_DB_PASSWORD', 'POSTGRES_PASSWORD', 'REPLICATION_PASSWORD',
      'HTTP_SIG_PRIVATE_KEY', 'HTTP_SIG_PUBLIC_KEY', 'HTTP_SIG_RETIRED_PUBLIC_KEYS', 'LOG_SIGNING_KEY', 'LOG_PUBLIC_KEY'] as const;
    const envFile = path.join(dir, 'env');
    writeFileSync(envFile, `${secrets.map((name) => `${name}=${cfg[name]}`).join('\n')}\n`, { mode: 0o600 });
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? dir, ENV_FILE: envFile, DATA_DIR: cfg.dataDir, NGINX_WORKERS: '1', EDGE_WORKERS: '1',
      LOG_POLICY: policy, ...writerEnv(fake), POSTGRES_PORT: String(cfg.postgresPort),
    };
    for (const name of ['API_PORT', 'SITE_PORT', 'EDGE_PORT', 'POSTGREST_PORT', 'POSTGREST_ADMIN_PORT']) env[name] = String(await freePort());
    const site = `http://127.0.0.1:${env.SITE_PORT}`;
    child = spawn(process.execPath, [path.join(ROOT_DIR, 'stack', 'start.ts')], { cwd: ROOT_DIR, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (c: Buffer) => { out += c.toString(); });
    child.stderr!.on('data', (c: Buffer) => { out += c.toString(); });
    const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
    await until('npm start running and its writer through a cycle', async () => /\[writer\].*cycle done/.test(out) || child!.exitCode !== null, 120_000);
    expect(out, out).toContain('Public Stats Service is running');
    const said = out.replace(/\s+/g, ' ');
    expect(said).toContain(`log origin ${origin}, fixed by its first checkpoint, verifier key ${vkey}`);
    expect(said).toContain(`witnessed under the policy ${policy}`);
    expect(said).not.toContain('not fixed yet');
    expect(out).not.toMatch(/Internal error|has no line/);
    // The policy is in force and published; the checkpoint served names the first origin.
    expect(await text(site + SITE_PATHS.LOG_POLICY)).toBe(readFileSync(policy, 'utf8'));
    expect((await text(site + SITE_PATHS.LOG_CHECKPOINT)).split('\n')[0]).toBe(origin);
    child.kill('SIGTERM');
    expect(await exited, out).toBe(0);
  }, 240_000);

  it('is refused at start by a LOG_ORIGIN naming another origin, with both named', async () => {
    await expect(stack.restart({ LOG_ORIGIN: OTHER })).rejects.toThrow(
      new RegExp(`^LOG_ORIGIN is "${OTHER.replace(/\./g, '\\.')}", but the transparency log's origin is "${origin.replace(/\./g, '\\.')}", fixed by its first checkpoint`));
  }, 120_000);
});
