// `npm run keys`: writes any missing secret and the anon key into .env. Never overwrites a value;
// `npm run keys -- --rotate-anon-key` signs a new JWT secret and anon key (the old key stops working);
// `npm run keys -- --rotate-signing-key` makes a new Ed25519 signing key for the answers and keeps the
// old public half, with the time it was retired, in HTTP_SIG_RETIRED_PUBLIC_KEYS, so the key directory
// still lists it and what it signed before then still verifies. The log's own key (LOG_SIGNING_KEY) is
// not touched: it is the log's identity, which witnesses and readers pin. Nor is OPENINGS_KEY, which
// seals the openings of the nights' commitments in the database: every writer of the log needs the
// one they were sealed under.
import { parseArgs } from 'node:util';
import { envFilePath } from '../config/checkout.ts';
import { ensureEnvFile } from './secrets.ts';

const USAGE = `Usage: npm run keys [-- [--rotate-anon-key] [--rotate-signing-key]]
  (no option)           write every missing secret and the anon key into .env; never overwrite a value
  --rotate-anon-key     sign a new JWT secret and anon key (the old anon key stops working)
  --rotate-signing-key  make a new Ed25519 key for the answers' signatures; the old public key stays
                        listed, with the time it was retired, so what it signed still verifies
  --help                print this help and change nothing`;

let options;
try {
  options = parseArgs({
    options: { 'rotate-anon-key': { type: 'boolean' }, 'rotate-signing-key': { type: 'boolean' }, help: { type: 'boolean' } },
    strict: true,
    allowPositionals: false,
  }).values;
} catch (error) {
  // An option mistyped must not write secrets the caller did not ask for.
  process.stderr.write(`${(error as Error).message}\n${USAGE}\nNothing was written.\n`);
  process.exit(2);
}
if (options.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}

const envFile = envFilePath();
const changed = await ensureEnvFile(envFile, {
  anonKey: options['rotate-anon-key'] ?? false,
  signingKey: options['rotate-signing-key'] ?? false,
});
console.log(changed.length ? `Wrote ${changed.join(', ')} to ${envFile}.` : `${envFile} already holds every key.`);
