// Data answers as they leave the service: in the one content coding the gateway asked for, with an
// RFC 9530 Content-Digest of the bytes as sent and an RFC 9421 signature over them
// (https://www.rfc-editor.org/rfc/rfc9421). The gateway caches what it gets, so each record is
// compressed and signed once per upstream answer and coding, never once per request.
import type { LogHead } from '../contract/records.ts';
import { logCheckpointField, type AnswerSigner } from './response-signature.ts';

export type ContentCoding = 'gzip' | 'br';
/** Compression is the runtime's (Node's zlib on the server); without it every answer is identity. */
export type Compress = (body: Uint8Array, coding: ContentCoding) => Uint8Array;

/** Bodies this small gain nothing from compression (the gateway's gzip_min_length). */
const MIN_COMPRESSED_BYTES = 256;
/** Whole records in a few codings; ranged answers are cached by the gateway instead. */
const MEMO_SIZE = 32;

export interface Answer {
  status?: number;
  body: string | Uint8Array;
  contentType: string;
  /** The identity representation's strong validator; a compressed one is sent weak. */
  etag: string;
  lastModified?: string;
  /** Where the request went: its path and its query (with the "?"), as the client sent them. */
  path: string;
  query?: string;
  /** The log state the record was computed against (its log_checkpoint), which the answer names and its signature covers. */
  logCheckpoint?: LogHead | null;
}

export interface SignedAnswer {
  status: number;
  body: Uint8Array<ArrayBuffer>;
  headers: Record<string, string>;
}

/**
 * The coding the gateway picked: it sends exactly one (or none). A client that reaches the edge
 * directly with a list gets identity, which every client can read.
 */
export function requestedCoding(acceptEncoding: string | undefined, compress: Compress | undefined): ContentCoding | undefined {
  const coding = acceptEncoding?.trim().toLowerCase();
  return compress && (coding === 'gzip' || coding === 'br') ? coding : undefined;
}

export interface AnswerSigning {
  /** The answer in `coding`, signed for `authority`; `memoKey` names a whole record to keep. */
  sign(answer: Answer, coding: ContentCoding | undefined, memoKey?: string): Promise<SignedAnswer>;
}

/**
 * `beforeNaming` is awaited before an answer goes out naming a log state (in its Log-Checkpoint
 * field), so that the log is served at that state by then.
 */
export function createAnswerSigning(signer: () => Promise<AnswerSigner>, authority: string, compress: Compress | undefined, beforeNaming: (head: LogHead) => Promise<void>): AnswerSigning {
  const memo = new Map<string, Promise<SignedAnswer>>();
  const make = async (answer: Answer, coding: ContentCoding | undefined): Promise<SignedAnswer> => {
    if (answer.logCheckpoint) await beforeNaming(answer.logCheckpoint);
    const logCheckpoint = answer.logCheckpoint ? logCheckpointField(answer.logCheckpoint) : undefined;
    const identity = typeof answer.body === 'string' ? new TextEncoder().encode(answer.body) : answer.body;
    const compressed = coding && compress && identity.length >= MIN_COMPRESSED_BYTES ? compress(identity, coding) : undefined;
    const body = new Uint8Array(compressed ?? identity);
    const status = answer.status ?? 200;
    const signature = await (await signer()).sign({ status, contentType: answer.contentType, body, authority, path: answer.path, query: answer.query, logCheckpoint });
    const headers: Record<string, string> = {
      'content-type': answer.contentType,
      etag: compressed ? `W/${answer.etag.replace(/^W\//, '')}` : answer.etag,
      ...(answer.lastModified ? { 'last-modified': answer.lastModified } : {}),
      ...(compressed ? { 'content-encoding': coding! } : {}),
      ...(logCheckpoint ? { 'log-checkpoint': logCheckpoint } : {}),
      ...signature,
    };
    return { status, body, headers };
  };
  return {
    sign(answer, coding, memoKey) {
      if (!memoKey) return make(answer, coding);
      const key = `${memoKey}|${answer.etag}|${coding ?? ''}`;
      let made = memo.get(key);
      if (!made) {
        made = make(answer, coding);
        made.catch(() => memo.delete(key));
        // Entries of an older upstream answer are never asked for again: the oldest go first.
        if (memo.size >= MEMO_SIZE) memo.delete(memo.keys().next().value!);
        memo.set(key, made);
      }
      return made;
    },
  };
}
