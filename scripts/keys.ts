// `npm run keys`: writes any missing secret and the anon key into .env. Never overwrites a value;
// `npm run keys -- --rotate-anon-key` signs a new JWT secret and anon key (the old key stops working).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { envFilePath, type Secrets } from './lib/config.ts';
import { completeSecrets } from './lib/keys.ts';

export async function ensureEnvFile(envFile: string, rotateAnonKey = false): Promise<string[]> {
  const text = existsSync(envFile) ? readFileSync(envFile, 'utf8') : '';
  const current = parseEnv(text) as Partial<Secrets>;
  if (rotateAnonKey) {
    delete current.JWT_SECRET;
    delete current.ANON_KEY;
  }
  const complete = await completeSecrets(current);
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
  const changed = await ensureEnvFile(envFile, process.argv.includes('--rotate-anon-key'));
  console.log(changed.length ? `Wrote ${changed.join(', ')} to ${envFile}.` : `${envFile} already holds every key.`);
}
