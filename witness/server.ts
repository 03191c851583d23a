// The witness's HTTP server: POST /add-checkpoint and nothing else, bodies of at most MAX_BODY_BYTES
// in UTF-8, one log line per request.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { addCheckpoint, type Answer, type Witness } from './add-checkpoint.ts';

/** Far more than 63 proof lines and a checkpoint with a few dozen signatures need. */
const MAX_BODY_BYTES = 64 * 1024;
const ADD_CHECKPOINT_PATH = '/add-checkpoint';

class TooLarge extends Error {}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  if (Number(request.headers['content-length'] ?? 0) > MAX_BODY_BYTES) throw new TooLarge();
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    length += chunk.length;
    if (length > MAX_BODY_BYTES) throw new TooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const plain = (status: number, reason: string): Answer => ({ status, contentType: 'text/plain; charset=utf-8', body: `${reason}\n`, reason });

async function answer(witness: Witness, request: IncomingMessage): Promise<Answer> {
  const path = new URL(request.url ?? '/', 'http://witness').pathname;
  if (path !== ADD_CHECKPOINT_PATH) return plain(404, 'not found: POST /add-checkpoint is the only resource');
  if (request.method !== 'POST') return plain(405, 'add-checkpoint takes POST');
  let body: Buffer;
  try {
    body = await readBody(request);
  } catch (error) {
    if (error instanceof TooLarge) return plain(413, `a request body is at most ${MAX_BODY_BYTES} bytes`);
    throw error;
  }
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    return plain(400, 'the body is not UTF-8');
  }
  return addCheckpoint(witness, text);
}

function logLine(request: IncomingMessage, result: Answer): string {
  const sizes = result.old === undefined ? '' : ` old=${result.old} size=${result.size}`;
  return `${new Date().toISOString()} ${result.status} ${request.method} ${request.url} origin=${JSON.stringify(result.origin ?? null)}${sizes} ${result.reason}\n`;
}

export function createWitnessServer(witness: Witness, log: (line: string) => void): Server {
  return createServer((request: IncomingMessage, response: ServerResponse) => {
    void answer(witness, request)
      .catch((error: Error) => {
        process.stderr.write(`${new Date().toISOString()} error: ${error.stack ?? error.message}\n`);
        return plain(500, 'internal error');
      })
      .then((result) => {
        log(logLine(request, result));
        const headers: Record<string, string> = { 'Content-Type': result.contentType, 'Cache-Control': 'no-store' };
        if (result.status === 405) headers.Allow = 'POST';
        // A refused body may not have been read to its end: the connection is not kept.
        if (result.status === 413) headers.Connection = 'close';
        response.writeHead(result.status, headers).end(result.body);
      });
  });
}
