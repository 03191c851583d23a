// `npm run keys`: writes any missing secret and the anon key into .env. Never overwrites a value;
// `npm run keys -- --rotate-anon-key` signs a new JWT secret and anon key (the old key stops working);
// `npm run keys -- --rotate-signing-key` makes a new Ed25519 signing key and keeps the old public half
// in HTTP_SIG_RETIRED_PUBLIC_KEYS, so the key directory still lists it and what it signed still verifies.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { envFilePath, type Secrets } from './lib/config.ts';
import { completeSecrets, signingPublicKey } from './lib/keys.ts';

export interface Rotation { anonKey?: boolean; signingKey?: boolean }

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
    next.HTTP_SIG_RETIRED_PUBLIC_KEYS = [...retired, signingPublicKey(current.HTTP_SIG_PRIVATE_KEY)].join(',');
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

if (import.meta.url === `file://${process.argv[1]}`) {
  const envFile = envFilePath();
  const changed = await ensureEnvFile(envFile, {
    anonKey: process.argv.includes('--rotate-anon-key'),
    signingKey: process.argv.includes('--rotate-signing-key'),
  });
  console.log(changed.length ? `Wrote ${changed.join(', ')} to ${envFile}.` : `${envFile} already holds every key.`);
}
