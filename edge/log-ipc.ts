// The log's one holder (edge/log-holder.ts) in the cluster primary, asked by the workers over the
// cluster's IPC channel (https://nodejs.org/api/cluster.html#event-message). A log's text crosses
// only when a worker does not have that version yet; otherwise an answer is a few names and sizes.
import cluster from 'node:cluster';
import type { HeldLog, LogKind, LogSnapshot, LogSource } from './log-holder.ts';

const CHANNEL = 'edge-log-holder';
/** Versions a worker keeps the text of: the real and the demo log, and one older of each. */
const KEPT_VERSIONS = 4;

type Ask = { ask: 'snapshot'; have: string[] } | { ask: 'ensure'; origin: string; size: number; asked: boolean } | { ask: 'ensureAudit'; publishedAt: string };
type Question = Ask & { channel: typeof CHANNEL; id: number };

type Reply = { channel: typeof CHANNEL; id: number; snapshot?: { inUse: LogKind; logs: Partial<Record<LogKind, Omit<HeldLog, 'body'> & { body?: string }>> }; error?: string };

const isQuestion = (message: unknown): message is Question => (message as Question | null)?.channel === CHANNEL;

/** In the primary: answers every worker's questions from `holder`. */
export function serveLogHolder(holder: LogSource): void {
  cluster.on('message', (worker, message: unknown) => {
    if (!isQuestion(message)) return;
    const reply = (answer: Omit<Reply, 'channel' | 'id'>) => {
      if (worker.isConnected()) worker.send({ channel: CHANNEL, id: message.id, ...answer } satisfies Reply);
    };
    const answered = message.ask === 'ensure'
      ? holder.ensure(message.origin, message.size, message.asked).then(() => reply({}))
      : message.ask === 'ensureAudit'
      ? holder.ensureAudit(message.publishedAt).then(() => reply({}))
      : holder.snapshot().then(({ inUse, logs }) => {
        const have = new Set(message.have);
        const sent: NonNullable<Reply['snapshot']>['logs'] = {};
        for (const [kind, held] of Object.entries(logs) as [LogKind, HeldLog][]) sent[kind] = have.has(held.version) ? { ...held, body: undefined } : held;
        reply({ snapshot: { inUse, logs: sent } });
      });
    answered.catch((error: Error) => reply({ error: error.message }));
  });
}

/** In a worker: the holder in the primary, as a LogSource. */
export function logSourceFromPrimary(): LogSource {
  let next = 0;
  const waiting = new Map<number, { resolve: (reply: Reply) => void; reject: (error: Error) => void }>();
  /**
   * The bodies of the versions last received, by version: a few, not just the latest, as an answer
   * to an earlier question may still name a version this worker said it had when it asked.
   */
  const bodies = new Map<string, string>();
  process.on('message', (message: unknown) => {
    const reply = message as Reply;
    if (reply?.channel !== CHANNEL) return;
    const pending = waiting.get(reply.id);
    waiting.delete(reply.id);
    if (reply.error !== undefined) pending?.reject(new Error(reply.error));
    else pending?.resolve(reply);
  });
  const ask = (question: Ask) => new Promise<Reply>((resolve, reject) => {
    const id = ++next;
    waiting.set(id, { resolve, reject });
    process.send!({ channel: CHANNEL, id, ...question } as Question, undefined, undefined, (error: Error | null) => {
      if (error && waiting.delete(id)) reject(error);
    });
  });
  return {
    async snapshot(): Promise<LogSnapshot> {
      // Asked again with nothing claimed if a version this worker claimed was dropped meanwhile.
      for (const have of [[...bodies.keys()], []]) {
        const { snapshot } = await ask({ ask: 'snapshot', have });
        const logs: LogSnapshot['logs'] = {};
        for (const [kind, held] of Object.entries(snapshot!.logs) as [LogKind, Omit<HeldLog, 'body'> & { body?: string }][]) {
          const body = held.body ?? bodies.get(held.version);
          if (body === undefined) break;
          if (held.body !== undefined) bodies.set(held.version, body);
          logs[kind] = { ...held, body };
        }
        for (const version of bodies.keys()) if (bodies.size > KEPT_VERSIONS) bodies.delete(version);
        if (Object.keys(logs).length === Object.keys(snapshot!.logs).length) return { inUse: snapshot!.inUse, logs };
      }
      throw new Error('the log holder named a version it did not send');
    },
    async ensure(origin, size, asked = false) {
      await ask({ ask: 'ensure', origin, size, asked });
    },
    async ensureAudit(publishedAt) {
      await ask({ ask: 'ensureAudit', publishedAt });
    },
  };
}
