// POST <submission prefix>/add-checkpoint, to the letter of https://c2sp.org/tlog-witness: the body
// is "old <size>", at most 63 base64 consistency proof lines, a blank line and a signed checkpoint;
// the answer is a cosignature/v1 line (https://c2sp.org/tlog-cosignature), or the status the
// standard names for each way a request can fail. The old size is checked against the stored state
// and the new state stored within one per-origin turn of the state store, before the answer.
import { cosign, parseCheckpoint, parseNote, verifyNoteSignature, type Checkpoint, type Note } from '../contract/tlog/cosignature.ts';
import { verifyConsistency } from '../contract/tlog/consistency.ts';
import type { Hash } from '../contract/tlog/merkle.ts';
import { decodeBase64, equalBytes, type VerifierKey } from '../contract/tlog/vkey.ts';
import type { NoteSigningKey } from '../contract/tlog/note.ts';
import type { StateStore } from './state.ts';

const MAX_PROOF_LINES = 63;
const HASH_BYTES = 32;
const SIZE_CONTENT_TYPE = 'text/x.tlog.size';

export interface Witness {
  name: string;
  key: NoteSigningKey;
  /** The log keys trusted for each origin (the `log` lines of the policy). */
  logs: Map<string, VerifierKey[]>;
  store: StateStore;
  /** The time a cosignature carries, in POSIX seconds. */
  now: () => number;
}

export interface Answer {
  status: number;
  contentType: string;
  body: string;
  /** For the request log: what was asked, and why it was refused. */
  origin?: string;
  old?: number;
  size?: number;
  reason: string;
}

interface Request {
  old: number;
  proof: Hash[];
  note: Note;
  checkpoint: Checkpoint;
}

class BadRequest extends Error {}

function parseRequest(text: string): Request {
  const blank = text.indexOf('\n\n');
  if (blank < 0) throw new BadRequest('no blank line before the checkpoint');
  const [oldLine, ...proofLines] = text.slice(0, blank).split('\n');
  const old = /^old (0|[1-9][0-9]*)$/.exec(oldLine!);
  if (!old || !Number.isSafeInteger(Number(old[1]))) throw new BadRequest('the first line is not "old <size>"');
  if (proofLines.length > MAX_PROOF_LINES) throw new BadRequest(`more than ${MAX_PROOF_LINES} consistency proof lines`);
  const proof = proofLines.map((line) => {
    const hash = decodeBase64(line);
    if (!hash || hash.length !== HASH_BYTES) throw new BadRequest(`"${line}" is not a base64 SHA-256 hash`);
    return hash;
  });
  let note: Note;
  let checkpoint: Checkpoint;
  try {
    note = parseNote(text.slice(blank + 2));
    checkpoint = parseCheckpoint(note.body);
  } catch (error) {
    throw new BadRequest((error as Error).message);
  }
  return { old: Number(old[1]), proof, note, checkpoint };
}

/**
 * The trusted log keys' verdict on the note's signatures: a signature by a trusted key must verify
 * (signed-note: a note with a bad signature from a known key is rejected), and one must.
 */
async function signedByLog(note: Note, keys: readonly VerifierKey[]): Promise<boolean> {
  let verified = false;
  for (const signature of note.signatures) {
    for (const key of keys) {
      const valid = await verifyNoteSignature(note.body, signature, key);
      if (valid === false) return false;
      if (valid) verified = true;
    }
  }
  return verified;
}

export async function addCheckpoint(witness: Witness, text: string): Promise<Answer> {
  const plain = (status: number, reason: string, about: Partial<Answer> = {}): Answer => ({ status, contentType: 'text/plain; charset=utf-8', body: `${reason}\n`, reason, ...about });
  let request: Request;
  try {
    request = parseRequest(text);
  } catch (error) {
    if (error instanceof BadRequest) return plain(400, error.message);
    throw error;
  }
  const { old, proof, note, checkpoint } = request;
  const about = { origin: checkpoint.origin, old, size: checkpoint.size };
  const keys = witness.logs.get(checkpoint.origin);
  if (!keys) return plain(404, 'unknown log origin', about);
  if (!(await signedByLog(note, keys))) return plain(403, 'no valid signature by a trusted key of this log', about);
  if (old > checkpoint.size) return plain(400, 'the old size is larger than the checkpoint size', about);
  return witness.store.exclusive(checkpoint.origin, async (): Promise<Answer> => {
    const latest = witness.store.read(checkpoint.origin);
    const latestSize = latest?.size ?? 0;
    if (old !== latestSize) {
      return { status: 409, contentType: SIZE_CONTENT_TYPE, body: `${latestSize}\n`, reason: `the latest cosigned size is ${latestSize}`, ...about };
    }
    if (old === 0 && proof.length > 0) return plain(422, 'a proof from size 0 must be empty', about);
    if (old === checkpoint.size) {
      if (proof.length > 0) return plain(422, 'a proof between equal sizes must be empty', about);
      if (latest && !equalBytes(latest.root, checkpoint.root)) return plain(409, 'the checkpoint has the latest cosigned size but another root hash', about);
    } else if (latest && !(await verifyConsistency(latest.size, checkpoint.size, latest.root, checkpoint.root, proof))) {
      return plain(422, 'the consistency proof does not verify', about);
    }
    const now = witness.now();
    witness.store.write({ origin: checkpoint.origin, size: checkpoint.size, root: checkpoint.root, checkpoint: text.slice(text.indexOf('\n\n') + 2), cosignedAt: now });
    const line = await cosign(note.body, witness.name, witness.key.privateKey, witness.key.publicKey, now);
    return { status: 200, contentType: 'text/plain; charset=utf-8', body: line, reason: 'cosigned', ...about };
  });
}
