// audit/: the audit tool: the owner's disclosures and the auditor's check of them against the log
// and the chain. It imports contract/, config/, db-client/, log-reader/.
//
// `npm run audit -- <command>`: open chosen nights of the track record to one auditor, check them
// against the chain, and publish what the auditor signed. Each command says what it did in one line
// and refuses bad input with a sentence and exit 1.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { newAuditorKey, readAuditorKey, signAttestation } from '../contract/audit/attestation.ts';
import { NONCE } from '../contract/audit/control.ts';
import { isCalendarDate, todayUtc } from '../contract/dates.ts';
import { readBundle } from './bundle.ts';
import { checkBundle, type CheckOptions } from './check.ts';
import { controlMessageCommand, disclose, publish } from './owner.ts';

export const USAGE = `Usage: npm run audit -- <command>
The owner's:
  control-message --nonce N            the exact text the wallet's owner signs (EIP-191 personal_sign)
  disclose (--nights D1,D2,… | --sample K --checkpoint SIZE) --nonce N --signature 0x… --out FILE
                                       a bundle opening those nights (or the K nights checkpoint SIZE draws) to one auditor
  publish ATTESTATION                  store an auditor's attestation; the site serves it under /log/audits
The auditor's:
  check FILE --rpc URL --site BASE_URL --nonce N [--payers FILE] [--state FILE] [--checkpoint SIZE]
                                       check every night of a bundle against the site's log and the chain
  keygen --name NAME --out FILE        a new Ed25519 signed-note key; prints its verifier key
  attest FILE --rpc URL --site BASE_URL --nonce N --key KEYFILE --out ATTESTATION [--payers FILE] [--state FILE] [--checkpoint SIZE]
                                       the same check, and only when every night matches, a signed attestation
  --help                               print this help and do nothing else`;

class Refusal extends Error {}
const refuse = (sentence: string): never => { throw new Refusal(sentence); };

const OPTIONS = {
  nonce: { type: 'string' }, nights: { type: 'string' }, sample: { type: 'string' }, checkpoint: { type: 'string' },
  signature: { type: 'string' }, out: { type: 'string' }, rpc: { type: 'string' }, site: { type: 'string' },
  payers: { type: 'string' }, state: { type: 'string' }, name: { type: 'string' }, key: { type: 'string' },
} as const;

type Values = { [K in keyof typeof OPTIONS]?: string };

const need = (v: Values, name: keyof Values, command: string): string => v[name] ?? refuse(`${command} needs --${name}.`);
const whole = (text: string, name: string, min: number): number => {
  if (!/^\d+$/.test(text) || Number(text) < min || !Number.isSafeInteger(Number(text))) refuse(`--${name} must be a whole number of at least ${min}, got "${text}".`);
  return Number(text);
};
const nonceOf = (v: Values, command: string): string => {
  const nonce = need(v, 'nonce', command);
  if (!NONCE.test(nonce)) refuse('--nonce must be 8 to 128 letters, digits, dots, colons, underscores or hyphens.');
  return nonce;
};
const freshOut = (v: Values, command: string): string => {
  const out = need(v, 'out', command);
  if (existsSync(out)) refuse(`${out} exists already: name a new file.`);
  return out;
};

function checkOptions(v: Values, command: string): CheckOptions {
  const siteText = need(v, 'site', command);
  let site: URL;
  try { site = new URL(siteText); } catch { return refuse(`--site must be the site's base URL, such as https://stats.example.com, got "${siteText}".`); }
  const rpc = need(v, 'rpc', command);
  if (!/^https?:\/\//.test(rpc)) refuse(`--rpc must be a JSON-RPC URL (http or https), got "${rpc}".`);
  for (const file of [v.payers, v.state]) if (file !== undefined && file !== v.state && !existsSync(file)) refuse(`${file} does not exist.`);
  return { site, rpc, nonce: nonceOf(v, command), payersFile: v.payers, stateFile: v.state, checkpoint: v.checkpoint === undefined ? undefined : whole(v.checkpoint, 'checkpoint', 1) };
}

async function run(command: string | undefined, positional: string[], v: Values): Promise<{ out: string; code: number }> {
  switch (command) {
    case 'control-message':
      return { out: await controlMessageCommand(nonceOf(v, command)), code: 0 };
    case 'disclose': {
      const nonce = nonceOf(v, command);
      const signature = need(v, 'signature', command);
      if (!/^0x[0-9a-fA-F]{2,}$/.test(signature)) refuse('--signature must be the owner\'s signature as 0x and hex digits.');
      const out = freshOut(v, command);
      if ((v.nights === undefined) === (v.sample === undefined)) refuse('disclose takes either --nights D1,D2,… or --sample K --checkpoint SIZE.');
      if (v.nights !== undefined) {
        const nights = v.nights.split(',');
        const bad = nights.find((d) => !isCalendarDate(d));
        if (bad !== undefined) refuse(`--nights must be dates YYYY-MM-DD separated by commas; "${bad}" is not one.`);
        return { out: await disclose({ nights, nonce, signature, out }), code: 0 };
      }
      const k = whole(v.sample!, 'sample', 1);
      const checkpoint = whole(need(v, 'checkpoint', 'disclose --sample'), 'checkpoint', 1);
      process.stderr.write('Whoever gets this bundle learns the wallet, and with it the account\'s whole public history on the chain: give it to the auditor alone.\n');
      return { out: await disclose({ sample: { k, checkpoint }, nonce, signature, out }), code: 0 };
    }
    case 'publish': {
      const file = positional[0] ?? refuse('publish needs the attestation file.');
      return { out: await publish(file), code: 0 };
    }
    case 'check': {
      const file = positional[0] ?? refuse('check needs the bundle file.');
      const result = await checkBundle(readBundle(file), checkOptions(v, command));
      const ok = result.general.length === 0 && result.nights.every((n) => n.reasons.length === 0);
      return { out: result.lines.join('\n'), code: ok ? 0 : 1 };
    }
    case 'keygen': {
      const name = need(v, 'name', command);
      const out = freshOut(v, command);
      const key = await newAuditorKey(name).catch(() => refuse(`--name "${name}" cannot name a key: no spaces and no plus sign.`));
      writeFileSync(out, key.text, { mode: 0o600, flag: 'wx' });
      return { out: `wrote the private key to ${out}; its verifier key, for policies' "auditor" lines:\n${key.verifierKey}`, code: 0 };
    }
    case 'attest': {
      const file = positional[0] ?? refuse('attest needs the bundle file.');
      const keyFile = need(v, 'key', command);
      if (!existsSync(keyFile)) refuse(`${keyFile} does not exist.`);
      const key = await readAuditorKey(readFileSync(keyFile, 'utf8'));
      const out = freshOut(v, command);
      const result = await checkBundle(readBundle(file), checkOptions(v, command));
      const ok = result.general.length === 0 && result.nights.every((n) => n.reasons.length === 0);
      if (!ok) return { out: `${result.lines.join('\n')}\nno attestation written: not every night matched`, code: 1 };
      const note = await signAttestation({
        origin: result.origin, checkpointSize: result.attested.size, checkpointRoot: result.attested.root, chainId: result.chainId,
        nights: result.nights.map((n) => n.date).sort(), matched: result.nights.length, date: todayUtc(),
      }, key);
      writeFileSync(out, note, { flag: 'wx' });
      return { out: `${result.lines.join('\n')}\nwrote the attestation by ${key.name} to ${out}`, code: 0 };
    }
    default:
      return refuse(command === undefined ? 'Name a command.' : `"${command}" is not a command.`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  let code = 1;
  try {
    const { positionals, values } = parseArgs({ args: process.argv.slice(2), options: { ...OPTIONS, help: { type: 'boolean' } }, allowPositionals: true, strict: true });
    if (values.help) {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    }
    const [command, ...rest] = positionals;
    const result = await run(command, rest, values as Values);
    process.stdout.write(`${result.out}\n`);
    code = result.code;
  } catch (error) {
    const message = (error as Error).message;
    process.stderr.write(`${message}\n`);
    if (error instanceof Refusal || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) process.stderr.write(`\n${USAGE}\n`);
  }
  process.exit(code);
}
