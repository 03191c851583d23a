// The history of a partition test, as its clients saw it (Jepsen's practice: record every client's
// operations with their times, and check them at the end, never what the system says of itself):
// each heartbeat a writer was told had committed, with the server its session was on; each night an
// operator imported, acknowledged or of unknown outcome; every answer a reader got, with what it said
// of the log and of health. tests/support/partition-checker.ts checks it.
import type { ReaderEvent } from './partition-agent.ts';

export type { ReaderEvent };

/** A heartbeat the writer logged as committed: its key (writer, at), the server its lock session was on, and when the writer heard so. */
export interface HeartbeatAck {
  writer: string;
  /** The heartbeat's time, as stored (ISO). */
  at: string;
  /** The server (host:port) the writer's session was on. */
  server: string;
  /** When the writer logged the acknowledgement (epoch ms). */
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

/** Something the test did (a cut, a heal, a crash), for the report. */
export interface Note { at: number; what: string }

export interface History {
  acks: HeartbeatAck[];
  nights: NightWrite[];
  reads: ReaderEvent[];
  notes: Note[];
}

export const emptyHistory = (): History => ({ acks: [], nights: [], reads: [], notes: [] });

/** The part of a history from `from` (epoch ms) to before `to`: what a client had heard by then. */
export function since(history: History, from: number, to = Infinity): History {
  return {
    acks: history.acks.filter((a) => a.ackedAt >= from && a.ackedAt < to),
    nights: history.nights.filter((n) => n.endedAt >= from && n.endedAt < to),
    reads: history.reads.filter((r) => r.at >= from && r.at < to),
    notes: history.notes.filter((n) => n.at >= from && n.at < to),
  };
}

/** Collects the history from the processes' output as it comes. */
export class Recorder {
  readonly history: History = emptyHistory();
  /** The server each writer's current lock session is on. */
  readonly #sessions = new Map<string, string>();

  note(what: string, at = Date.now()): void {
    this.history.notes.push({ at, what });
  }

  /**
   * One line of a writer's log (JSON lines, WRITER_LOG_LEVEL=debug): "holding the writer lock" names
   * the session's server, "heartbeat done" the heartbeat it acknowledged. Other lines are ignored.
   */
  writerLine(writer: string, line: string): void {
    if (!line.startsWith('{')) return;
    let entry: { ts?: string; msg?: string; server?: string; note?: string };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      return;
    }
    if (entry.msg === 'holding the writer lock: this writer writes' && entry.server) this.#sessions.set(writer, entry.server);
    else if (entry.msg?.startsWith('lost the writer lock')) this.#sessions.delete(writer);
    else if (entry.msg === 'heartbeat done' && entry.note && entry.ts) {
      this.history.acks.push({ writer, at: entry.note, server: this.#sessions.get(writer) ?? 'unknown', ackedAt: Date.parse(entry.ts) });
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
}
