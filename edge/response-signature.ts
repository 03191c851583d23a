// Signed data answers: an RFC 9530 Content-Digest of the bytes as sent
// (https://www.rfc-editor.org/rfc/rfc9530) and one RFC 9421 response signature
// (https://www.rfc-editor.org/rfc/rfc9421) over the status, the media type, that digest and the
// request's authority, path and query (§2.4: request components of a response carry ;req), and the
// Log-Checkpoint field naming the log state the answer agrees with, made by
// http-message-sig with the key directory's Ed25519 key. No `expires`: a figure must still verify
// years later, against the key directory, which keeps retired keys.
import { component, createSignature, webcrypto, type SignatureComponent } from 'http-message-sig';
import { importSigningKey } from './signing.ts';

/** The signature's label in Signature and Signature-Input. */
export const ANSWER_SIGNATURE_LABEL = 'answer';
/** Names the service as the signature's application (RFC 9421 §2.3 tag). */
export const ANSWER_SIGNATURE_TAG = 'public-stats';

export interface SignableAnswer {
  status: number;
  contentType: string;
  /** The bytes as sent, after any content coding. */
  body: Uint8Array;
  /** The public host[:port] the client called. */
  authority: string;
  path: string;
  /** The request's query with its "?", when it had one; the signature then covers it. */
  query?: string;
  /** The Log-Checkpoint field the answer carries, which the signature then covers. */
  logCheckpoint?: string;
  created?: Date;
}

/**
 * The Log-Checkpoint field: the log state an answer agrees with, as an RFC 8941 dictionary
 * (https://www.rfc-editor.org/rfc/rfc8941#section-3.2) of the log's origin (a string), the tree size
 * (an integer) and the root hash (a byte sequence).
 */
export function logCheckpointField(head: { origin: string; size: number; root: string }): string {
  return `origin="${head.origin.replace(/[\\"]/g, (ch) => `\\${ch}`)}", size=${head.size}, root=:${head.root}:`;
}

export type AnswerSignatureHeaders = Record<'content-digest' | 'signature-input' | 'signature', string>;

export interface AnswerSigner {
  /** The key's RFC 7638 thumbprint, as the key directory lists it. */
  keyid: string;
  sign(answer: SignableAnswer): Promise<AnswerSignatureHeaders>;
}

function base64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** host[:port]: a registered name or IPv4 address, or an IPv6 literal in brackets. */
const AUTHORITY = /^(?:[a-z0-9._~-]+|\[[0-9a-f:.]+\])(?::\d{1,5})?$/;

/**
 * The request URL the `;req` components are read from, checked to be what it names. The library
 * reads @authority from a parsed URL, which drops the scheme's default port, so the scheme chosen is
 * one whose default is not the given port: the authority is signed as given, port and all.
 */
function requestUrl(answer: SignableAnswer): string {
  const authority = answer.authority.toLowerCase();
  if (!AUTHORITY.test(authority)) throw new TypeError(`"${answer.authority}" is not an authority (host[:port])`);
  if (!answer.path.startsWith('/') || /[?#\s]/.test(answer.path)) throw new TypeError(`"${answer.path}" is not a request path`);
  if (answer.query && (!answer.query.startsWith('?') || /[#\s]/.test(answer.query))) throw new TypeError(`"${answer.query}" is not a request query (it starts with "?")`);
  return `${authority.endsWith(':443') ? 'http' : 'https'}://${authority}${answer.path}${answer.query ?? ''}`;
}

export async function contentDigest(body: Uint8Array): Promise<string> {
  return `sha-256=:${base64(new Uint8Array(await crypto.subtle.digest('SHA-256', new Uint8Array(body))))}:`;
}

export async function createAnswerSigner(privateKeyPkcs8Base64url: string): Promise<AnswerSigner> {
  const { privateKey, keyid } = await importSigningKey(privateKeyPkcs8Base64url);
  const signer = webcrypto.signer(privateKey);
  return {
    keyid,
    async sign(answer) {
      const digest = await contentDigest(answer.body);
      const components: SignatureComponent[] = ['@status', 'content-type', 'content-digest', component('@authority', { req: true }), component('@path', { req: true })];
      if (answer.query) components.push(component('@query', { req: true }));
      const fields = [{ name: 'content-type', value: answer.contentType }, { name: 'content-digest', value: digest }];
      if (answer.logCheckpoint) {
        components.push('log-checkpoint');
        fields.push({ name: 'log-checkpoint', value: answer.logCheckpoint });
      }
      const signed = await createSignature({
        kind: 'response',
        status: answer.status,
        fields,
        request: { kind: 'request', method: 'GET', targetUri: requestUrl(answer), fields: [] },
      }, {
        label: ANSWER_SIGNATURE_LABEL,
        components,
        parameters: { created: Math.floor((answer.created ?? new Date()).getTime() / 1000), keyid, alg: 'ed25519', tag: ANSWER_SIGNATURE_TAG },
        signer,
      });
      return { 'content-digest': digest, 'signature-input': signed.signatureInput, signature: signed.signature };
    },
  };
}
