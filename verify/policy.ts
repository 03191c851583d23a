// The witnesses: their cosignature/v1 lines (https://c2sp.org/tlog-cosignature) on a checkpoint, and
// the policy (https://c2sp.org/tlog-policy) that names them and the quorum that must cosign; and the
// auditors whose attestations count, which this service's policies list as `auditor <vkey>` lines
// (an Ed25519 note key, type 0x01).
import { verify as verifyEd25519 } from 'node:crypto';
import { utf8 } from '../log-reader/encoding.ts';
import { fail } from '../log-reader/failure.ts';
import { COSIGNATURE_V1, ED25519_NOTE, hex2, parseVkey, type Checkpoint, type Note, type NoteKey } from '../log-reader/notes.ts';

/** tlog-cosignature: the time of the witness's cosignature/v1 on the checkpoint, or undefined; one that does not verify fails. */
export function cosignedAt(checkpoint: Note, witness: NoteKey, what: string): number | undefined {
  let earliest: number | undefined;
  for (const s of checkpoint.signatures) {
    if (s.name !== witness.name || !s.id.equals(witness.id)) continue;
    // timestamped_signature: a big-endian u64 POSIX time (at most 2^63 - 1), then the Ed25519 signature.
    const time = s.bytes.length === 72 ? s.bytes.readBigUInt64BE(0) : -1n;
    const message = Buffer.from(`cosignature/v1\ntime ${time}\n${checkpoint.text}`, 'utf8');
    if (time < 0n || time >= 1n << 63n || !verifyEd25519(null, message, witness.key, s.bytes.subarray(8))) {
      fail(`${what}'s cosignature by the witness ${witness.name} does not verify`);
    }
    earliest = Math.min(earliest ?? Infinity, Number(time));
  }
  return earliest;
}

interface Group { k: number; members: string[] }
export interface Policy { logs: NoteKey[]; witnesses: Map<string, NoteKey>; groups: Map<string, Group>; quorum: string; auditors: NoteKey[] }

export function parsePolicy(bytes: Buffer, file: string): Policy {
  const wrong = (line: number, why: string): never => fail(`the policy ${file} is not a C2SP tlog-policy: line ${line} ${why}`);
  // Tab, newline, printable ASCII and any octet with the high bit set; the rest read as UTF-8.
  const control = bytes.findIndex((b) => b < 0x20 ? b !== 0x09 && b !== 0x0a : b === 0x7f);
  if (control >= 0) wrong(bytes.subarray(0, control).filter((b) => b === 0x0a).length + 1, 'holds a control character');
  let text: string;
  try { text = utf8.decode(bytes); } catch { return fail(`the policy ${file} is not UTF-8, the only encoding of names this verifier reads`); }
  const policy: Policy = { logs: [], witnesses: new Map(), groups: new Map(), quorum: '', auditors: [] };
  const defined = (name: string) => name === 'none' || policy.witnesses.has(name) || policy.groups.has(name);
  let quorumLine = 0;
  for (const [at, line] of text.split('\n').entries()) {
    const n = at + 1;
    const words = line.split(/[ \t]+/).filter((w) => w !== '');
    const [keyword, ...args] = words;
    if (keyword === undefined || keyword.startsWith('#')) continue;
    const fresh = (name: string) => { if (defined(name)) wrong(n, `defines "${name}", a name already defined`); };
    const key = (vkey: string, type: number, what: string): NoteKey => {
      const parsed = parseVkey(vkey, type);
      return typeof parsed === 'string' ? wrong(n, `has ${what} key that is not a vkey of type 0x${hex2(type)}: ${parsed}`) : parsed;
    };
    if (keyword === 'log') {
      if (args.length < 1 || args.length > 2) wrong(n, 'is not "log <vkey> [<url>]"');
      const log = key(args[0]!, ED25519_NOTE, 'a log');
      if (policy.logs.some((l) => l.raw.equals(log.raw))) wrong(n, 'lists a log key a second time');
      policy.logs.push(log);
    } else if (keyword === 'witness') {
      if (args.length < 2 || args.length > 3) wrong(n, 'is not "witness <name> <vkey> [<url>]"');
      fresh(args[0]!);
      const witness = key(args[1]!, COSIGNATURE_V1, 'a witness');
      if ([...policy.witnesses.values()].some((w) => w.raw.equals(witness.raw))) wrong(n, 'lists a witness key a second time');
      policy.witnesses.set(args[0]!, witness);
    } else if (keyword === 'group') {
      if (args.length < 3) wrong(n, 'is not "group <name> all|any|<k> <name>..."');
      const [name, threshold, ...members] = args as [string, string, ...string[]];
      fresh(name);
      for (const [i, member] of members.entries()) {
        if (member === 'none' || !defined(member)) wrong(n, `names "${member}", which no earlier line defines as a witness or group`);
        if (members.indexOf(member) !== i) wrong(n, `lists "${member}" twice`);
      }
      const k = threshold === 'all' ? members.length : threshold === 'any' ? 1 : /^[1-9][0-9]*$/.test(threshold) ? Number(threshold) : 0;
      if (k < 1 || k > members.length) wrong(n, `has the threshold "${threshold}", not all, any or a number from 1 to ${members.length}`);
      policy.groups.set(name, { k, members });
    } else if (keyword === 'quorum') {
      if (args.length !== 1) wrong(n, 'is not "quorum <name>"');
      if (quorumLine) wrong(n, `is a second quorum line (the first is line ${quorumLine})`);
      if (!defined(args[0]!)) wrong(n, `names "${args[0]}", which no earlier line defines`);
      policy.quorum = args[0]!;
      quorumLine = n;
    } else if (keyword === 'auditor') {
      if (args.length !== 1) wrong(n, 'is not "auditor <vkey>"');
      const auditor = key(args[0]!, ED25519_NOTE, 'an auditor');
      if (policy.auditors.some((a) => a.raw.equals(auditor.raw))) wrong(n, 'lists an auditor key a second time');
      policy.auditors.push(auditor);
    } else {
      wrong(n, `starts with "${keyword}", not log, witness, group, quorum or auditor`);
    }
  }
  if (!quorumLine) fail(`the policy ${file} is not a C2SP tlog-policy: it has no quorum line`);
  return policy;
}

/** Whether the named witness or group (the quorum by default) witnessed, given the witnesses that cosigned: k of its n members. */
export function quorumMet(policy: Policy, cosigned: Set<string>, name = policy.quorum): boolean {
  if (name === 'none') return true;
  const group = policy.groups.get(name);
  if (!group) return cosigned.has(name);
  return group.members.filter((member) => quorumMet(policy, cosigned, member)).length >= group.k;
}

/** When the quorum had cosigned: the earliest cosignature time by which the witnesses that had cosigned satisfy it. */
export function quorumTime(policy: Policy, times: Map<string, number>): number | undefined {
  const cosigned = new Set<string>();
  for (const [name, time] of [...times].sort((a, b) => a[1] - b[1])) {
    cosigned.add(name);
    if (quorumMet(policy, cosigned)) return time;
  }
  return undefined;
}

/** The policy's witnesses that cosigned the checkpoint, with the time of each one's cosignature. */
export function cosignatures(policy: Policy, checkpoint: Note, what: string): Map<string, number> {
  const times = new Map<string, number>();
  for (const [name, key] of policy.witnesses) {
    const time = cosignedAt(checkpoint, key, what);
    if (time !== undefined) times.set(name, time);
  }
  return times;
}

export function checkQuorum(policy: Policy, checkpoint: Checkpoint, what: string): Map<string, number> {
  const times = cosignatures(policy, checkpoint, what);
  if (!quorumMet(policy, new Set(times.keys()))) {
    fail(`${what} of ${checkpoint.size} entries is not cosigned by the policy's quorum "${policy.quorum}" (cosigned by ${[...times.keys()].join(', ') || 'no witness of the policy'})`);
  }
  return times;
}

export const witnessList = (times: Map<string, number>) => [...times.keys()].join(', ');
