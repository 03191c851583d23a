// Transparency log trust policies (https://c2sp.org/tlog-policy): the logs a checkpoint may be
// signed by, the witnesses that cosign it, and the quorum of them a checkpoint needs. Read to the
// letter: whitespace is spaces and tabs, `#` starts a comment line, names are defined before they
// are used, duplicate keys and names are refused, and there is exactly one quorum line. Every error
// names its line. This service's policies may also list `auditor <vkey>` lines: the Ed25519 note
// keys (type 0x01) whose audit attestations a verifier counts; they play no part in witnessing.
import { COSIGNATURE_V1, ED25519_NOTE, equalBytes, parseVerifierKey, type VerifierKey } from './vkey.ts';

/** The predefined name that needs no cosignature. */
export const NO_QUORUM = 'none';

export interface PolicyLog {
  vkey: string;
  /** The key: its name is the log's origin. */
  key: VerifierKey;
  url?: string;
}

export interface PolicyWitness {
  name: string;
  vkey: string;
  key: VerifierKey;
  /** The witness's submission prefix (https://c2sp.org/tlog-witness), when given. */
  url?: string;
}

export interface PolicyGroup {
  name: string;
  /** How many members must have witnessed a checkpoint (1 for `any`, all of them for `all`). */
  threshold: number;
  members: string[];
}

export interface PolicyAuditor {
  vkey: string;
  /** The auditor's key: its name is the name its attestations carry. */
  key: VerifierKey;
}

export interface Policy {
  logs: PolicyLog[];
  /** By name, in the order defined. */
  witnesses: Map<string, PolicyWitness>;
  groups: Map<string, PolicyGroup>;
  /** A witness's or group's name, or NO_QUORUM. */
  quorum: string;
  /** The auditors whose attestations count, in the order listed; nothing here is sent a checkpoint. */
  auditors: PolicyAuditor[];
}

function httpUrl(text: string): string | undefined {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:' ? text : undefined;
  } catch {
    return undefined;
  }
}

/** Reads a policy file; throws an Error whose message starts "policy line <n>: " (or names the missing quorum). */
export async function parsePolicy(text: string): Promise<Policy> {
  const logs: PolicyLog[] = [];
  const witnesses = new Map<string, PolicyWitness>();
  const groups = new Map<string, PolicyGroup>();
  const auditors: PolicyAuditor[] = [];
  let quorum: string | undefined;
  const lines = text.split('\n');
  for (const [i, line] of lines.entries()) {
    const fail = (why: string): never => { throw new Error(`policy line ${i + 1}: ${why}`); };
    if (/[\u0000-\u0008\u000b-\u001f\u007f]/u.test(line)) fail('only tab, newline and printable characters are allowed');
    const words = line.split(/[ \t]+/).filter(Boolean);
    if (words.length === 0 || words[0]!.startsWith('#')) continue;
    const [keyword, ...args] = words as [string, ...string[]];
    const defined = (name: string) => name === NO_QUORUM || witnesses.has(name) || groups.has(name);
    const key = async (vkey: string, type: number, what: string) => {
      const parsed = await parseVerifierKey(vkey).catch((error: Error) => fail(error.message));
      if (parsed.type !== type) fail(`${what} key has signature type 0x0${type}, not 0x0${parsed.type}`);
      return parsed;
    };
    switch (keyword) {
      case 'log': {
        if (args.length < 1 || args.length > 2) fail('expected "log <vkey> [<url>]"');
        const [vkey, url] = args as [string, string | undefined];
        const parsed = await key(vkey, ED25519_NOTE, 'a log');
        if (logs.some((log) => equalBytes(log.key.publicKey, parsed.publicKey))) fail('this log key is already listed');
        logs.push({ vkey, key: parsed, ...(url === undefined ? {} : { url }) });
        break;
      }
      case 'witness': {
        if (args.length < 2 || args.length > 3) fail('expected "witness <name> <vkey> [<url>]"');
        const [name, vkey, url] = args as [string, string, string | undefined];
        if (defined(name)) fail(`the name "${name}" is already defined`);
        const parsed = await key(vkey, COSIGNATURE_V1, 'a witness');
        if ([...witnesses.values()].some((w) => equalBytes(w.key.publicKey, parsed.publicKey))) fail('this witness key is already listed');
        if (url !== undefined && !httpUrl(url)) fail(`"${url}" is not an http(s) URL`);
        witnesses.set(name, { name, vkey, key: parsed, ...(url === undefined ? {} : { url }) });
        break;
      }
      case 'group': {
        if (args.length < 3) fail('expected "group <name> all|any|<k> <name>..."');
        const [name, k, ...members] = args as [string, string, ...string[]];
        if (defined(name)) fail(`the name "${name}" is already defined`);
        for (const member of members) {
          if (member === NO_QUORUM) fail(`"${NO_QUORUM}" cannot be a group member`);
          if (!defined(member)) fail(`"${member}" is not defined on an earlier line`);
        }
        if (new Set(members).size !== members.length) fail('a name is listed twice in the group');
        const threshold = k === 'all' ? members.length : k === 'any' ? 1 : /^[1-9][0-9]*$/.test(k) ? Number(k) : fail(`"${k}" is not all, any or a number`);
        if (threshold > members.length) fail(`the threshold ${threshold} is more than the ${members.length} members`);
        groups.set(name, { name, threshold, members });
        break;
      }
      case 'quorum': {
        if (args.length !== 1) fail('expected "quorum <name>"');
        if (quorum !== undefined) fail('a policy has exactly one quorum line');
        if (!defined(args[0]!)) fail(`"${args[0]}" is not defined on an earlier line`);
        quorum = args[0]!;
        break;
      }
      case 'auditor': {
        if (args.length !== 1) fail('expected "auditor <vkey>"');
        const parsed = await key(args[0]!, ED25519_NOTE, 'an auditor');
        if (auditors.some((a) => equalBytes(a.key.publicKey, parsed.publicKey))) fail('this auditor key is already listed');
        auditors.push({ vkey: args[0]!, key: parsed });
        break;
      }
      default:
        fail(`unknown keyword "${keyword}"`);
    }
  }
  if (quorum === undefined) throw new Error('the policy has no quorum line');
  return { logs, witnesses, groups, quorum, auditors };
}

/** Whether the witnesses named (those with a valid cosignature) satisfy the policy's quorum. */
export function quorumMet(policy: Policy, cosigned: ReadonlySet<string>): boolean {
  const met = (name: string): boolean => {
    if (name === NO_QUORUM) return true;
    const group = policy.groups.get(name);
    if (!group) return cosigned.has(name) && policy.witnesses.has(name);
    return group.members.filter(met).length >= group.threshold;
  };
  return met(policy.quorum);
}

/** The log keys the policy lists for one origin (a log's key name is its origin). */
export function logKeys(policy: Policy, origin: string): VerifierKey[] {
  return policy.logs.filter((log) => log.key.name === origin).map((log) => log.key);
}
