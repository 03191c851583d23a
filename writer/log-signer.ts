// The transparency log's one signer: the writer, with the log's own key (LOG_SIGNING_KEY), signs a
// checkpoint (https://c2sp.org/tlog-checkpoint) for each new tree, inside the transaction that
// appended the entries, and stores it beside them; the serving nodes only serve what is stored. Before
// it signs, it checks that the new tree extends the last checkpoint stored and the last one it signed
// itself (LOG_SIGNER_STATE, a file outside the database): a database that lost the log's tail (an
// older backup restored, a replica promoted without the last commits) or whose entries were rewritten
// gets no checkpoint. It halts the log instead, loudly, so that one origin never has two histories.
// The real log's origin is the one its first real checkpoint named (stats.log_origin()), whatever the
// site's URL has become since: the signer reads it before it signs a real tree, and settle() refuses a
// LOG_ORIGIN that names another.
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { base64 } from '../contract/log-key.ts';
import { logIdentity, logOrigin, withStoredLogOrigin, type Origins } from '../contract/paths.ts';
import { buildTree, type Tree } from '../contract/tlog/merkle.ts';
import { checkpointBody, importNoteSigningKey, signNote, type NoteSigningKey } from '../contract/tlog/note.ts';
import type { WriterDb } from './db.ts';
import type { Logger } from './log.ts';

type Db = Pick<WriterDb, 'selectFrom' | 'selectNoFrom' | 'insertInto'>;

/** A checkpoint signed in a transaction not yet committed. */
export interface SignedCheckpoint {
  origin: string;
  size: number;
  root: string;
  note: string;
}

/** What the signer did with a transaction's entries: signed a checkpoint, had nothing new, or refused (why). */
export type Signing = { signed: SignedCheckpoint } | { unchanged: true } | { refused: string };

/** The last checkpoint this signer signed, by origin. */
type SignerState = Record<string, { size: number; root: string }>;

const utf8 = new TextEncoder();

/** The origin the real log's first checkpoint fixed, or null while none is signed. */
export async function readStoredOrigin(db: Pick<WriterDb, 'selectNoFrom'>): Promise<string | null> {
  const row = await db.selectNoFrom(sql<string | null>`stats.log_origin()`.as('origin')).executeTakeFirstOrThrow();
  return row.origin;
}

/** Opens `file` (a directory too, read-only), runs `write` on it, and syncs it to disk before closing it. */
function synced(file: string, flags: 'w' | 'r', write?: (fd: number) => void): void {
  const fd = openSync(file, flags, 0o600);
  try {
    write?.(fd);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export class LogSigner {
  readonly #key: NoteSigningKey;
  /** The site's origin and LOG_ORIGIN, as configured. */
  readonly #origins: Pick<Origins, 'siteUrl' | 'logOrigin'>;
  /** The origin the real log's first checkpoint fixed, once read. */
  #stored: string | undefined;
  readonly #stateFile: string | undefined;
  readonly #log: Logger;
  /** The halts recorded so far, one after another (see halt). */
  #halting: Promise<void> = Promise.resolve();

  private constructor(key: NoteSigningKey, origins: Pick<Origins, 'siteUrl' | 'logOrigin'>, stateFile: string | undefined, log: Logger) {
    this.#key = key;
    this.#origins = origins;
    this.#stateFile = stateFile;
    this.#log = log;
  }

  static async create(privateKey: string, origins: Pick<Origins, 'siteUrl' | 'logOrigin'>, stateFile: string | undefined, log: Logger): Promise<LogSigner> {
    return new LogSigner(await importNoteSigningKey(privateKey, 'LOG_SIGNING_KEY'), origins, stateFile, log);
  }

  /**
   * Takes the origin the real log's first checkpoint fixed (readStoredOrigin; null while none is
   * signed) as the log's from now on. Throws, naming both, when LOG_ORIGIN names another. A site that
   * moved keeps its log's origin: said once, since what does not read the database must be told.
   */
  settle(stored: string | null): void {
    withStoredLogOrigin(this.#origins, stored);
    if (!stored || this.#stored === stored) return;
    this.#stored = stored;
    const fromSite = logOrigin(this.#origins, false);
    if (fromSite !== stored) {
      this.#log.warn(`the transparency log keeps its origin ${stored}, fixed by its first checkpoint, though SITE_URL now makes ${fromSite}: ` +
        `\`npm start\` names it everywhere by itself; a part started otherwise (docker compose's site and edge) needs LOG_ORIGIN=${stored}`);
    }
  }

  /** The log's origin and verifier key, under the origin its first real checkpoint fixed once that is read. */
  async identity(demo = false): Promise<{ origin: string; vkey: string }> {
    return logIdentity(this.#stored ? { ...this.#origins, logOrigin: this.#stored } : this.#origins, this.#key.publicKey, demo);
  }

  /** Signs a checkpoint of every entry the log holds now, unless it has one of that size or the tree does not extend what was signed before. */
  async sign(db: Db): Promise<Signing> {
    if (await db.selectFrom('stats.log_halt').select('at').limit(1).executeTakeFirst()) return { unchanged: true };
    const latest = await db.selectFrom('stats.log_checkpoint').select(['size', 'root']).orderBy('size', 'desc').limit(1).executeTakeFirst();
    // Most writes append nothing: the entries are read only when there is a new tree to sign.
    const held = await db.selectFrom('stats.log_entry').select(sql<string | null>`max(idx) + 1`.as('size')).executeTakeFirstOrThrow();
    if (Number(held.size ?? 0) === Number(latest?.size ?? 0)) return { unchanged: true };
    const entries = await db.selectFrom('stats.log_entry').select(['entry', 'is_demo']).orderBy('idx').execute();
    const demo = entries[0]!.is_demo;
    // A real tree is signed under the origin its log's first checkpoint named, whatever is configured now.
    if (!demo) this.#stored = (await readStoredOrigin(db)) ?? this.#stored;
    const tree = await buildTree(entries.map((e) => utf8.encode(e.entry)));
    const { origin, vkey } = await this.identity(demo);
    const refused = await this.#refusal(tree, origin, latest && { size: Number(latest.size), root: latest.root });
    if (refused) return { refused };
    const rootHash = await tree.root();
    const note = await signNote(checkpointBody(origin, tree.size, rootHash), origin, this.#key.privateKey, this.#key.publicKey);
    const signed = { origin, size: tree.size, root: base64(rootHash), note };
    await db.insertInto('stats.log_checkpoint').values({ size: String(signed.size), root: signed.root, note, vkey, is_demo: demo }).execute();
    return { signed };
  }

  /**
   * Records why the log stops growing; health shows it until the owner removes it. Halts are
   * recorded one after another: each row is keyed by the moment it was written (clock_timestamp(),
   * to the microsecond), which two witnesses' halts written at once on two connections can share.
   */
  halt(db: Db, reason: string): Promise<void> {
    this.#log.error(`the transparency log is halted and appends nothing: ${reason}`);
    const recorded = this.#halting.then(async () => { await db.insertInto('stats.log_halt').values({ reason }).execute(); });
    this.#halting = recorded.catch(() => {});
    return recorded;
  }

  /**
   * After the transaction that stored `signed` committed: remember it as the last this signer signed.
   * The state is replaced whole (a new file renamed over the old) and made durable before this returns:
   * the new file's bytes first, then the rename, which is on disk only once its directory is synced
   * (https://man7.org/linux/man-pages/man2/fsync.2.html). A machine that crashes right after still
   * remembers the checkpoint, so it can never sign a tree that does not extend it.
   */
  committed(signed: SignedCheckpoint): void {
    this.#log.info('signed a checkpoint of the transparency log', { origin: signed.origin, size: signed.size });
    if (!this.#stateFile) return;
    const state = { ...this.#readState(), [signed.origin]: { size: signed.size, root: signed.root } };
    const temporary = `${this.#stateFile}.tmp`;
    synced(temporary, 'w', (fd) => writeSync(fd, `${JSON.stringify(state, null, 2)}\n`));
    renameSync(temporary, this.#stateFile);
    synced(path.dirname(this.#stateFile), 'r');
  }

  async #refusal(tree: Tree, origin: string, latest: { size: number; root: string } | undefined): Promise<string | undefined> {
    if (latest && (latest.size > tree.size || base64(await tree.root(latest.size)) !== latest.root)) {
      return `the log's entries do not extend its stored checkpoint of ${latest.size} entries: its history was rewritten`;
    }
    const mine = this.#readState()[origin];
    if (!mine) return undefined;
    if (tree.size < mine.size) {
      return `the database holds ${tree.size} entries of ${origin}, but this signer already signed a checkpoint of ${mine.size}: a restore or a failover lost the log's tail`;
    }
    if (base64(await tree.root(mine.size)) !== mine.root) {
      return `the database's entries of ${origin} do not extend the checkpoint of ${mine.size} entries this signer signed: a second history`;
    }
    return undefined;
  }

  #readState(): SignerState {
    if (!this.#stateFile || !existsSync(this.#stateFile)) return {};
    try {
      return JSON.parse(readFileSync(this.#stateFile, 'utf8')) as SignerState;
    } catch (error) {
      throw new Error(`LOG_SIGNER_STATE (${this.#stateFile}) cannot be read: ${(error as Error).message}; the signer signs nothing it cannot check`);
    }
  }
}
