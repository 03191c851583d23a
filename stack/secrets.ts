// Generates the service's secrets and its public anon key. The anon key is public by design;
// everything else here stays in `.env`, which git ignores.
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { SignJWT } from 'jose';
import { OpeningsKey } from '../contract/audit/transfer-vault.ts';
import type { Secrets } from '../config/config.ts';

const TEN_YEARS_S = 10 * 365 * 24 * 3600;

const randomSecret = (bytes: number) => randomBytes(bytes).toString('base64url');

/** An HS256 JWT with role anon, long-lived (the key is not rotated on a schedule). */
export async function signAnonKey(jwtSecret: string, issuedAt = Math.floor(Date.now() / 1000)): Promise<string> {
  return new SignJWT({ role: 'anon' })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer('public-stats')
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + TEN_YEARS_S)
    .sign(new TextEncoder().encode(jwtSecret));
}

/** The public half of an Ed25519 private key (PKCS#8 DER, base64url), as a JWK's x. */
export function signingPublicKey(privateKeyPkcs8Base64url: string): string {
  const privateKey = createPrivateKey({ key: Buffer.from(privateKeyPkcs8Base64url, 'base64url'), format: 'der', type: 'pkcs8' });
  return createPublicKey(privateKey).export({ format: 'jwk' }).x!;
}

const newEd25519Key = () => generateKeyPairSync('ed25519').privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64url');

/** Fills in whatever `existing` lacks; values already present are kept as they are. */
export async function completeSecrets(existing: Partial<Secrets>): Promise<Secrets> {
  const jwtSecret = existing.JWT_SECRET || randomSecret(48);
  const signingKey = existing.HTTP_SIG_PRIVATE_KEY || newEd25519Key();
  const logKey = existing.LOG_SIGNING_KEY || newEd25519Key();
  return {
    JWT_SECRET: jwtSecret,
    // A new secret invalidates any old key, so a key is re-signed whenever the secret is new.
    ANON_KEY: existing.JWT_SECRET && existing.ANON_KEY ? existing.ANON_KEY : await signAnonKey(jwtSecret),
    AUTHENTICATOR_PASSWORD: existing.AUTHENTICATOR_PASSWORD || randomSecret(24),
    WRITER_DB_PASSWORD: existing.WRITER_DB_PASSWORD || randomSecret(24),
    POSTGRES_PASSWORD: existing.POSTGRES_PASSWORD || randomSecret(24),
    REPLICATION_PASSWORD: existing.REPLICATION_PASSWORD || randomSecret(24),
    HTTP_SIG_PRIVATE_KEY: signingKey,
    // Always derived, so it never disagrees with the private key.
    HTTP_SIG_PUBLIC_KEY: signingPublicKey(signingKey),
    HTTP_SIG_RETIRED_PUBLIC_KEYS: existing.HTTP_SIG_RETIRED_PUBLIC_KEYS ?? '',
    // Separate from the answers' key, so rotating that one never changes the log's identity.
    LOG_SIGNING_KEY: logKey,
    LOG_PUBLIC_KEY: signingPublicKey(logKey),
    // Its own key, never derived from one that signs: the openings stay sealed whoever learns a signing key.
    OPENINGS_KEY: existing.OPENINGS_KEY || OpeningsKey.generate(),
  };
}

export interface Rotation { anonKey?: boolean; signingKey?: boolean }

/**
 * Writes whatever secret `envFile` lacks (and, when asked, a rotated anon key or signing key) into it,
 * keeping every other line; the names it wrote. `npm run keys` and `npm start` call it.
 */
export async function ensureEnvFile(envFile: string, rotate: Rotation = {}): Promise<string[]> {
  const text = existsSync(envFile) ? readFileSync(envFile, 'utf8') : '';
  const current = parseEnv(text) as Partial<Secrets>;
  const next = { ...current };
  if (rotate.anonKey) {
    delete next.JWT_SECRET;
    delete next.ANON_KEY;
  }
  if (rotate.signingKey && current.HTTP_SIG_PRIVATE_KEY) {
    const retired = (current.HTTP_SIG_RETIRED_PUBLIC_KEYS ?? '').split(',').filter(Boolean);
    next.HTTP_SIG_RETIRED_PUBLIC_KEYS = [...retired, `${signingPublicKey(current.HTTP_SIG_PRIVATE_KEY)}@${new Date().toISOString().replace(/\.\d{3}Z$/, 'Z')}`].join(',');
    delete next.HTTP_SIG_PRIVATE_KEY;
  }
  const complete = await completeSecrets(next);
  const changed = (Object.keys(complete) as (keyof Secrets)[]).filter((name) => complete[name] !== current[name]);
  if (changed.length === 0) return [];
  // Drop the lines being replaced, then append the new values.
  const kept = text.split('\n').filter((line) => !changed.some((name) => line.startsWith(`${name}=`)));
  const body = [...kept.filter((line, i) => line !== '' || i < kept.length - 1), ...changed.map((name) => `${name}=${complete[name]}`)];
  writeFileSync(envFile, body.join('\n').replace(/^\n+/, '') + '\n', { mode: 0o600 });
  return changed;
}
