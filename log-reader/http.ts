// GETs bounded in size and time, a few at once, each answer kept as sent: what its signature covers.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { brotliDecompressSync, gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';
import { fail, Failure } from './failure.ts';

const TIMEOUT_MS = 20_000;
const CONCURRENCY = 6;
/** Bounds on what is read: documents and signed answers. */
export const MAX_DOCUMENT_BYTES = 1 << 20;
export const MAX_ANSWER_BYTES = 32 << 20;

export interface Answer {
  url: URL;
  status: number;
  /** Field lines by lowercase name, in order (RFC 9421 §2.1 combines them itself). */
  fields: Map<string, string[]>;
  /** The request's own fields, for components with `;req`. */
  requestFields: Map<string, string[]>;
  /** The content as sent, content coding included: what Content-Digest covers. */
  raw: Buffer;
}

export const agents = {
  http: new HttpAgent({ keepAlive: true, maxSockets: CONCURRENCY }),
  https: new HttpsAgent({ keepAlive: true, maxSockets: CONCURRENCY }),
};

function unreachable(url: URL, error: Error & { code?: string }): Failure {
  const code = error.code ?? '';
  const reason = code === 'VERIFY_TIMEOUT' ? `it did not answer within ${TIMEOUT_MS / 1000} seconds`
    : code === 'ECONNREFUSED' ? 'the connection was refused'
    : code === 'ENOTFOUND' || code === 'EAI_AGAIN' ? `the host name ${url.hostname} does not resolve`
    : code === 'ECONNRESET' || code === 'EPIPE' ? 'the connection was reset'
    : code === 'EHOSTUNREACH' || code === 'ENETUNREACH' ? 'the host is unreachable'
    : /CERT|TLS|SSL/.test(code) ? `its TLS certificate was not accepted (${code})`
    : `${error.message}${code ? ` (${code})` : ''}`;
  return new Failure(`${url.href} could not be reached: ${reason}`);
}

/** One GET, read whole up to maxBytes, within TIMEOUT_MS. Redirects are not followed: a verifier checks the site it was given. */
export function get(url: URL, maxBytes: number, acceptEncoding = 'identity'): Promise<Answer> {
  const headers = { 'accept-encoding': acceptEncoding, 'user-agent': 'public-stats-verify/2' };
  const requestFields = new Map<string, string[]>([['host', [url.host]], ...Object.entries(headers).map(([k, v]): [string, string[]] => [k, [v]])]);
  return new Promise((resolve, reject) => {
    const https = url.protocol === 'https:';
    const request = (https ? httpsRequest : httpRequest)(url, { method: 'GET', headers, agent: https ? agents.https : agents.http });
    let settled = false;
    const settle = (error: Failure | undefined, answer?: Answer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) { request.destroy(); reject(error); } else resolve(answer!);
    };
    const timer = setTimeout(() => settle(unreachable(url, Object.assign(new Error('timeout'), { code: 'VERIFY_TIMEOUT' }))), TIMEOUT_MS);
    request.on('error', (error: Error) => settle(error instanceof Failure ? error : unreachable(url, error)));
    request.on('response', (response: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const tooLarge = () => new Failure(`${url.href} sent more than ${maxBytes} bytes, more than this verifier reads`);
      if (Number(response.headers['content-length']) > maxBytes) return settle(tooLarge());
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) settle(tooLarge());
        else chunks.push(chunk);
      });
      response.on('error', (error: Error) => settle(unreachable(url, error)));
      response.on('end', () => {
        const fields = new Map<string, string[]>();
        for (let i = 0; i + 1 < response.rawHeaders.length; i += 2) {
          const name = response.rawHeaders[i]!.toLowerCase();
          fields.set(name, [...(fields.get(name) ?? []), response.rawHeaders[i + 1]!]);
        }
        settle(undefined, { url, status: response.statusCode ?? 0, fields, requestFields, raw: Buffer.concat(chunks) });
      });
      response.on('close', () => { if (!response.complete) settle(new Failure(`${url.href} closed the connection before its answer was complete`)); });
    });
    request.end();
  });
}

/** A field's lines combined as RFC 9110 §5.3 does, or undefined when absent. */
export const fieldValue = (fields: Map<string, string[]>, name: string): string | undefined => fields.get(name)?.map((v) => v.trim()).join(', ');

export function expectOk(answer: Answer, what: string): Answer {
  if (answer.status === 200) return answer;
  const location = fieldValue(answer.fields, 'location');
  return fail(`${what} (${answer.url.href}) answered HTTP ${answer.status}${location ? `, a redirect to ${location}` : ''}, not 200`);
}

/** The content with its content codings (RFC 9110 §8.4) undone, still bounded. */
export function decoded(answer: Answer, what: string, maxBytes: number): Buffer {
  const codings = (fieldValue(answer.fields, 'content-encoding') ?? '').split(',').map((c) => c.trim().toLowerCase()).filter((c) => c && c !== 'identity');
  let body = answer.raw;
  for (const coding of codings.reverse()) {
    const options = { maxOutputLength: maxBytes };
    try {
      if (coding === 'gzip' || coding === 'x-gzip') body = gunzipSync(body, options);
      else if (coding === 'br') body = brotliDecompressSync(body, options);
      else if (coding === 'deflate') { try { body = inflateSync(body, options); } catch { body = inflateRawSync(body, options); } }
      else return fail(`${what} is sent in the content coding "${coding}", which this verifier cannot read`);
    } catch (error) {
      if (error instanceof Failure) throw error;
      return fail(`${what} is not valid ${coding} data, or is larger than ${maxBytes} bytes once inflated`);
    }
  }
  return body;
}

export async function eachLimited<T, R>(items: T[], run: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => { while (next < items.length) { const at = next++; results[at] = await run(items[at]!); } };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, worker));
  return results;
}
