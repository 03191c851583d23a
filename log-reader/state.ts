// The state file (the log's key and the newest checkpoint seen), the served checkpoint's consistency
// with it, and the evidence a rewrite leaves.
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isoSeconds, isRecord } from './encoding.ts';
import { fail, Failure } from './failure.ts';
import type { Checkpoint } from './notes.ts';
import { consistencyProof, verifyConsistency } from './tree.ts';

/** The log's key (vkey), the keys it replaced, and the newest checkpoint seen. */
export interface State { vkey: string; previous_vkeys: string[]; origin: string; size: number; root: string; checkpoint: string; seen_at: string }

export function readState(file: string): State | undefined {
  if (!existsSync(file)) return undefined;
  let text: string;
  try { text = readFileSync(file, 'utf8'); } catch (error) { return fail(`the state file ${file} cannot be read (${(error as { code?: string }).code ?? (error as Error).message})`); }
  let state: unknown;
  try { state = JSON.parse(text); } catch { state = undefined; }
  const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');
  if (!isRecord(state) || typeof state.origin !== 'string' || !Number.isSafeInteger(state.size) || (state.size as number) < 0
    || typeof state.root !== 'string' || !/^[A-Za-z0-9+/]{43}=$/.test(state.root) || typeof state.seen_at !== 'string'
    || !(state.vkey === undefined || typeof state.vkey === 'string') || !(state.previous_vkeys === undefined || strings(state.previous_vkeys))) {
    return fail(`the state file ${file} is not one this verifier writes (vkey, previous_vkeys, origin, size, root, checkpoint, seen_at)`);
  }
  return {
    vkey: state.vkey ?? '', previous_vkeys: (state.previous_vkeys as string[] | undefined) ?? [], origin: state.origin, size: state.size as number,
    root: state.root, checkpoint: typeof state.checkpoint === 'string' ? state.checkpoint : '', seen_at: state.seen_at,
  };
}

export function saveState(file: string, state: State): void {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, `${JSON.stringify(state, null, 2)}\n`);
    renameSync(temporary, file);
  } catch (error) {
    rmSync(temporary, { force: true });
    fail(`the state file ${file} could not be written (${(error as { code?: string }).code ?? (error as Error).message})`);
  }
}

/**
 * Two checkpoints of one origin, both signed by the log's key, that no consistency proof joins: the
 * strongest evidence there is, written for a witness operator beside the state file. Returns the
 * sentence that names the rewrite and the file.
 */
export function writeRewriteEvidence(saved: State, now: Checkpoint, proof: Buffer[], stateFile: string): string {
  const [older, newer] = saved.size <= now.size ? [saved.size, now.size] : [now.size, saved.size];
  const evidence = {
    statement: `Two checkpoints of the log "${now.origin}", both signed by its key, that no consistency proof joins (RFC 9162 §2.1.4): the log was rewritten.`,
    saved: { seen_at: saved.seen_at, size: saved.size, root: saved.root, checkpoint: saved.checkpoint },
    served: { seen_at: isoSeconds(new Date()), size: now.size, root: now.root.toString('base64'), checkpoint: now.note },
    consistency_proof: { old_size: older, new_size: newer, hashes: proof.map((h) => h.toString('base64')), verifies: false },
  };
  const rewritten = `the log was rewritten: checkpoint ${now.size} is not consistent with checkpoint ${saved.size} seen on ${saved.seen_at}`;
  const stamp = isoSeconds(new Date()).replace(/[-:]/g, '');
  // Never over an earlier file: a second run within the same second takes the next free name.
  for (let n = 0; ; n++) {
    const file = join(dirname(stateFile), `log-rewrite-evidence-${stamp}${n ? `-${n}` : ''}.json`);
    try {
      writeFileSync(file, `${JSON.stringify(evidence, null, 2)}\n`, { flag: 'wx' });
      return `${rewritten} (the evidence, both signed checkpoints and the failed proof, is in ${file})`;
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code !== 'EEXIST' || n === 99) return `${rewritten} (the evidence could not be written to ${file}: ${code ?? (error as Error).message})`;
    }
  }
}

/** The served checkpoint extends the saved one (a line saying so), or the log was rewritten (the proof that fails). */
export type Consistency = { extends: string } | { rewritten: Buffer[] };

/**
 * The served checkpoint, signed by the log's key, against the saved one, from nothing but the two
 * and the subtree hashes `levels` reads from the served tiles for a tree of the given size: it
 * extends the saved one, or the log was rewritten; an older view (a prefix of the saved one) fails.
 */
export async function checkConsistent(saved: State, now: Checkpoint, levels: (size: number) => Promise<Buffer[][]>): Promise<Consistency> {
  if (saved.origin !== now.origin) {
    if (saved.origin === `${now.origin}/demo`) return { extends: `  the demo log seen on ${saved.seen_at} gave way to the real log` };
    return fail(`the log's origin changed from "${saved.origin}" to "${now.origin}" since the checkpoint seen on ${saved.seen_at}`);
  }
  const savedRoot = Buffer.from(saved.root, 'base64');
  const extending = { extends: `  the log extends checkpoint ${saved.size} seen on ${saved.seen_at}` };
  // One size, two roots: no tile is needed to see it.
  if (now.size === saved.size) return now.root.equals(savedRoot) ? extending : { rewritten: [] };
  if (now.size > saved.size) {
    const proof = consistencyProof(await levels(now.size), saved.size, now.size);
    return verifyConsistency(saved.size, now.size, savedRoot, now.root, proof) ? extending : { rewritten: proof };
  }
  // Smaller: a consistency proof from the tiles of the saved tree, if the site still serves them.
  let proof: Buffer[] = [];
  try {
    proof = consistencyProof(await levels(saved.size), now.size, saved.size);
  } catch (error) {
    if (!(error instanceof Failure)) throw error;
  }
  if (verifyConsistency(now.size, saved.size, now.root, savedRoot, proof)) {
    return fail(`checkpoint ${now.size} is older than checkpoint ${saved.size} seen on ${saved.seen_at}, though a prefix of it: an older view of the log (a lagging node, or a replayed answer)`);
  }
  return { rewritten: proof };
}
