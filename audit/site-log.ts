// The site's log as an auditor reads it: the latest checkpoint, verified by the log key (taken from
// the auditor's policy when given one, else from the auditor's state file, else, said out loud, from
// the site itself), every tile hashing to it, consistency with the auditor's earlier state, and with
// a policy the witnesses' quorum on each checkpoint the audit rests on
// (https://c2sp.org/tlog-policy, https://c2sp.org/tlog-cosignature).
import { readFileSync } from 'node:fs';
import { verifyCosignature } from '../contract/tlog/cosignature.ts';
import { logKeys, parsePolicy, quorumMet, type Policy } from '../contract/tlog/policy.ts';
import { readListing } from '../log-reader/archive.ts';
import { demoKeys, ED25519_NOTE, parseVkey, readCheckpoint, vkeyOf, type Checkpoint, type NoteKey } from '../log-reader/notes.ts';
import { checkConsistent, readState, saveState } from '../log-reader/state.ts';
import { getText, readLog, type Log } from '../log-reader/tiles.ts';

export interface SiteLogOptions { site: URL; stateFile?: string; policyFile?: string }

export interface SiteLog {
  log: Log;
  checkpoint: Checkpoint & { key: NoteKey };
  /** The checkpoint's note, as served. */
  note: string;
  policy: Policy | undefined;
  prefix: string;
  /** Where the log key came from, when it was not the auditor's own policy or state: said in the report. */
  keyFrom: string | undefined;
  /** The sizes of every checkpoint the site keeps. */
  sizes: number[];
}

export const readPolicyFile = async (file: string): Promise<Policy> => {
  try {
    return await parsePolicy(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`--policy ${file}: ${(error as Error).message}`);
  }
};

/** Reads and verifies the site's log; failures that concern the whole audit are pushed to `general`. */
export async function readSiteLog(o: SiteLogOptions, demo: boolean, general: string[]): Promise<SiteLog> {
  const prefix = demo ? '/log/demo' : '/log';
  const policy = o.policyFile ? await readPolicyFile(o.policyFile) : undefined;
  const listing = await readListing(o.site, prefix, demo);
  const saved = o.stateFile ? readState(o.stateFile) : undefined;
  const note = await getText(o.site, `${prefix}/checkpoint`, 'the checkpoint');
  let keys: NoteKey[];
  let keyFrom: string | undefined;
  if (policy) {
    keys = policy.logs.map((l) => parseVkey(l.vkey, ED25519_NOTE)).filter((k): k is NoteKey => typeof k !== 'string');
    if (keys.length === 0) throw new Error(`the policy ${o.policyFile} lists no log key`);
  } else {
    const pinnedText = saved?.vkey ?? (typeof listing.vkey === 'string' ? listing.vkey : undefined);
    const pinned = pinnedText === undefined ? 'no key' : parseVkey(pinnedText, ED25519_NOTE);
    if (typeof pinned === 'string') throw new Error(`the log key to check against is not a verifier key: ${pinned}`);
    keys = [pinned];
    if (!saved) keyFrom = `the log key ${vkeyOf(pinned)} is the one the site itself names: pass --policy FILE (or --state FILE from an earlier check) to check against a key you trust`;
  }
  const base = demo ? keys.flatMap((k) => (k.name.endsWith('/demo') ? [k] : demoKeys([k]))) : keys;
  const checkpoint = readCheckpoint(note, 'the checkpoint', base);
  if (policy && logKeys(policy, checkpoint.origin).length === 0 && !demo) general.push(`the policy lists no log key named ${checkpoint.origin}, the origin the site serves`);
  const cache = new Map<string, Buffer>();
  const log = await readLog(o.site, prefix, checkpoint, cache);
  if (saved) {
    const consistency = await checkConsistent(saved, checkpoint, async (size) => (size === checkpoint.size ? log.levels : (await readLog(o.site, prefix, { ...checkpoint, size }, cache)).levels));
    if ('rewritten' in consistency) general.push(`the site's log is a fork of the one in ${o.stateFile}: checkpoint ${checkpoint.size} is not consistent with checkpoint ${saved.size} seen on ${saved.seen_at}`);
  }
  return { log, checkpoint, note, policy, prefix, keyFrom, sizes: listing.sizes };
}

/** Whether a checkpoint note carries cosignatures, valid for its body, of witnesses meeting the policy's quorum. */
export async function witnessedByQuorum(note: string, policy: Policy): Promise<boolean> {
  const split = note.indexOf('\n\n');
  const body = note.slice(0, split + 1);
  const lines = note.slice(split + 2).split('\n').filter((l) => l !== '');
  const cosigned = new Set<string>();
  for (const [name, witness] of policy.witnesses) {
    for (const line of lines) if (await verifyCosignature(body, line, witness.key)) cosigned.add(name);
  }
  return quorumMet(policy, cosigned);
}

/** The archived note of checkpoint `size` (with the cosignatures the site holds), or undefined when it keeps none. */
export async function archivedCheckpoint(site: SiteLog, siteUrl: URL, size: number): Promise<string | undefined> {
  if (size === site.checkpoint.size) return site.note;
  try {
    return await getText(siteUrl, `${site.prefix}/checkpoint/${size}`, `checkpoint ${size}`);
  } catch {
    return undefined;
  }
}

/** Remembers the verified checkpoint in the auditor's state file, for the next check's consistency. */
export function rememberCheckpoint(file: string, site: SiteLog): void {
  saveState(file, {
    vkey: vkeyOf(site.checkpoint.key), previous_vkeys: [], origin: site.checkpoint.origin, size: site.checkpoint.size,
    root: site.checkpoint.root.toString('base64'), checkpoint: site.note, seen_at: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
  });
}
