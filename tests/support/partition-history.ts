// The history of a partition run, one for the whole run, as its clients saw it (Jepsen's practice:
// record every client's operations with their times, and check them at the end, never what the system
// says of itself): each heartbeat a writer was told had committed, with the server its session was on;
// each night an operator imported, acknowledged or of unknown outcome; every answer a reader got, with
// what it said of the log and of health; every checkpoint a writer signed (its signer's state file)
// and every one the witness cosigned (its state). tests/support/partition-checker.ts checks it.
//
// Every time in it is the test machine's clock as the test process or a reader read it (epoch ms):
// a writer's own clock may be skewed, so its lines are timed when they arrive, and a heartbeat's
// start is its stored time, which the database server's clock gave.
import type { ReaderEvent } from './partition-agent.ts';

export type { ReaderEvent };

/** A heartbeat the writer logged as committed: its key (writer, at), the server its lock session was on, and when the write began and was acknowledged. */
export interface HeartbeatAck {
  writer: string;
  /** The heartbeat's time, as stored (ISO): the database server's clock when the writer began the write. */
  at: string;
  /** The server (host:port) the writer's session was on, or 'unknown' when its log had not named one. */
  server: string;
  /** When the write began (the heartbeat's own time, epoch ms). */
  began: number;
  /** When the writer's line saying it committed reached the test (epoch ms): no earlier than the commit. */
  ackedAt: number;
}

/**
 * A night an operator imported (`npm run writer -- import`): acknowledged when the command exited 0;
 * otherwise its outcome is unknown (a commit cut short may have happened or not).
 */
export interface NightWrite {
  importer: string;
  date: string;
  usd: number;
  startedAt: number;
  endedAt: number;
  outcome: 'ok' | 'unknown';
}

/** A checkpoint a writer signed (as its signer's state file recorded it after the commit) or the witness cosigned (its state), when the test saw it. */
export interface Evidence {
  /** The writer (or the witness) whose state held it. */
  by: string;
  at: number;
  size: number;
  /** The tree's root hash, base64 as in the checkpoint note. */
  root: string;
}

/** Something the test did (a cut, a heal, a crash), for the report. */
export interface Note { at: number; what: string }

export interface History {
  acks: HeartbeatAck[];
  nights: NightWrite[];
  reads: ReaderEvent[];
  /** Checkpoints the writers signed, in the order seen. */
  signed: Evidence[];
  /** Checkpoints the witness cosigned, in the order seen. */
  cosigned: Evidence[];
  notes: Note[];
}

export const emptyHistory = (): History => ({ acks: [], nights: [], reads: [], signed: [], cosigned: [], notes: [] });

/** The part of a history from `from` (epoch ms) to before `to`, for a report on one stretch of the run (never for a check: every check reads the whole run). */
export function since(history: History, from: number, to = Infinity): History {
  const within = (at: number) => at >= from && at < to;
  return {
    acks: history.acks.filter((a) => within(a.ackedAt)),
    nights: history.nights.filter((n) => within(n.endedAt)),
    reads: history.reads.filter((r) => within(r.at)),
    signed: history.signed.filter((s) => within(s.at)),
    cosigned: history.cosigned.filter((c) => within(c.at)),
    notes: history.notes.filter((n) => within(n.at)),
  };
}

/** Collects the history from the processes' output and the parties' state as it comes. */
export class Recorder {
  readonly history: History = emptyHistory();
  /** The server each writer's current lock session is on. */
  readonly #sessions = new Map<string, string>();

  note(what: string, at = Date.now()): void {
    this.history.notes.push({ at, what });
  }

  /**
   * One line of a writer's log (JSON lines, WRITER_LOG_LEVEL=debug), received at `receivedAt`:
   * "holding the writer lock" names the session's server, "heartbeat done" the heartbeat it
   * acknowledged. Other lines are ignored.
   */
  writerLine(writer: string, line: string, receivedAt = Date.now()): void {
    if (!line.startsWith('{')) return;
    let entry: { msg?: string; server?: string; note?: string };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      return;
    }
    if (entry.msg === 'holding the writer lock: this writer writes' && entry.server) this.#sessions.set(writer, entry.server);
    else if (entry.msg?.startsWith('lost the writer lock')) this.#sessions.delete(writer);
    else if (entry.msg === 'heartbeat done' && entry.note && !Number.isNaN(Date.parse(entry.note))) {
      this.history.acks.push({ writer, at: entry.note, server: this.#sessions.get(writer) ?? 'unknown', began: Date.parse(entry.note), ackedAt: receivedAt });
    }
  }

  night(write: NightWrite): void {
    this.history.nights.push(write);
  }

  readerLine(line: string): void {
    if (!line.startsWith('{')) return;
    try {
      this.history.reads.push(JSON.parse(line) as ReaderEvent);
    } catch {
      // a line cut short by the reader's end
    }
  }

  /** A checkpoint `by` signed, as its state holds it now: recorded unless it is the one recorded last for `by`. */
  signed(by: string, checkpoint: { size: number; root: string }, at = Date.now()): void {
    Recorder.#evidence(this.history.signed, by, checkpoint, at);
  }

  /** A checkpoint the witness `by` cosigned, as its state holds it now: recorded unless it is the one recorded last for `by`. */
  cosigned(by: string, checkpoint: { size: number; root: string }, at = Date.now()): void {
    Recorder.#evidence(this.history.cosigned, by, checkpoint, at);
  }

  static #evidence(list: Evidence[], by: string, { size, root }: { size: number; root: string }, at: number): void {
    const last = list.filter((e) => e.by === by).at(-1);
    if (last?.size === size && last.root === root) return;
    list.push({ by, at, size, root });
  }
}
