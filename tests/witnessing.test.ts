// The log witnessed end to end, on a private stack: three witnesses (two of ours, `npm run witness`'s
// program, and one written in Go from the C2SP texts), a policy with a quorum of two, and the writer
// that asks them. The served checkpoint's cosignatures are checked by Go's note.Open; each night says
// when the quorum first cosigned it, on time or late; a witness that is down never blocks a write and
// one restarted from its state goes on; a fork signed with every key of ours is refused by the
// witnesses; and a database that lost the log's tail is stopped by what the witnesses saw.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, todayUtc } from '../contract/dates.ts';
import { base64, noteVerifierKey } from '../contract/log-key.ts';
import { logOrigin, SITE_PATHS } from '../contract/paths.ts';
import type { HealthRecord, HistoryRecord, LogRecord } from '../contract/records.ts';
import { buildTree } from '../contract/tlog/merkle.ts';
import { checkpointBody, importNoteSigningKey, signNote } from '../contract/tlog/note.ts';
import { freePort } from '../stack/processes.ts';
import { query } from './support/db.ts';
import { startTestStack, type TestStack } from './support/stack.ts';
import { buildGo, post, run, startGoWitness, startWitness, type Running, type WitnessArgs } from './support/witness.ts';
import { cliEnv, runCli } from './support/writer.ts';

let stack: TestStack;
let dir: string;
let go: { witness: string; client: string };
let logVkey: string;
let origin: string;
const witnesses: Record<'alpha' | 'beta' | 'gamma', Running> = {} as never;
let betaArgs: WitnessArgs;
let env: Record<string, string | undefined>;
const today = todayUtc();

const importLines = async (events: object[]) => {
  const result = await runCli(['import', '-'], env, events.map((e) => JSON.stringify(e)).join('\n') + '\n');
  expect(result.code, result.stdout + result.stderr).toBe(0);
  return result;
};
const logRecord = async () => (await query<{ l: LogRecord }>(stack.db.adminUrl, 'select stats.log_record() as l'))[0]!.l;
// As of now, from the database: the site's caches keep an answer for a few seconds.
const history = async () => (await query<{ h: HistoryRecord }>(stack.db.adminUrl, 'select stats.history_at(now()) as h'))[0]!.h;
const health = async () => (await query<{ h: HealthRecord & { log: NonNullable<HealthRecord['log']> } }>(stack.db.adminUrl, 'select stats.health_at(now()) as h'))[0]!.h;
/** The checkpoint as /log/checkpoint serves it, made from the log record as of now. */
const servedCheckpoint = (record: LogRecord) => record.checkpoints.at(-1)!.note + record.cosignatures.map((line) => `${line}\n`).join('');
/** Opens the served checkpoint with Go's note.Open, trusting the log's key and the three witnesses'. */
const openWithGo = async (text: string) => {
  const file = path.join(dir, `checkpoint-${Date.now()}`);
  writeFileSync(file, text);
  const trusted = Object.values(witnesses).flatMap((w) => ['-witness', w.vkey]);
  const { stdout } = await run(go.client, ['open', '-file', file, '-log', logVkey, ...trusted]);
  return JSON.parse(stdout) as { origin: string; size: string; signers: string[]; timestamps: Record<string, number> };
};
const nameOf = (vkey: string) => vkey.split('+')[0]!;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'witnessing-'));
  [stack, go] = await Promise.all([startTestStack(), buildGo(path.join(dir, 'go'))]);
  origin = logOrigin(stack.cfg, false);
  logVkey = await noteVerifierKey(origin, Buffer.from(stack.cfg.LOG_PUBLIC_KEY, 'base64url'));
  // The witnesses trust the log's key, as its followers would.
  const trust = path.join(dir, 'trust.policy');
  writeFileSync(trust, `log ${logVkey}\nquorum none\n`);
  const ours = (name: string, listen?: string): WitnessArgs => ({ key: path.join(dir, `${name}.key`), name: `witness.test/${name}`, policy: trust, state: path.join(dir, `${name}-state`), listen });
  betaArgs = ours('beta', `127.0.0.1:${await freePort()}`);
  [witnesses.alpha, witnesses.beta, witnesses.gamma] = await Promise.all([
    startWitness(ours('alpha')), startWitness(betaArgs), startGoWitness(go.witness, 'witness.test/gamma', [logVkey]),
  ]);
  const policy = path.join(dir, 'log.policy');
  writeFileSync(policy, [
    `log ${logVkey}`,
    ...(['alpha', 'beta', 'gamma'] as const).map((name) => `witness ${name} ${witnesses[name].vkey} ${witnesses[name].url}`),
    'group two-of-three 2 alpha beta gamma',
    'quorum two-of-three',
    '',
  ].join('\n'));
  env = cliEnv(stack, { LOG_POLICY: policy });
  const events: object[] = [];
  for (let i = 10; i >= 1; i--) events.push({ type: 'payout', date: addDays(today, -i), usd: 20 + i + 0.25 });
  await importLines(events);
}, 180_000);

afterAll(async () => {
  await Promise.all(Object.values(witnesses).map((w) => w?.stop()));
  await stack?.destroy();
  rmSync(dir, { recursive: true, force: true });
});

describe('a log with three witnesses and a quorum of two', () => {
  it('serves its checkpoint with every witness\'s cosignature, which Go\'s note.Open verifies', async () => {
    const served = await (await fetch(stack.cfg.siteUrl + SITE_PATHS.LOG_CHECKPOINT)).text();
    const opened = await openWithGo(served);
    expect(opened.origin).toBe(origin);
    expect(Number(opened.size)).toBe(8);
    expect(opened.signers.sort()).toEqual([origin, ...Object.values(witnesses).map((w) => nameOf(w.vkey))].sort());
    // Each cosignature is timestamped by its witness, now-ish.
    for (const at of Object.values(opened.timestamps)) expect(Math.abs(at * 1000 - Date.now())).toBeLessThan(120_000);
    // The archive keeps that checkpoint under its size, and the policy is published.
    expect(await (await fetch(`${stack.cfg.siteUrl}${SITE_PATHS.LOG_CHECKPOINTS}8`)).text()).toBe(served);
    expect(await (await fetch(stack.cfg.siteUrl + SITE_PATHS.LOG_POLICY)).text()).toContain('quorum two-of-three');
  });

  it('says when the quorum first cosigned each night: on time only when that came by its date plus four days', async () => {
    const nights = (await history()).nights;
    const logged = nights.filter((n) => n.log_index !== null);
    expect(logged).toHaveLength(8);
    const record = await logRecord();
    const quorumAt = record.checkpoints[0]!.quorum_at!;
    for (const night of logged) {
      expect(night.witnessed_at).toBe(quorumAt);
      // Only the night that turned final today can have been cosigned by its deadline; the rest were imported late.
      expect(night.witnessed_on_time, night.date).toBe(night.date === addDays(today, -3));
    }
    // The last two settled nights are not final: not yet due.
    expect(nights.filter((n) => n.log_index === null).map((n) => n.witnessed_on_time)).toEqual([null, null]);
  });

  it('never presents history imported a year late as witnessed on time', async () => {
    const date = addDays(today, -400);
    await importLines([{ type: 'payout', date, usd: 12.5 }]);
    const night = (await history()).nights.find((n) => n.date === date)!;
    expect(night.log_index).not.toBeNull();
    expect(night.witnessed_at).not.toBeNull();
    expect(night.witnessed_on_time).toBe(false);
  });

  it('reports the witnessing in health', async () => {
    const { status, log } = await health();
    expect(log).toMatchObject({ witnessed: true, witnesses: 3, cosigned: 3, halted: null, size: (await logRecord()).entries.length });
    expect(log.quorum_cosigned_at).not.toBeNull();
    // Health as a whole is degraded only for want of accruals and heartbeats here, never for the log.
    expect(status).toBe('degraded');
  });

  it('is the policy a running writer records and the site publishes', async () => {
    // `run` with the demo source on real data does its session's first duties for the log, then stops.
    const run = await runCli(['run'], { ...env, WRITER_SOURCE: 'demo' });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.lines.map((l) => l.msg)).toContain('real data is present: the demo source stops here');
    expect((await logRecord()).policy).toBe(readFileSync(path.join(dir, 'log.policy'), 'utf8'));
    expect((await health()).log.witnessed).toBe(true);
  });

  it('is not blocked by a witness that is down: the other two make the quorum, and the round says who cosigned', async () => {
    await witnesses.beta.stop();
    const started = Date.now();
    await importLines([{ type: 'payout', date: addDays(today, -7), usd: 99.5 }]);
    expect(Date.now() - started).toBeLessThan(20_000);
    const record = await logRecord();
    expect(record.witnessing).toMatchObject({ size: record.entries.length, witnesses: 3, quorum_met: true });
    expect(record.witnessing!.cosigned.sort()).toEqual([nameOf(witnesses.alpha.vkey), nameOf(witnesses.gamma.vkey)].sort());
    const opened = await openWithGo(servedCheckpoint(record));
    expect(Number(opened.size)).toBe(record.entries.length);
    expect(opened.signers).not.toContain(nameOf(witnesses.beta.vkey));
    expect(record.checkpoints.at(-1)!.quorum_at).not.toBeNull();
  });

  it('goes on with a witness restarted from its state: it cosigns the next checkpoint from the size it kept', async () => {
    const keptSize = Math.max(...(await logRecord()).checkpoints.filter((c) => c.cosignatures.some((l) => l.includes(nameOf(witnesses.beta.vkey)))).map((c) => c.size));
    witnesses.beta = await startWitness(betaArgs);
    await importLines([{ type: 'payout', date: addDays(today, -6), usd: 98.5 }]);
    const record = await logRecord();
    expect(record.witnessing!.cosigned).toHaveLength(3);
    // It cosigned the new checkpoint with a consistency proof from the size it had kept across the restart.
    expect(witnesses.beta.output()).toMatch(new RegExp(` 200 POST /add-checkpoint origin="[^"]+" old=${keptSize} size=${record.entries.length}`));
    const opened = await openWithGo(servedCheckpoint(record));
    expect(opened.signers).toContain(nameOf(witnesses.beta.vkey));
  });

  it('has witnesses refuse a fork signed with every key of ours: one old night raised by 7 USD, the tree rebuilt', async () => {
    const record = await logRecord();
    const entries = record.entries.map((e) => new TextEncoder().encode(e));
    const raised = JSON.parse(record.entries[0]!) as { usd: number };
    entries[0] = new TextEncoder().encode(JSON.stringify({ ...raised, usd: raised.usd + 7 }));
    const fork = await buildTree(entries);
    const key = await importNoteSigningKey(stack.cfg.LOG_SIGNING_KEY, 'LOG_SIGNING_KEY');
    const signed = await signNote(checkpointBody(origin, fork.size, await fork.root()), origin, key.privateKey, key.publicKey);
    const older = record.checkpoints.at(-2)!.size;
    for (const witness of Object.values(witnesses)) {
      // The same size with another root, and a consistency proof from an older size that does not hold.
      expect((await post(witness.url, `old ${fork.size}\n\n${signed}`)).status).toBe(409);
      const proof = (await fork.consistencyProof(older, fork.size)).map(base64);
      const extended = await post(witness.url, [`old ${older}`, ...proof, '', signed].join('\n'));
      expect([409, 422]).toContain(extended.status);
    }
  });

  it('halts when the database lost the log\'s tail, as after a restore of an older backup, and a witness has seen more', async () => {
    const record = await logRecord();
    const last = record.checkpoints.at(-1)!;
    const kept = last.size - 2;
    // The two corrections logged last, and the nights as they stood before them.
    const lostNights = record.entries.slice(kept).map((e) => JSON.parse(e) as { date: string });
    const before = lostNights.map(({ date }) => JSON.parse(record.entries.slice(0, kept).filter((e) => (JSON.parse(e) as { date: string }).date === date).at(-1)!) as { date: string; usd: number; updated_at: string });
    // As a restore of a backup taken before them: the corrections, their entries and the checkpoints that hold them are
    // gone (superuser, triggers off), and this writer keeps no state file of its own, so only the witnesses remember.
    const lost = `(select size from stats.log_checkpoint where size > ${kept})`;
    await query(stack.db.adminUrl, `set session_replication_role = replica;
      delete from stats.log_cosignature where size in ${lost}; delete from stats.log_witnessed where size in ${lost};
      delete from stats.log_witness_round where size in ${lost}; delete from stats.log_checkpoint where size > ${kept};
      delete from stats.log_entry where idx >= ${kept};
      ${before.map((n) => `update stats.payout set usd = ${n.usd}, updated_at = '${n.updated_at}' where date = '${n.date}';`).join('\n')}`);
    // The next correction makes a tree smaller than what every witness cosigned.
    await importLines([{ type: 'payout', date: addDays(today, -5), usd: 1.5 }]);
    const halted = await logRecord();
    expect(halted.halted?.reason).toMatch(new RegExp(`^witness (alpha|beta|gamma) has cosigned a tree of ${last.size} entries, more than the ${kept + 1} this log holds: the log is behind what a witness saw$`));
    // Every witness answered at once, and each one's halt is recorded.
    const reasons = await query<{ reason: string }>(stack.db.adminUrl, 'select reason from stats.log_halt order by reason');
    expect(reasons.map((r) => r.reason.split(' ')[1])).toEqual(['alpha', 'beta', 'gamma']);
    // No witness cosigned the second history, so no reader with the policy can be shown it as witnessed.
    expect(halted.checkpoints.at(-1)!.cosignatures).toEqual([]);
    const { log } = await health();
    expect(log.halted).toBe(halted.halted!.reason);
    // Nothing more is appended while it stands.
    const size = (await query<{ n: string }>(stack.db.adminUrl, 'select count(*) as n from stats.log_entry'))[0]!.n;
    await importLines([{ type: 'payout', date: addDays(today, -8), usd: 2.5 }]);
    expect((await query<{ n: string }>(stack.db.adminUrl, 'select count(*) as n from stats.log_entry'))[0]!.n).toBe(size);
  });
});
