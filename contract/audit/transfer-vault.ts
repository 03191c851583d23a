// The private half of the reward-transfer commitments: for each committed night its salt and payload,
// and for each wallet committed its salt, kept outside the database in a folder that only its owner
// can read. The writer writes them; `npm run audit -- disclose` reads them to open a night to an
// auditor, and `npm run backup` copies them beside the dump. The log holds only the digests, so losing
// these files makes those nights unauditable. Both files are append-only JSON lines.
//
// A vault made without a salt key draws every salt at random (32 bytes) and keeps it with its
// opening: a payload committed again, or the wallet in force, is found in the files and keeps its
// salt, while another vault (another machine's folder) makes commitments of its own. Given a salt key
// (saltKeyOf, made from the log's signing key), every salt is derived from it instead (HMAC-SHA-256
// over what the salt is for): a payload committed again by any vault with the same key gets the same
// salt and so the same commitment, and a disclosed salt tells nothing of any other.
import { createHmac, randomBytes } from 'node:crypto';
import { appendFileSync, chmodSync, closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { canonicalJson } from './canonical-json.ts';
import { nightCommitment, nightPayload, SALT_BYTES, walletCommitment, type NightPayload } from './commitment.ts';

export interface WalletMaterial { wallet: string; salt: string; commitment: string; recorded_at: string }
export interface NightMaterial { date: string; salt: string; payload: NightPayload; commitment: string }

/** Where a night's commitment and the wallet's come from, and where their openings are kept. */
export interface TransferVault {
  readonly demo: boolean;
  /**
   * The wallet's commitment: the one in force (`inForce`, the latest in the database) when it commits
   * to the same wallet, else a new one, which is the `generation`-th of the log and differs from every
   * commitment made before (`taken`).
   */
  wallet(address: string, inForce: string | undefined, generation: number, taken: (commitment: string) => boolean): WalletMaterial;
  /** The night's commitment: the one made before for the same payload, or a new one. */
  night(date: string, wallet: WalletMaterial, transfers: { tx: string; amount: bigint }[]): NightMaterial;
  /** The opening of a commitment found in the log, if this vault made it. */
  openNight(commitment: string): NightMaterial | undefined;
  openWallet(commitment: string): WalletMaterial | undefined;
}

export const WALLETS = 'wallets.jsonl';
export const NIGHTS = 'nights.jsonl';

/** The key the salts are derived from: made from the log's signing key for this use alone. */
export const saltKeyOf = (logSigningKey: string): Buffer =>
  createHmac('sha256', Buffer.from(logSigningKey, 'base64url')).update('public-stats reward-transfer salts v1').digest();

/** The vault of a real account: files under `dir` (mode 0700, files 0600); salts derived from `saltKey`, else random. */
export class FileVault implements TransferVault {
  readonly demo = false;
  private readonly dir: string;
  private readonly saltKey: Buffer | undefined;

  constructor(dir: string, saltKey?: Buffer) {
    this.dir = dir;
    this.saltKey = saltKey;
  }

  private file(name: string): string {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    chmodSync(this.dir, 0o700);
    return path.join(this.dir, name);
  }

  private read<T>(name: string): T[] {
    const file = this.file(name);
    if (!existsSync(file)) return [];
    return readFileSync(file, 'utf8').split('\n').filter((l) => l !== '').map((l, i) => {
      try { return JSON.parse(l) as T; } catch { throw new Error(`${file} line ${i + 1} is not JSON: the reward-transfer openings are damaged; restore them from a backup`); }
    });
  }

  /** Appends and flushes before the database commits the digest, so no digest is ever without its opening. */
  private append(name: string, record: object): void {
    const file = this.file(name);
    appendFileSync(file, `${JSON.stringify(record)}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
    const fd = openSync(file, 'r');
    try { fsyncSync(fd); } finally { closeSync(fd); }
  }

  private salt(what: string): Buffer {
    return this.saltKey ? createHmac('sha256', this.saltKey).update(what).digest() : randomBytes(SALT_BYTES);
  }

  private keepWallet(wallet: string, salt: Buffer): WalletMaterial {
    const commitment = walletCommitment(salt, wallet);
    const known = this.openWallet(commitment);
    if (known) return known;
    const record = { wallet, salt: salt.toString('base64'), commitment, recorded_at: new Date().toISOString() };
    this.append(WALLETS, record);
    return record;
  }

  wallet(address: string, inForce: string | undefined, generation: number, taken: (commitment: string) => boolean): WalletMaterial {
    const wallet = address.toLowerCase();
    const opened = inForce === undefined ? undefined : this.openWallet(inForce);
    if (opened?.wallet === wallet) return opened;
    const saltFor = (g: number) => this.salt(`wallet\n${wallet}\n${g}`);
    // A standby with the same key opens the commitment in force by deriving its salt again.
    if (this.saltKey && inForce !== undefined && generation > 0 && walletCommitment(saltFor(generation - 1), wallet) === inForce) {
      return this.keepWallet(wallet, saltFor(generation - 1));
    }
    let g = generation;
    while (taken(walletCommitment(saltFor(g), wallet))) g++;
    return this.keepWallet(wallet, saltFor(g));
  }

  night(date: string, wallet: WalletMaterial, transfers: { tx: string; amount: bigint }[]): NightMaterial {
    const payload = nightPayload(date, wallet.wallet, wallet.commitment, transfers);
    const text = canonicalJson(payload);
    const known = this.read<NightMaterial>(NIGHTS).reverse().find((n) => n.date === date && canonicalJson(n.payload) === text);
    if (known) return known;
    const salt = this.salt(`night\n${text}`);
    const record = { date, salt: salt.toString('base64'), payload, commitment: nightCommitment(salt, payload) };
    this.append(NIGHTS, record);
    return record;
  }

  openNight(commitment: string): NightMaterial | undefined {
    return this.read<NightMaterial>(NIGHTS).find((n) => n.commitment === commitment);
  }

  openWallet(commitment: string): WalletMaterial | undefined {
    return this.read<WalletMaterial>(WALLETS).find((w) => w.commitment === commitment);
  }
}
