// audit/: the audit tool: the owner's disclosures and the auditor's check of them against the log
// and the chain. It imports contract/, config/, db-client/, log-reader/.
//
// `npm run audit -- <command>`: begin an audit in the log, open the nights it chose to its auditor,
// check them against the chain, and publish what the auditor signed, pass or fail. Each command says what it did in one line
// and refuses bad input with a sentence and exit 1.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { newAuditorKey, readAuditorKey, signAttestation } from '../contract/audit/attestation.ts';
import { AUDIT_NONCE, NONCE_SHA256 } from '../contract/audit/opening.ts';
import { isCalendarDate, todayUtc } from '../contract/dates.ts';
import { readBundle } from './bundle.ts';
import { checkBundle, NoAudit, type CheckOptions } from './check.ts';
import { disclose } from './disclose.ts';
import { controlMessageCommand, openAudit, publish } from './owner.ts';

export const USAGE = `Usage: npm run audit -- <command>
An audit begins in the log: the auditor picks a secret nonce (32 to 128 letters, digits, dots, colons,
underscores or hyphens: 32 random hex digits, say) and gives the owner its SHA-256 (hex), a checkpoint
the witnesses cosigned, and how many nights to draw; the auditor reveals the nonce once a cosigned
checkpoint holds the opening.
The owner's:
  open --auditor VKEY --nonce-sha256 HEX --checkpoint SIZE (--sample K | --nights D1,D2,…)
                                       append the audit's opening to the log (the writer signs it with its next write)
  control-message --nonce N [--wallet ADDRESS]
                                       the exact text the wallet's owner signs (EIP-191 personal_sign)
  disclose --nonce N --signature 0x… [--signature ADDRESS:0x… …] --out FILE
                                       the bundle opening the nights the audit chose, to its auditor alone
  publish ATTESTATION                  store an auditor's attestation, pass or fail; the site serves it under /log/audits
The auditor's:
  keygen --name NAME --out FILE        a new Ed25519 signed-note key; prints its verifier key
  check FILE --rpc URL --site BASE_URL --nonce N [--checkpoint SIZE] [--policy FILE] [--payers FILE] [--state FILE]
                                       check every night the audit chose against the site's log and the chain;
                                       --checkpoint is required for a drawn audit; with --policy the log key comes
                                       from your policy and the witnesses' quorum must have cosigned the checkpoints
  attest FILE --key KEYFILE --out ATTESTATION (and check's options)
                                       the same check, then a signed attestation of its outcome, pass or fail
                                       (exit 0 on pass, 1 on fail)
  --help                               print this help and do nothing else`;

class Refusal extends Error {}
const refuse = (sentence: string): never => { throw new Refusal(sentence); };

const OPTIONS = {
  nonce: { type: 'string' }, nights: { type: 'string' }, sample: { type: 'string' }, checkpoint: { type: 'string' },
  signature: { type: 'string', multiple: true }, out: { type: 'string' }, rpc: { type: 'string' }, site: { type: 'string' },
  payers: { type: 'string' }, state: { type: 'string' }, name: { type: 'string' }, key: { type: 'string' },
  policy: { type: 'string' }, auditor: { type: 'string' }, 'nonce-sha256': { type: 'string' }, wallet: { type: 'string' },
} as const;

type Values = { [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K] extends { multiple: true } ? string[] : string };

const need = <K extends keyof Values>(v: Values, name: K, command: string): NonNullable<Values[K]> => v[name] ?? refuse(`${command} needs --${name}.`);
const whole = (text: string, name: string, min: number): number => {
  if (!/^\d+$/.test(text) || Number(text) < min || !Number.isSafeInteger(Number(text))) refuse(`--${name} must be a whole number of at least ${min}, got "${text}".`);
  return Number(text);
};
const nonceOf = (v: Values, command: string): string => {
  const nonce = need(v, 'nonce', command);
  if (!AUDIT_NONCE.test(nonce)) refuse('--nonce must be 32 to 128 letters, digits, dots, colons, underscores or hyphens (at least 128 random bits: 32 hex digits, say).');
  return nonce;
};
const freshOut = (v: Values, command: string): string => {
  const out = need(v, 'out', command);
  if (existsSync(out)) refuse(`${out} exists already: name a new file.`);
  return out;
};
const datesOf = (text: string): string[] => {
  const nights = text.split(',');
  const bad = nights.find((d) => !isCalendarDate(d));
  if (bad !== undefined) refuse(`--nights must be dates YYYY-MM-DD separated by commas; "${bad}" is not one.`);
  return nights;
};

function checkOptions(v: Values, command: string): CheckOptions {
  const siteText = need(v, 'site', command);
  let site: URL;
  try { site = new URL(siteText); } catch { return refuse(`--site must be the site's base URL, such as https://stats.example.com, got "${siteText}".`); }
  const rpc = need(v, 'rpc', command);
  if (!/^https?:\/\//.test(rpc)) refuse(`--rpc must be a JSON-RPC URL (http or https), got "${rpc}".`);
  for (const file of [v.payers, v.policy]) if (file !== undefined && !existsSync(file)) refuse(`${file} does not exist.`);
  return {
    site, rpc, nonce: nonceOf(v, command), payersFile: v.payers, stateFile: v.state, policyFile: v.policy,
    checkpoint: v.checkpoint === undefined ? undefined : whole(v.checkpoint, 'checkpoint', 1),
  };
}

function signaturesOf(v: Values): { signature: string; signatures: Map<string, string> } {
  const signatures = new Map<string, string>();
  let signature: string | undefined;
  for (const given of need(v, 'signature', 'disclose')) {
    const m = /^(?:(0x[0-9a-fA-F]{40}):)?(0x[0-9a-fA-F]{2,})$/.exec(given);
    if (!m) refuse('--signature must be the owner\'s signature as 0x and hex digits, or ADDRESS:0x… for an earlier wallet.');
    if (m![1]) signatures.set(m![1].toLowerCase(), m![2]!);
    else if (signature !== undefined) refuse('give one --signature without an address (the wallet paid now); name earlier wallets as ADDRESS:0x….');
    else signature = m![2]!;
  }
  return { signature: signature ?? refuse('disclose needs --signature 0x…, the control signature of the wallet paid now.'), signatures };
}

async function run(command: string | undefined, positional: string[], v: Values): Promise<{ out: string; code: number }> {
  switch (command) {
    case 'open': {
      const auditor = need(v, 'auditor', command);
      const nonceSha256 = need(v, 'nonce-sha256', command).toLowerCase();
      if (!NONCE_SHA256.test(nonceSha256)) refuse('--nonce-sha256 must be the SHA-256 of the auditor\'s nonce: 64 hex digits.');
      const checkpoint = whole(need(v, 'checkpoint', command), 'checkpoint', 1);
      if ((v.nights === undefined) === (v.sample === undefined)) refuse('open takes either --sample K (nights drawn at random) or --nights D1,D2,… (nights you name).');
      const chosen = v.sample !== undefined ? { sample: whole(v.sample, 'sample', 1) } : { nights: [...new Set(datesOf(v.nights!))].sort() };
      return { out: await openAudit({ auditor, nonceSha256, checkpoint, ...chosen }), code: 0 };
    }
    case 'control-message': {
      if (v.wallet !== undefined && !/^0x[0-9a-fA-F]{40}$/.test(v.wallet)) refuse('--wallet must be a 0x address of 40 hex digits.');
      return { out: await controlMessageCommand(nonceOf(v, command), v.wallet?.toLowerCase()), code: 0 };
    }
    case 'disclose': {
      const nonce = nonceOf(v, command);
      const { signature, signatures } = signaturesOf(v);
      const out = freshOut(v, command);
      process.stderr.write('Whoever gets this bundle learns the wallet, and with it the account\'s whole public history on the chain: give it to the auditor alone.\n');
      return { out: await disclose({ nonce, signature, signatures, out }), code: 0 };
    }
    case 'publish': {
      const file = positional[0] ?? refuse('publish needs the attestation file.');
      return { out: await publish(file), code: 0 };
    }
    case 'check': {
      const file = positional[0] ?? refuse('check needs the bundle file.');
      const result = await checkBundle(readBundle(file), checkOptions(v, command));
      return { out: result.lines.join('\n'), code: result.pass ? 0 : 1 };
    }
    case 'keygen': {
      const name = need(v, 'name', command);
      const out = freshOut(v, command);
      const key = await newAuditorKey(name).catch(() => refuse(`--name "${name}" cannot name a key: no spaces and no plus sign.`));
      writeFileSync(out, key.text, { mode: 0o600, flag: 'wx' });
      return { out: `wrote the private key to ${out}; its verifier key, for policies' "auditor" lines and the owner's open command:\n${key.verifierKey}`, code: 0 };
    }
    case 'attest': {
      const file = positional[0] ?? refuse('attest needs the bundle file.');
      const keyFile = need(v, 'key', command);
      if (!existsSync(keyFile)) refuse(`${keyFile} does not exist.`);
      const key = await readAuditorKey(readFileSync(keyFile, 'utf8'));
      const out = freshOut(v, command);
      const result = await checkBundle(readBundle(file), { ...checkOptions(v, command), auditor: key.verifierKey });
      const note = await signAttestation({
        origin: result.origin, logKey: result.logKey, checkpointSize: result.attested.size, checkpointRoot: result.attested.root,
        opening: result.opening, drawn: result.drawn, chainId: result.chainId, payersSha256: result.payersSha256,
        nights: result.nights.map((n) => ({ date: n.date, index: n.index, pass: result.general.length === 0 && n.reasons.length === 0 })),
        result: result.pass ? 'pass' : 'fail', date: todayUtc(),
      }, key);
      writeFileSync(out, note, { flag: 'wx' });
      return { out: `${result.lines.join('\n')}\nwrote the attestation by ${key.name} to ${out}: ${result.pass ? 'pass' : 'fail'}; the owner publishes it either way`, code: result.pass ? 0 : 1 };
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
    if (error instanceof NoAudit) process.stderr.write('nothing can be attested: the audit is not the one this nonce opened\n');
    if (error instanceof Refusal || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) process.stderr.write(`\n${USAGE}\n`);
  }
  process.exit(code);
}
