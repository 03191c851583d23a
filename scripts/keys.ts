// `npm run keys`: writes any missing secret and the anon key into .env. Never overwrites a value;
// `npm run keys -- --rotate-anon-key` signs a new JWT secret and anon key (the old key stops working);
// `npm run keys -- --rotate-signing-key` makes a new Ed25519 signing key for the answers and keeps the
// old public half, with the time it was retired, in HTTP_SIG_RETIRED_PUBLIC_KEYS, so the key directory
// still lists it and what it signed before then still verifies. The log's own key (LOG_SIGNING_KEY) is
// not touched: it is the log's identity, which witnesses and readers pin.
import { envFilePath } from './lib/config.ts';
import { ensureEnvFile } from './lib/keys.ts';

const envFile = envFilePath();
const changed = await ensureEnvFile(envFile, {
  anonKey: process.argv.includes('--rotate-anon-key'),
  signingKey: process.argv.includes('--rotate-signing-key'),
});
console.log(changed.length ? `Wrote ${changed.join(', ')} to ${envFile}.` : `${envFile} already holds every key.`);
