// witness/: a transparency-log witness that other people run. It imports contract/.
//
// `npm run witness -- --key FILE --name NAME --policy FILE --state DIR --listen HOST:PORT`: a
// transparency log witness (https://c2sp.org/tlog-witness) for the logs of a tlog-policy file
// (https://c2sp.org/tlog-policy). It cosigns each checkpoint that extends the last one it cosigned
// for that log (https://c2sp.org/tlog-cosignature), and never one that does not. Bad usage exits 2.
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { checkKeyName } from '../contract/log-key.ts';
import { logKeys, parsePolicy } from '../contract/tlog/policy.ts';
import { cosignerVerifierKey } from '../contract/tlog/vkey.ts';
import { KeyFileError, loadOrCreateKey } from './key.ts';
import { createWitnessServer } from './server.ts';
import { StateDirError } from './lock.ts';
import { StateStore } from './state.ts';

const USAGE = `Usage: npm run witness -- --key FILE --name NAME --policy FILE --state DIR --listen HOST:PORT
  --key FILE          the witness's Ed25519 private key (PKCS#8 DER, base64url); made, readable by you only, when missing
  --name NAME         the witness's key name, a schema-less URL such as witness.example.com/alice
  --policy FILE       a tlog-policy file: the witness cosigns for the logs on its "log" lines
  --state DIR         where the latest cosigned checkpoint of each log is kept (created when missing)
  --listen HOST:PORT  the address to serve POST /add-checkpoint on (port 0: any free port)
  --help              print this help`;

function usage(message: string): never {
  process.stderr.write(`${message}\n\n${USAGE}\n`);
  process.exit(2);
}

function parseListen(value: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(value);
  const port = Number(match?.[3]);
  if (!match || port > 65535) usage(`--listen "${value}" is not HOST:PORT`);
  return { host: match[1] ?? match[2]!, port };
}

let args;
try {
  args = parseArgs({
    options: { key: { type: 'string' }, name: { type: 'string' }, policy: { type: 'string' }, state: { type: 'string' }, listen: { type: 'string' }, help: { type: 'boolean' } },
    strict: true,
    allowPositionals: false,
  }).values;
} catch (error) {
  usage((error as Error).message);
}
if (args.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const missing = (['key', 'name', 'policy', 'state', 'listen'] as const).filter((name) => !args[name]);
if (missing.length) usage(`Missing ${missing.map((name) => `--${name}`).join(', ')}.`);
const name = args.name!;
try {
  checkKeyName(name);
} catch (error) {
  usage(`--name: ${(error as Error).message}`);
}
const listen = parseListen(args.listen!);

let policyText: string;
try {
  policyText = readFileSync(args.policy!, 'utf8');
} catch (error) {
  usage(`--policy: cannot read ${args.policy}: ${(error as Error).message}`);
}
const policy = await parsePolicy(policyText).catch((error: Error) => usage(`--policy ${args.policy}: ${error.message}`));
const logs = new Map(policy.logs.map((log) => [log.key.name, logKeys(policy, log.key.name)]));
if (logs.size === 0) usage(`--policy ${args.policy}: the policy has no "log" line, so there is no log to witness`);

const key = await loadOrCreateKey(args.key!).catch((error: Error) => (error instanceof KeyFileError ? usage(`--key: ${error.message}`) : Promise.reject(error)));
let store: StateStore;
try {
  store = StateStore.open(args.state!);
} catch (error) {
  if (error instanceof StateDirError) usage(`--state: ${error.message}`);
  throw error;
}

const server = createWitnessServer({ name, key, logs, store, now: () => Math.floor(Date.now() / 1000) }, (line) => process.stdout.write(line));
server.on('error', (error) => {
  process.stderr.write(`The witness cannot listen on ${args.listen}: ${error.message}\n`);
  store.close();
  process.exit(1);
});
server.listen(listen.port, listen.host, async () => {
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  const vkey = await cosignerVerifierKey(name, key.publicKey);
  process.stdout.write([
    key.created ? `Created a new witness key in ${args.key}.` : `Read the witness key from ${args.key}.`,
    `Witness ${name} for ${[...logs.keys()].join(', ')}; state in ${args.state}.`,
    `vkey: ${vkey}`,
    `listening on ${url} (POST ${url}/add-checkpoint)`,
    `The log's policy names it with a line such as: witness <short name> ${vkey} ${url}`,
    '',
  ].join('\n'));
});

let stopping = false;
function stop(signal: string): void {
  if (stopping) return;
  stopping = true;
  process.stdout.write(`${signal}: stopping.\n`);
  // Requests under way finish (and their state is written) before the process ends.
  server.close(() => {
    store.close();
    process.exit(0);
  });
  server.closeIdleConnections();
  setTimeout(() => server.closeAllConnections(), 5_000).unref();
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => stop(signal));
