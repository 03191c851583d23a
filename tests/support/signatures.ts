// Checking the service's RFC 9421 answer signatures with two implementations we did not write:
// http-message-sig (Cloudflare's, https://github.com/cloudflare/web-bot-auth) and
// http-message-signatures (https://github.com/dhensby/node-http-message-signatures). Answers are
// read raw (node:http does not decompress), so Content-Digest is checked over the bytes as sent.
import { createHash, createPublicKey } from 'node:crypto';
import http from 'node:http';
import { component, verifySignature, webcrypto } from 'http-message-sig';
import { createVerifier, httpbis } from 'http-message-signatures';
import { expect } from 'vitest';

export interface RawAnswer {
  url: string;
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** A GET whose body comes back exactly as sent, compressed or not. */
export function rawGet(url: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const flat: Record<string, string> = {};
        for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
        resolve({ url, status: res.statusCode ?? 0, headers: flat, body: Buffer.concat(chunks) });
      });
    });
    request.on('error', reject);
  });
}

export interface DirectoryKey { kty: string; crv: string; x: string; kid: string }

/** The Content-Digest a body should carry (RFC 9530 sha-256), computed here. */
export const sha256Digest = (body: Buffer) => `sha-256=:${createHash('sha256').update(body).digest('base64')}:`;

/** Verifies with http-message-sig 0.3; resolves to the signature's parameters, or throws. */
export async function verifyWithHttpMessageSig(answer: RawAnswer, keys: DirectoryKey[]) {
  const fields = Object.entries(answer.headers).map(([name, value]) => ({ name, value }));
  const verified = await verifySignature({ kind: 'response', status: answer.status, fields, request: { kind: 'request', method: 'GET', targetUri: answer.url, fields: [] } }, {
    label: 'answer',
    // Everything the service promises to cover, the request's authority, path and any query included.
    policy: {
      algorithms: ['ed25519'],
      requiredComponents: ['@status', 'content-type', 'content-digest', component('@authority', { req: true }), component('@path', { req: true }),
        ...(new URL(answer.url).search ? [component('@query', { req: true })] : [])],
      requiredParameters: ['created', 'keyid', 'alg', 'tag'],
    },
    resolveVerifier: async (candidate) => {
      const key = keys.find((k) => k.kid === candidate.parameters.keyid);
      if (!key) throw new Error(`no directory key ${String(candidate.parameters.keyid)}`);
      return webcrypto.verifier(await crypto.subtle.importKey('jwk', { kty: key.kty, crv: key.crv, x: key.x }, { name: 'Ed25519' }, true, ['verify']));
    },
  });
  return verified.parameters;
}

/** Verifies with http-message-signatures 1.0; resolves to true only when the signature verifies. */
export async function verifyWithHttpMessageSignatures(answer: RawAnswer, keys: DirectoryKey[]): Promise<boolean> {
  const result = await httpbis.verifyMessage({
    keyLookup: async (params) => {
      const key = keys.find((k) => k.kid === params.keyid);
      if (!key) return null;
      return { id: key.kid, algs: ['ed25519'], verify: createVerifier(createPublicKey({ key: { kty: key.kty, crv: key.crv, x: key.x }, format: 'jwk' }), 'ed25519') };
    },
    requiredParams: ['created', 'keyid', 'alg', 'tag'],
    requiredFields: ['@status', 'content-type', 'content-digest'],
  }, { status: answer.status, headers: answer.headers }, { method: 'GET', url: answer.url, headers: {} });
  return result === true;
}

/**
 * The Content-Digest (checked with node:crypto) and the RFC 9421 signature, checked by both libraries,
 * which must agree.
 */
export async function verifies(answer: RawAnswer, keys: DirectoryKey[]): Promise<boolean> {
  if (answer.headers['content-digest'] !== sha256Digest(answer.body)) return false;
  const [a, b] = await Promise.all([
    verifyWithHttpMessageSig(answer, keys).then(() => true, () => false),
    verifyWithHttpMessageSignatures(answer, keys).catch(() => false),
  ]);
  expect(a, `http-message-sig and http-message-signatures disagree on ${answer.url}`).toBe(b);
  return a;
}
