// The one holder of the transparency log's state on a node: every edge process asks it, so no two
// answers from the node can disagree on the log. With several workers it lives in the cluster
// primary (edge/log-ipc.ts carries the questions); alone, in the one process. It is small on
// purpose, loading no web framework and no schema library: it keeps the landing_log record as read
// from PostgREST (the text of the newest real log and of the newest demo log), and the processes
// that serve them parse and check it.
//
// It reads the log anew when the log's state in landing_health changes (checked at most once a
// second, when asked), and whenever an answer is about to name a checkpoint or an audit attestation
// it does not hold yet (the stats record names the latest audit, which landing_health does not), so
// a checkpoint or an audit named anywhere is always one it serves. A log never goes back: a read
// that gives an older checkpoint of the same origin, or the same one with fewer attestations (a
// standby that has not replayed them yet), is dropped. The demo log, once replaced by the real one,
// is kept as last read, so that a checkpoint an answer named while the figures were demo data is
// still served.
import { NextLoad } from './cache.ts';

/** Which log: the real one, or the demo data's. */
export type LogKind = 'real' | 'demo';

/** One log as held: the landing_log record's JSON text, named by `version`. */
export interface HeldLog {
  version: string;
  origin: string;
  size: number;
  /** When its latest audit attestation was published (ms since the epoch); -Infinity before any. */
  auditedAt: number;
  body: string;
}

export interface LogSnapshot {
  /** The log the figures are now computed against. */
  inUse: LogKind;
  logs: Partial<Record<LogKind, HeldLog>>;
}

/** The log's state as every process of a node reads it. */
export interface LogSource {
  /** The logs held now, no older than a second's check of the database; throws while the log was never read. */
  snapshot(): Promise<LogSnapshot>;
  /**
   * Returns once the log of `origin` is held at `size` or beyond, reading it anew if needed (an
   * answer about to name that checkpoint). `asked` marks a size a client named, which may not exist:
   * such reads happen at most once a second. If the read still lacks it, returns all the same.
   */
  ensure(origin: string, size: number, asked?: boolean): Promise<void>;
  /**
   * Returns once a log is held with an audit attestation published at `publishedAt` (ISO 8601) or
   * later, reading the log anew if needed (an answer about to name that audit: the stats record's
   * `audit`). If the read still lacks it, returns all the same.
   */
  ensureAudit(publishedAt: string): Promise<void>;
}

/** How often at most the database is asked whether the log has moved. */
const CHECK_MS = 1000;
/** How often at most a size a client named makes the log be read anew. */
const ASKED_READ_MS = 1000;

/** What landing_log gives that the holder reads: the rest is the serving processes' to check. */
interface LogFields { demo?: boolean | null; log_checkpoint?: { origin?: unknown; size?: unknown } | null; audits?: { published_at?: unknown }[] }

export interface LogReads {
  /** The landing_log record's JSON text. */
  log(): Promise<string>;
  /**
   * What says the log has moved: landing_health's `log` part and latest payout, and the audits
   * (landing_stats' `audit` and `audits_unfinished`, which no checkpoint marks); any change means read
   * the log anew.
   */
  logState(): Promise<string>;
}

/** landing_log and landing_health read from PostgREST itself (its default role is anon), past any gateway's cache. */
export function postgrestReads(postgrestUpstream: string, timeoutMs: number, fetchImpl: typeof fetch = fetch): LogReads {
  const read = async (fn: string) => {
    const res = await fetchImpl(`${postgrestUpstream}/rpc/${fn}`, { headers: { accept: 'application/json', 'user-agent': 'public-stats-edge/1.0' }, signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    if (!res.ok) throw new Error(`${fn} failed (HTTP ${res.status}): ${text.slice(0, 200)}`);
    return text;
  };
  return {
    log: () => read('landing_log'),
    async logState() {
      const [healthText, statsText] = await Promise.all([read('landing_health'), read('landing_stats')]);
      const health = JSON.parse(healthText) as { log?: unknown; data?: { last_payout_date?: unknown } | null };
      // Every attestation closes an opening, so audits_unfinished moves with each one published, listed or not.
      const stats = JSON.parse(statsText) as { audit?: unknown; audits_unfinished?: unknown };
      return JSON.stringify([health.log ?? null, health.data?.last_payout_date ?? null, stats.audit ?? null, stats.audits_unfinished ?? null]);
    },
  };
}

export class LogHolder implements LogSource {
  #logs: Partial<Record<LogKind, HeldLog>> = {};
  #inUse: LogKind | undefined;
  #reads = 0;
  #lastState: string | undefined;
  #checkedAt = -Infinity;
  #checking: Promise<void> | undefined;
  #failing = false;
  #askedReadAt = -Infinity;
  readonly #reading: NextLoad<void>;

  private readonly reads: LogReads;
  private readonly now: () => number;

  constructor(reads: LogReads, now: () => number = Date.now) {
    this.reads = reads;
    this.now = now;
    this.#reading = new NextLoad(async () => this.#keep(await this.reads.log()));
  }

  async snapshot(): Promise<LogSnapshot> {
    if (this.now() - this.#checkedAt >= CHECK_MS) {
      this.#checking ??= this.#check().finally(() => { this.#checking = undefined; });
      // A failed check keeps what is held: the log cannot be read, but what was served stays true.
      // An outage is reported once, when it begins.
      await this.#checking.then(() => { this.#failing = false; }, (error: Error) => {
        if (!this.#inUse) throw error;
        if (!this.#failing) console.error(`edge: the log could not be checked, still serving what was read: ${error.message}`);
        this.#failing = true;
      });
    }
    return { inUse: this.#inUse!, logs: { ...this.#logs } };
  }

  async ensure(origin: string, size: number, asked = false): Promise<void> {
    if (this.#holds(origin, size)) return;
    if (asked) {
      if (this.now() - this.#askedReadAt < ASKED_READ_MS) return;
      this.#askedReadAt = this.now();
    }
    try {
      await this.#reading.get();
    } catch (error) {
      console.error(`edge: the log could not be read: ${(error as Error).message}`);
    }
  }

  async ensureAudit(publishedAt: string): Promise<void> {
    const at = Date.parse(publishedAt);
    if (Object.values(this.#logs).some((held) => held.auditedAt >= at)) return;
    try {
      await this.#reading.get();
    } catch (error) {
      console.error(`edge: the log could not be read: ${(error as Error).message}`);
    }
  }

  #holds(origin: string, size: number): boolean {
    return Object.values(this.#logs).some((held) => held.origin === origin && held.size >= size);
  }

  async #check(): Promise<void> {
    this.#checkedAt = this.now();
    const state = await this.reads.logState();
    if (state === this.#lastState && this.#inUse) return;
    await this.#reading.get();
    this.#lastState = state;
  }

  #keep(body: string): void {
    const fields = JSON.parse(body) as LogFields;
    const kind: LogKind = fields.demo === true ? 'demo' : 'real';
    const head = fields.log_checkpoint;
    const origin = typeof head?.origin === 'string' ? head.origin : '';
    const size = typeof head?.size === 'number' ? head.size : 0;
    const auditedAt = Math.max(-Infinity, ...(fields.audits ?? []).map((a) => (typeof a.published_at === 'string' ? Date.parse(a.published_at) : -Infinity)));
    const held = this.#logs[kind];
    this.#inUse = kind;
    // The newer view stays: a read of the same log at an older checkpoint, or at the same one before
    // an attestation the view holds, says nothing new.
    if (held && held.origin === origin && (held.size > size || (held.size === size && held.auditedAt > auditedAt))) return;
    if (held?.body === body) return;
    this.#logs[kind] = { version: `${kind}:${++this.#reads}`, origin, size, auditedAt, body };
  }
}
