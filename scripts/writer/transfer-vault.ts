// The private half of the reward-transfer commitments: for each committed night its salt and payload,
// and for each wallet committed its salt, kept by the writer outside the database, in a folder under
// the data directory that only its owner can read. The log holds only the digests; these files are
// what opens a night to an auditor, so losing them makes those nights unauditable (`npm run backup`
// copies them beside the dump). Both files are append-only JSON lines: a payload committed once keeps
// its salt, so a night asked again yields the same commitment and the log is not re-entered.
import { createHash, randomBytes } from 'node:crypto';
import { appendFileSync, chmodSync, closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { canonicalJson } from '../../contract/audit/canonical-json.ts';
import { nightCommitment, nightPayload, SALT_BYTES, walletCommitment, type NightPayload } from '../../contract/audit/commitment.ts';

export interface WalletMaterial { wallet: string; salt: string; commitment: string; recorded_at: string }
export interface NightMaterial { date: string; salt: string; payload: NightPayload; commitment: string }

/** Where a night's commitment and the wallet's come from, and where their openings are kept. */
export interface TransferVault {
  readonly demo: boolean;
  /** The wallet's commitment: the one in force when the wallet is the same, a new one when it changed. */
  wallet(address: string): WalletMaterial;
  /** The night's commitment: the one made before for the same payload, or a new one with a fresh salt. */
  night(date: string, wallet: WalletMaterial, transfers: { tx: string; amount: bigint }[]): NightMaterial;
  /** The opening of a commitment found in the log, if this vault made it. */
  openNight(commitment: string): NightMaterial | undefined;
  openWallet(commitment: string): WalletMaterial | undefined;
}

export const WALLETS = 'wallets.jsonl';
export const NIGHTS = 'nights.jsonl';

/** The vault's folder under a data directory. */
export const vaultDir = (dataDir: string): string => path.join(dataDir, 'reward-transfers');

/** The vault of a real account: files under `dir` (mode 0700, files 0600). */
export class FileVault implements TransferVault {
  readonly demo = false;
  private readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
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

  wallet(address: string): WalletMaterial {
    const wallet = address.toLowerCase();
    const latest = this.read<WalletMaterial>(WALLETS).at(-1);
    if (latest?.wallet === wallet) return latest;
    const salt = randomBytes(SALT_BYTES);
    const record = { wallet, salt: salt.toString('base64'), commitment: walletCommitment(salt, wallet), recorded_at: new Date().toISOString() };
    this.append(WALLETS, record);
    return record;
  }

  night(date: string, wallet: WalletMaterial, transfers: { tx: string; amount: bigint }[]): NightMaterial {
    const payload = nightPayload(date, wallet.wallet, wallet.commitment, transfers);
    const text = canonicalJson(payload);
    const known = this.read<NightMaterial>(NIGHTS).reverse().find((n) => n.date === date && canonicalJson(n.payload) === text);
    if (known) return known;
    const salt = randomBytes(SALT_BYTES);
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

/** The demo account's wallet: no real address (the burn range's zeros), marked by its last digits. */
export const DEMO_WALLET = '0x000000000000000000000000000000000000de30';

/**
 * The demo's vault keeps nothing: its salts are derived from the date, so the demo shows the whole
 * feature (commitments in the log, openings for `npm run audit -- disclose`) with nothing to lose.
 * Demo salts are public by construction; they open demo nights only.
 */
export class DemoVault implements TransferVault {
  readonly demo = true;
  private readonly nights = new Map<string, NightMaterial>();

  private static salt(what: string): Buffer {
    return createHash('sha256').update(`public-stats demo salt\n${what}`).digest();
  }

  wallet(address: string): WalletMaterial {
    const salt = DemoVault.salt('wallet');
    return { wallet: address.toLowerCase(), salt: salt.toString('base64'), commitment: walletCommitment(salt, address), recorded_at: '2026-01-01T00:00:00.000Z' };
  }

  night(date: string, wallet: WalletMaterial, transfers: { tx: string; amount: bigint }[]): NightMaterial {
    const salt = DemoVault.salt(date);
    const payload = nightPayload(date, wallet.wallet, wallet.commitment, transfers);
    const material = { date, salt: salt.toString('base64'), payload, commitment: nightCommitment(salt, payload) };
    this.nights.set(material.commitment, material);
    return material;
  }

  openNight(commitment: string): NightMaterial | undefined {
    return this.nights.get(commitment);
  }

  openWallet(commitment: string): WalletMaterial | undefined {
    const wallet = this.wallet(DEMO_WALLET);
    return wallet.commitment === commitment ? wallet : undefined;
  }
}
