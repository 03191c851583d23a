// The HTTP message signatures key directory (draft-meunier-webbotauth-httpsig-directory,
// https://datatracker.ietf.org/doc/draft-meunier-http-message-signatures-directory/): the public half
// of HTTP_SIG_PRIVATE_KEY as a JWKS, and the response signature the draft asks for, with
// tag="http-message-signatures-directory", created and expires, made by the web-bot-auth package
// (the reference implementation). Only kty/crv/x/kid/use leave this module. Web Crypto only.
import { calculateJwkThumbprint } from 'jose';
import { directoryResponseHeaders } from 'web-bot-auth';
import { Ed25519Signer } from 'web-bot-auth/crypto';
import { KEY_DIRECTORY_CACHE_SECONDS } from '../contract/documents.ts';

/**
 * A signature stays valid this long; a new one is made each time clients may have stopped keeping the
 * last answer (RFC 9421 §2.3 created/expires).
 */
const SIGNATURE_LIFETIME_SECONDS = 300;
const SIGNATURE_STEP_SECONDS = KEY_DIRECTORY_CACHE_SECONDS;

/** `exp` (seconds since the epoch, as JWT's): on a retired key, when it was retired; what it signed after that does not verify. */
export interface PublicEd25519Jwk { kty: 'OKP'; crv: 'Ed25519'; x: string; kid: string; use: 'sig'; exp?: number }

export interface KeyDirectory {
  /** The JWKS, serialised once. */
  body: string;
  key: PublicEd25519Jwk;
  /** Signature and Signature-Input of an answer now (they cover the site's authority, created, expires). */
  signatureHeaders(now?: Date): Promise<Record<'Signature' | 'Signature-Input', string>>;
}

export function base64urlBytes(value: string): Uint8Array<ArrayBuffer> {
  const binary = atob(value.replace(/-/g, '+').replace(/_/g, '/'));
  return Uint8Array.from(binary, (ch) => ch.charCodeAt(0));
}

/**
 * `directoryUrl` is the directory's public URL: its authority is the one signed, whatever Host a
 * request arrived with (behind the gateway the edge sees its own), so no header picks what is signed.
 */
/** A public key as the directory lists it; its id is the RFC 7638 thumbprint (https://www.rfc-editor.org/rfc/rfc7638). */
async function publicJwk(x: string): Promise<PublicEd25519Jwk> {
  return { kty: 'OKP', crv: 'Ed25519', x, kid: await calculateJwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x }, 'sha256'), use: 'sig' };
}

/** A retired key as HTTP_SIG_RETIRED_PUBLIC_KEYS lists it, `<x>@<ISO time retired>`, with that time as `exp`. */
async function retiredJwk(entry: string): Promise<PublicEd25519Jwk> {
  const [x, retiredAt] = entry.split('@') as [string, string | undefined];
  const exp = retiredAt === undefined ? NaN : Math.floor(Date.parse(retiredAt) / 1000);
  if (!Number.isFinite(exp)) throw new Error(`HTTP_SIG_RETIRED_PUBLIC_KEYS: "${entry}" is not <public key>@<ISO time it was retired>`);
  return { ...(await publicJwk(x)), exp };
}

/**
 * The directory lists the current key first, then the retired ones (`retiredPublicKeys`, `<JWK x>@<ISO time retired>`,
 * values), so what an earlier key signed still verifies against it.
 */
export interface SigningKey {
  privateKey: CryptoKey;
  /** The private key as a JWK (web-bot-auth takes it in that form). */
  jwk: JsonWebKey;
  /** The public key, raw (32 bytes). */
  publicKey: Uint8Array<ArrayBuffer>;
  /** The RFC 7638 thumbprint, as the key directory draft (https://datatracker.ietf.org/doc/draft-meunier-http-message-signatures-directory/) and web-bot-auth compute it. */
  keyid: string;
}

/** HTTP_SIG_PRIVATE_KEY imported once for every use: the directory, signed answers, the log's checkpoints. */
export async function importSigningKey(privateKeyPkcs8Base64url: string): Promise<SigningKey> {
  let privateKey: CryptoKey;
  try {
    privateKey = await crypto.subtle.importKey('pkcs8', base64urlBytes(privateKeyPkcs8Base64url), { name: 'Ed25519' }, true, ['sign']);
  } catch {
    throw new Error('HTTP_SIG_PRIVATE_KEY must be an Ed25519 private key (PKCS#8 DER, base64url): run `npm run keys` for a new one.');
  }
  const jwk = await crypto.subtle.exportKey('jwk', privateKey);
  return { privateKey, jwk, publicKey: base64urlBytes(jwk.x!), keyid: (await publicJwk(jwk.x!)).kid };
}

export async function createKeyDirectory(privateKeyPkcs8Base64url: string, directoryUrl: string, retiredPublicKeys: readonly string[] = []): Promise<KeyDirectory> {
  const { jwk } = await importSigningKey(privateKeyPkcs8Base64url);
  const signer = await Ed25519Signer.fromJWK(jwk);
  // No `alg`: the directory names algorithms differently from JOSE ("ed25519" vs "EdDSA").
  const key: PublicEd25519Jwk = { kty: 'OKP', crv: 'Ed25519', x: jwk.x!, kid: signer.keyid, use: 'sig' };
  const retired = await Promise.all(retiredPublicKeys.filter((entry) => !entry.startsWith(`${key.x}@`)).map(retiredJwk));
  const body = `${JSON.stringify({ keys: [key, ...retired] }, null, 2)}\n`;
  let signed: { step: number; headers: Promise<Record<'Signature' | 'Signature-Input', string>> } | undefined;
  return {
    body,
    key,
    signatureHeaders(now = new Date()) {
      const step = Math.floor(now.getTime() / 1000 / SIGNATURE_STEP_SECONDS);
      if (signed?.step === step) return signed.headers;
      const created = new Date(step * SIGNATURE_STEP_SECONDS * 1000);
      const expires = new Date(created.getTime() + SIGNATURE_LIFETIME_SECONDS * 1000);
      const message = { request: { method: 'GET', url: directoryUrl, headers: new Headers() }, response: { status: 200, headers: new Headers() } };
      const headers = directoryResponseHeaders(message, [signer], { created, expires }) as Promise<Record<'Signature' | 'Signature-Input', string>>;
      signed = { step, headers };
      return headers;
    },
  };
}
