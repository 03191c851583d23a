// Where the writer keeps the openings of its commitments: sealed in the database under OPENINGS_KEY
// (contract/audit/transfer-vault.ts), in the transaction that records their digests. A writer that
// kept them in files under its data directory, as writers once did, moves those into the database on
// its first commit, then renames the files *.moved once the database holds every one of them.
import { existsSync, readFileSync, renameSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import type { DemoVault } from '../contract/audit/demo.ts';
import { NIGHTS, OpeningsKey, materialProblem, SealedVault, WALLETS, type NightMaterial, type OpeningKind, type OpeningStore, type SealedOpening, type TransferVault, type WalletMaterial } from '../contract/audit/transfer-vault.ts';
import type { Logger } from './log.ts';
import type { Trx } from './store.ts';

/** A source's vault for one write: bound to the write's transaction. */
export interface Openings {
  vaultIn(trx: Trx): Promise<TransferVault>;
}

/** The demo's vault keeps nothing, so every write shares it. */
export const demoOpenings = (vault: DemoVault): Openings => ({ vaultIn: async () => vault });

/** The openings in the database, as a writer's transaction reads and appends them. */
export function storeIn(trx: Trx): OpeningStore {
  return {
    async find(commitment) {
      return trx.selectFrom('stats.transfer_opening').select(['commitment', 'kind', 'key_id', 'sealed']).where('commitment', '=', commitment).executeTakeFirst();
    },
    async add(opening) {
      await trx.insertInto('stats.transfer_opening').values(opening).execute();
    },
  };
}

const FILES: [OpeningKind, string][] = [['wallet', WALLETS], ['night', NIGHTS]];

/** A real account's openings: sealed under `key`; those found in the files under `legacyDir` are moved in first. */
export class SealedOpenings implements Openings {
  private readonly key: OpeningsKey;
  private readonly legacyDir: string;
  private readonly log: Logger;
  private filesDone = false;
  /** What the files hold, read once per process. */
  private held: { kind: OpeningKind; material: WalletMaterial | NightMaterial }[] | undefined;

  /** Throws with a sentence when OPENINGS_KEY is unset or malformed. */
  constructor(openingsKey: string | undefined, legacyDir: string, log: Logger) {
    if (!openingsKey) {
      throw new Error('OPENINGS_KEY is not set: the writer seals the openings of its commitments to reward transfers under it, in the database. Run `npm run keys`, and give every writer of the log the same key.');
    }
    this.key = OpeningsKey.parse(openingsKey);
    this.legacyDir = legacyDir;
    this.log = log;
  }

  async vaultIn(trx: Trx): Promise<TransferVault> {
    if (!this.filesDone) await this.moveFiles(trx);
    return new SealedVault(this.key, storeIn(trx), (why) => this.log.warn(
      'this writer cannot open the wallet commitment in force: committing the wallet anew (a wallet entry in the log)', { why }));
  }

  /** The openings the files hold, each checked to open its commitment; a line that does not is left out and said. */
  private readFiles(): { kind: OpeningKind; material: WalletMaterial | NightMaterial }[] {
    const found = new Map<string, { kind: OpeningKind; material: WalletMaterial | NightMaterial }>();
    for (const [kind, name] of FILES) {
      const file = path.join(this.legacyDir, name);
      if (!existsSync(file)) continue;
      const lines = readFileSync(file, 'utf8').split('\n');
      lines.forEach((line, i) => {
        if (line === '') return;
        let value: unknown;
        try { value = JSON.parse(line); } catch { value = undefined; }
        const commitment = (value as { commitment?: unknown } | undefined)?.commitment;
        const wrong = typeof commitment === 'string' ? materialProblem(kind, value, commitment) : 'it names no commitment';
        if (wrong) this.log.warn('an opening in the files cannot be moved into the database: it opens nothing', { file, line: i + 1, why: wrong });
        else found.set(commitment as string, { kind, material: value as WalletMaterial | NightMaterial });
      });
    }
    return [...found.values()];
  }

  private async moveFiles(trx: Trx): Promise<void> {
    const files = FILES.map(([, name]) => path.join(this.legacyDir, name)).filter((f) => existsSync(f));
    if (files.length === 0) {
      this.filesDone = true;
      return;
    }
    const held = this.held ??= this.readFiles();
    const commitments = held.map((h) => h.material.commitment);
    const present = new Set((await trx.selectFrom('stats.transfer_opening').select('commitment')
      .where(sql<boolean>`commitment = any(${commitments})`).execute()).map((r) => r.commitment));
    const missing = held.filter((h) => !present.has(h.material.commitment));
    if (missing.length === 0) {
      // Every one is in the database, committed by an earlier write: the files have served.
      for (const file of files) renameSync(file, `${file}.moved`);
      this.log.info('the openings the files held are all in the database: renamed the files *.moved (delete them once a backup holds the database)', { dir: this.legacyDir });
      this.filesDone = true;
      return;
    }
    const sealed: SealedOpening[] = missing.map((m) => m.kind === 'wallet' ? this.key.seal('wallet', m.material as WalletMaterial) : this.key.seal('night', m.material as NightMaterial));
    await trx.insertInto('stats.transfer_opening').values(sealed).onConflict((oc) => oc.column('commitment').doNothing()).execute();
    // Counted only: an opening names the wallet and its transactions, which no log line may.
    this.log.info('moved the openings kept in files into the database, sealed under OPENINGS_KEY (the files are renamed *.moved once this write has committed)', {
      dir: this.legacyDir, wallets: missing.filter((m) => m.kind === 'wallet').length, nights: missing.filter((m) => m.kind === 'night').length,
    });
  }
}
