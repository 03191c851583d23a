// Witnesses cosign the log: after each new checkpoint, and again at least daily so the cosignatures
// served stay fresh, the writer sends every witness of the policy (LOG_POLICY, a C2SP tlog-policy,
// https://c2sp.org/tlog-policy) the checkpoint with a consistency proof from the size that witness
// last cosigned (https://c2sp.org/tlog-witness, add-checkpoint), checks the cosignature/v1 lines it
// returns (https://c2sp.org/tlog-cosignature) and stores them. A witness that is down, slow or refuses
// never blocks a write: it is asked again after a pause that doubles. A witness that has cosigned a
// larger tree than ours has seen a history we no longer hold: the log halts.
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { base64 } from '../contract/log-key.ts';
import { parseNote, verifyCosignature } from '../contract/tlog/cosignature.ts';
import { buildTree } from '../contract/tlog/merkle.ts';
import { parsePolicy, quorumMet, type Policy, type PolicyWitness } from '../contract/tlog/policy.ts';
import type { WriterDb } from './db.ts';
import type { LogSigner } from './log-signer.ts';
import type { Logger } from './log.ts';
import { heldOnTwoNodes, ONE_NODE } from './replication.ts';

/** The same checkpoint is sent to a witness again once its latest cosignature of it is this old. */
const RESUBMIT_MS = 12 * 3600_000;
/** A round of asks a witness again after a failure at the earliest this long after, doubling to the cap. */
const FIRST_RETRY_MS = 30_000;
const MAX_RETRY_MS = 3600_000;
/** How long one add-checkpoint call may take. */
const REQUEST_TIMEOUT_MS = 10_000;
/** How often the running writer looks for work. */
const ROUND_EVERY_MS = 30_000;
/** tlog-witness: a client sends at most 63 proof lines. */
const MAX_PROOF_LINES = 63;
const SIZE_TYPE = 'text/x.tlog.size';

interface Latest { size: number; note: string }

interface Pause { until: number; wait: number }

/**
 * The latest real checkpoint, once a standby that can take over holds it (replication.ts): read on a
 * session of its own, which then checks that such a standby has flushed the WAL beyond it. A witness
 * is only ever sent such a checkpoint: one on the primary alone (a failover group running on one node,
 * or a commit that waited there and became visible when that primary crashed and restarted) may be
 * lost to a failover, and a witness that had cosigned it would stop the log on the promoted node as
 * "behind what a witness saw". ONE_NODE while no standby holds it.
 */
async function acknowledgedCheckpoint(db: WriterDb): Promise<Latest | typeof ONE_NODE | undefined> {
  return db.connection().execute(async (session) => {
    const row = await session.selectFrom('stats.log_checkpoint').select(['size', 'note']).where('is_demo', '=', false).orderBy('size', 'desc').limit(1).executeTakeFirst();
    if (!row) return undefined;
    if (!(await heldOnTwoNodes(session))) return ONE_NODE;
    return { size: Number(row.size), note: row.note };
  });
}

/** The policy's text as the writer last recorded it (null: no policy), recorded again when it changed. */
export async function recordPolicy(db: WriterDb, text: string | null): Promise<void> {
  const last = await db.selectFrom('stats.log_policy').select('policy').orderBy('recorded_at', 'desc').limit(1).executeTakeFirst();
  if (last ? last.policy === text : text === null) return;
  await db.insertInto('stats.log_policy').values({ policy: text }).execute();
}

export class Witnessing {
  readonly #policy: Policy;
  readonly #text: string;
  readonly #file: string;
  readonly #signer: LogSigner;
  readonly #log: Logger;
  readonly #pauses = new Map<string, Pause>();

  private constructor(policy: Policy, text: string, file: string, signer: LogSigner, log: Logger) {
    this.#policy = policy;
    this.#text = text;
    this.#file = file;
    this.#signer = signer;
    this.#log = log;
  }

  /** Reads LOG_POLICY; throws with a sentence when it cannot be read. Whether it names this log is check()'s. */
  static async load(file: string, signer: LogSigner, log: Logger): Promise<Witnessing> {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new Error(`LOG_POLICY (${file}) cannot be read: ${(error as Error).message}`);
    }
    const policy = await parsePolicy(text).catch((error: Error) => { throw new Error(`LOG_POLICY (${file}): ${error.message}`); });
    const unreachable = [...policy.witnesses.values()].filter((w) => !w.url).map((w) => w.name);
    if (unreachable.length) log.warn('witnesses without a submission URL are never asked', { witnesses: unreachable.join(', ') });
    return new Witnessing(policy, text, file, signer, log);
  }

  /**
   * Throws with a sentence unless the policy names this log's key under the log's origin: the origin
   * its first checkpoint fixed once the signer has read it (LogSigner.settle), so a site that moved
   * keeps its policy.
   */
  async check(): Promise<void> {
    const { origin, vkey } = await this.#signer.identity();
    if (!this.#policy.logs.some((l) => l.key.name === origin && l.vkey === vkey)) {
      throw new Error(`LOG_POLICY (${this.#file}) has no line "log ${vkey}": witnesses would refuse this log's checkpoints`);
    }
  }

  /** Records the policy in force, so the site publishes it. */
  async record(db: WriterDb): Promise<void> {
    await recordPolicy(db, this.#text);
  }

  /** Asks every witness that needs it, once, then records the round. */
  async round(db: WriterDb, now = Date.now()): Promise<void> {
    const current = await acknowledgedCheckpoint(db);
    if (!current) return;
    if (current === ONE_NODE) {
      this.#log.warn(`the witnesses are not asked: the latest checkpoint is ${ONE_NODE}`);
      return;
    }
    const witnesses = [...this.#policy.witnesses.values()].filter((w) => w.url);
    const due = [];
    for (const witness of witnesses) {
      if ((this.#pauses.get(witness.name)?.until ?? 0) > now) continue;
      const newest = await db.selectFrom('stats.log_cosignature').select([sql<string>`max(size)`.as('size'), sql<Date | null>`max(received_at) filter (where size = ${String(current.size)})`.as('at')])
        .where('witness', '=', witness.key.name).executeTakeFirstOrThrow();
      const cosignedSize = Number(newest.size ?? 0);
      if (cosignedSize === current.size && newest.at && now - newest.at.getTime() < RESUBMIT_MS) continue;
      due.push({ witness, old: cosignedSize });
    }
    if (due.length > 0) {
      const entries = await db.selectFrom('stats.log_entry').select('entry').where('is_demo', '=', false).orderBy('idx').limit(current.size).execute();
      const utf8 = new TextEncoder();
      const tree = await buildTree(entries.map((e) => utf8.encode(e.entry)));
      await Promise.all(due.map(({ witness, old }) => this.#submit(db, witness, old, current, tree)));
    }
    await this.#recordRound(db, current, now);
  }

  /** Rounds every ROUND_EVERY_MS until the signal ends; a failed round is logged, never thrown. */
  async run(db: WriterDb, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.round(db).catch((error: Error) => this.#log.warn('witnessing round failed', { error: error.message }));
      // A signal that ended during the round fires no more events: the pause is not begun.
      if (signal.aborted) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ROUND_EVERY_MS);
        signal.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, { once: true });
      });
    }
  }

  async #submit(db: WriterDb, witness: PolicyWitness, oldSize: number, current: Latest, tree: Awaited<ReturnType<typeof buildTree>>, theirs?: number): Promise<void> {
    const fail = (why: string) => {
      const wait = Math.min((this.#pauses.get(witness.name)?.wait ?? FIRST_RETRY_MS / 2) * 2, MAX_RETRY_MS);
      this.#pauses.set(witness.name, { until: Date.now() + wait, wait });
      this.#log.warn('a witness did not cosign the checkpoint', { witness: witness.name, size: current.size, why, retry_seconds: wait / 1000 });
    };
    const old = oldSize > current.size ? 0 : oldSize;
    const proof = old === 0 ? [] : await tree.consistencyProof(old, current.size);
    if (proof.length > MAX_PROOF_LINES) return fail(`a proof of ${proof.length} lines is more than the protocol allows`);
    const body = [`old ${old}`, ...proof.map(base64), '', current.note].join('\n');
    let response: Response;
    try {
      response = await fetch(`${witness.url!.replace(/\/$/, '')}/add-checkpoint`, { method: 'POST', body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS), headers: { 'content-type': 'text/plain; charset=utf-8' } });
    } catch (error) {
      return fail((error as Error).message);
    }
    const text = await response.text().catch(() => '');
    if (response.status === 409 && (response.headers.get('content-type') ?? '').startsWith(SIZE_TYPE)) {
      const size = Number(text.trim());
      if (!Number.isSafeInteger(size) || size < 0) return fail(`a 409 with no size it can read ("${text.trim().slice(0, 40)}")`);
      if (size > current.size) {
        // Another writer (an import beside the running writer) may have signed and sent a larger tree since this round read the log.
        const now = await acknowledgedCheckpoint(db);
        if (now === ONE_NODE) return fail(`the witness holds a larger checkpoint (${size}) of this log than this round read, and the latest is ${ONE_NODE}`);
        if ((now?.size ?? 0) >= size) return fail(`the witness already holds a larger checkpoint (${size}) of this log than this round read; the next round sends the latest`);
        return this.#signer.halt(db, `witness ${witness.name} has cosigned a tree of ${size} entries, more than the ${current.size} this log holds: the log is behind what a witness saw`);
      }
      if (theirs === undefined && size !== old) return this.#submit(db, witness, size, current, tree, size);
      return fail(`409 at size ${size}`);
    }
    // A proof from the very size the witness holds, refused: what it cosigned there is not what this log holds.
    if (response.status === 422 && theirs !== undefined) {
      return this.#signer.halt(db, `witness ${witness.name} has cosigned a tree of ${theirs} entries that this log's entries do not extend: the log's history differs from what a witness saw`);
    }
    if (response.status !== 200) return fail(`HTTP ${response.status}${text ? `: ${text.trim().slice(0, 120)}` : ''}`);
    const { body: checkpointBody } = parseNote(current.note);
    const lines = text.split('\n').filter(Boolean);
    const rows = [];
    for (const line of lines) {
      const valid = await verifyCosignature(checkpointBody, line, { name: witness.key.name, publicKey: witness.key.publicKey });
      if (valid) rows.push({ size: String(current.size), witness: witness.key.name, cosigned_at: new Date(valid.timestamp * 1000), line });
    }
    if (rows.length === 0) return fail('no cosignature by its key in the answer');
    this.#pauses.delete(witness.name);
    await db.insertInto('stats.log_cosignature').values(rows).onConflict((oc) => oc.doNothing()).execute();
  }

  /** The round: who holds a fresh cosignature of the current checkpoint; and the first time each checkpoint met the quorum. */
  async #recordRound(db: WriterDb, current: Latest, now: number): Promise<void> {
    const nameOf = new Map([...this.#policy.witnesses.values()].map((w) => [w.key.name, w.name]));
    const fresh = await db.selectFrom('stats.log_cosignature').select('witness').distinct()
      .where('size', '=', String(current.size)).where('received_at', '>', new Date(now - 2 * RESUBMIT_MS)).execute();
    const cosigned = fresh.map((r) => r.witness).filter((w) => nameOf.has(w)).sort();
    const met = quorumMet(this.#policy, new Set(cosigned.map((w) => nameOf.get(w)!)));
    await db.insertInto('stats.log_witness_round').values({ size: String(current.size), witnesses: this.#policy.witnesses.size, cosigned, quorum_met: met }).execute();
    // Each checkpoint not yet witnessed: its witnesses by their earliest cosignature; the quorum's time is the cosignature that completed it.
    const earliest = await db.selectFrom('stats.log_cosignature').select(['size', 'witness', sql<Date>`min(cosigned_at)`.as('at')])
      .where('size', 'not in', db.selectFrom('stats.log_witnessed').select('size')).groupBy(['size', 'witness']).orderBy('size').execute();
    const bySize = new Map<string, typeof earliest>();
    for (const row of earliest.filter((r) => nameOf.has(r.witness))) bySize.set(row.size, [...(bySize.get(row.size) ?? []), row]);
    for (const [size, rows] of bySize) {
      rows.sort((a, b) => a.at.getTime() - b.at.getTime());
      for (let n = 1; n <= rows.length; n++) {
        const witnesses = rows.slice(0, n).map((r) => r.witness);
        if (!quorumMet(this.#policy, new Set(witnesses.map((w) => nameOf.get(w)!)))) continue;
        await db.insertInto('stats.log_witnessed').values({ size, quorum_at: rows[n - 1]!.at, witnesses }).execute();
        break;
      }
    }
  }
}
