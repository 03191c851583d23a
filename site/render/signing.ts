// The public half of the HTTP message signature key, as a JWKS (draft-meunier-webbotauth-httpsig-
// directory). Only kty/crv/x leave this module; the private key (HTTP_SIG_PRIVATE_KEY) never does.
import { createHash, createPrivateKey, createPublicKey } from 'node:crypto';

export interface PublicEd25519Jwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  use: 'sig';
}

/** RFC 7638 thumbprint: SHA-256 over the required members in lexicographic order, no whitespace. */
export function okpThumbprint(jwk: { crv: string; kty: string; x: string }): string {
  const canonical = JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x });
  return createHash('sha256').update(canonical).digest('base64url');
}

export function publicSigningJwk(privateKeyPkcs8Base64url: string): PublicEd25519Jwk {
  const privateKey = createPrivateKey({ key: Buffer.from(privateKeyPkcs8Base64url, 'base64url'), format: 'der', type: 'pkcs8' });
  if (privateKey.asymmetricKeyType !== 'ed25519') {
    throw new Error(`HTTP_SIG_PRIVATE_KEY must be an Ed25519 key, got ${privateKey.asymmetricKeyType}.`);
  }
  // Exporting from the derived public key (not the private one) keeps `d` out by construction.
  const { x } = createPublicKey(privateKey).export({ format: 'jwk' });
  if (!x) throw new Error('HTTP_SIG_PRIVATE_KEY: the public key has no x coordinate.');
  // No `alg`: the directory draft names algorithms differently from JOSE ("ed25519" vs "EdDSA").
  return { kty: 'OKP', crv: 'Ed25519', x, kid: okpThumbprint({ crv: 'Ed25519', kty: 'OKP', x }), use: 'sig' };
}
