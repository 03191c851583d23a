// The private half of the reward-transfer commitments: for each committed night its salt and payload,
// and for each wallet committed its salt. Every salt is 32 random bytes, drawn when the commitment is
// made and derived from no key. Each opening is kept in the database sealed (AES-256-GCM) under
// OPENINGS_KEY, a key of its own that signs nothing, bound to the commitment it opens: the database
// alone (a replica, a backup) reveals nothing, while every writer and the audit tool that hold the key
// open what any writer committed. The writer seals an opening in the transaction that records its
// digest, so no digest lacks its opening; `npm run audit -- disclose` unseals them for an auditor.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { canonicalJson } from './canonical-json.ts';
import { ADDRESS, DIGEST_BASE64, nightCommitment, nightPayload, payloadProblem, readSalt, SALT_BYTES, walletCommitment, type NightPayload } from './commitment.ts';

export interface WalletMaterial { wallet: string; salt: string; commitment: string; recorded_at: string }
export interface NightMaterial { date: string; salt: string; payload: NightPayload; commitment: string }

/** Where a night's commitment and the wallet's come from, and where their openings are kept. */
export interface TransferVault {
  readonly demo: boolean;
  /** The wallet's commitment: the one in force (`inForce`, the latest in the database) when it opens to the same wallet, else a new one. */
  wallet(address: string, inForce: string | undefined): Promise<WalletMaterial>;
  /** The night's commitment: `previous` (the one recorded for the night) when it opens to the same payload, else a new one. */
  night(date: string, wallet: WalletMaterial, transfers: { tx: string; amount: bigint }[], previous?: string): Promise<NightMaterial>;
  /** The opening of a commitment, undefined when none is kept; throws with a sentence when one is kept but does not open. */
  openNight(commitment: string): Promise<NightMaterial | undefined>;
  openWallet(commitment: string): Promise<WalletMaterial | undefined>;
}

export type OpeningKind = 'wallet' | 'night';

/** An opening as the database keeps it (stats.transfer_opening): sealed, under the key named by key_id. */
export interface SealedOpening { commitment: string; kind: OpeningKind; key_id: string; sealed: Buffer }

/** The database's openings, as a writer's transaction or the audit tool reads and appends them. */
export interface OpeningStore {
  find(commitment: string): Promise<SealedOpening | undefined>;
  add(opening: SealedOpening): Promise<void>;
}

/** An opening that is kept but cannot be opened: sealed under another key, or changed since it was sealed. */
export class UnopenableOpening extends Error {}

// The legacy files a writer kept its openings in before they moved into the database.
export const WALLETS = 'wallets.jsonl';
export const NIGHTS = 'nights.jsonl';

const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const SEAL_INFO = 'public-stats transfer openings seal v1';
const ID_INFO = 'public-stats transfer openings key id v1';

const hkdf = (key: Buffer, info: string, bytes: number) => Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), info, bytes));

/** The associated data: the kind and the commitment, so a sealed opening opens only in its own row. */
const boundTo = (kind: OpeningKind, commitment: string) => Buffer.from(`public-stats transfer opening v1\n${kind}\n${commitment}`, 'utf8');

/**
 * OPENINGS_KEY: 32 random bytes (base64url), made by `npm run keys`. The sealing key and the key's
 * public id are derived from it (HKDF-SHA-256, RFC 5869), each for its own use; the id tells which key
 * sealed a row without telling anything of the key.
 */
export class OpeningsKey {
  readonly id: string;
  private readonly sealing: Buffer;

  private constructor(key: Buffer) {
    this.sealing = hkdf(key, SEAL_INFO, KEY_BYTES);
    this.id = hkdf(key, ID_INFO, 8).toString('hex');
  }

  static parse(text: string, name = 'OPENINGS_KEY'): OpeningsKey {
    const key = Buffer.from(text, 'base64url');
    if (key.length !== KEY_BYTES || key.toString('base64url') !== text) {
      throw new Error(`${name} must be ${KEY_BYTES} bytes in base64url (${Math.ceil(KEY_BYTES * 4 / 3)} characters), as \`npm run keys\` makes it.`);
    }
    return new OpeningsKey(key);
  }

  /** A new key, as `npm run keys` writes it. */
  static generate(): string {
    return randomBytes(KEY_BYTES).toString('base64url');
  }

  seal(kind: 'wallet', material: WalletMaterial): SealedOpening;
  seal(kind: 'night', material: NightMaterial): SealedOpening;
  seal(kind: OpeningKind, material: WalletMaterial | NightMaterial): SealedOpening {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.sealing, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(boundTo(kind, material.commitment));
    const body = Buffer.concat([cipher.update(canonicalJson(material), 'utf8'), cipher.final()]);
    return { commitment: material.commitment, kind, key_id: this.id, sealed: Buffer.concat([iv, body, cipher.getAuthTag()]) };
  }

  /** The opening a row seals, checked to open the row's commitment; throws UnopenableOpening otherwise. */
  unseal(row: SealedOpening): WalletMaterial | NightMaterial {
    const what = `the ${row.kind === 'wallet' ? 'wallet' : 'night'} commitment ${row.commitment}`;
    if (row.key_id !== this.id) {
      throw new UnopenableOpening(`the opening of ${what} is sealed under another OPENINGS_KEY (key id ${row.key_id}; this one's is ${this.id}): use the key the writer had then.`);
    }
    let text: string;
    try {
      const iv = row.sealed.subarray(0, IV_BYTES);
      const tag = row.sealed.subarray(row.sealed.length - TAG_BYTES);
      const decipher = createDecipheriv('aes-256-gcm', this.sealing, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(boundTo(row.kind, row.commitment));
      decipher.setAuthTag(tag);
      text = Buffer.concat([decipher.update(row.sealed.subarray(IV_BYTES, row.sealed.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new UnopenableOpening(`the opening of ${what} does not authenticate under this OPENINGS_KEY: it was changed, or moved from another row, after it was sealed.`);
    }
    let material: unknown;
    try { material = JSON.parse(text); } catch { material = undefined; }
    const wrong = materialProblem(row.kind, material, row.commitment);
    if (wrong) throw new UnopenableOpening(`the opening of ${what} does not open it: ${wrong}.`);
    return material as WalletMaterial | NightMaterial;
  }
}

/** What is wrong with an opening of `kind` read from a file or a row, or undefined when it opens `commitment`. */
export function materialProblem(kind: OpeningKind, value: unknown, commitment: string): string | undefined {
  if (value === null || typeof value !== 'object') return 'it is not a JSON object';
  const m = value as Record<string, unknown>;
  const salt = readSalt(m.salt);
  if (!salt) return `its salt is not ${SALT_BYTES} bytes in base64`;
  if (typeof m.commitment !== 'string' || !DIGEST_BASE64.test(m.commitment) || m.commitment !== commitment) return 'it names another commitment';
  if (kind === 'wallet') {
    if (typeof m.wallet !== 'string' || !ADDRESS.test(m.wallet)) return 'its wallet is not a lowercase 0x address';
    if (typeof m.recorded_at !== 'string') return 'it has no recorded_at';
    return walletCommitment(salt, m.wallet) === commitment ? undefined : 'its salt and wallet do not make its commitment';
  }
  const wrong = payloadProblem(m.payload);
  if (wrong) return wrong;
  const payload = m.payload as NightPayload;
  if (m.date !== payload.date) return 'its date is not its payload\'s';
  return nightCommitment(salt, payload) === commitment ? undefined : 'its salt and payload do not make its commitment';
}

const newSalt = () => randomBytes(SALT_BYTES);

/** The vault of a real account: random salts, openings sealed under `key` in `store`. */
export class SealedVault implements TransferVault {
  readonly demo = false;
  private readonly key: OpeningsKey;
  private readonly store: OpeningStore;
  /** Told why the wallet in force could not be kept, when a new wallet commitment replaces it. */
  private readonly replacing: (why: string) => void;

  constructor(key: OpeningsKey, store: OpeningStore, replacing: (why: string) => void = () => {}) {
    this.key = key;
    this.store = store;
    this.replacing = replacing;
  }

  private async open(kind: OpeningKind, commitment: string) {
    const row = await this.store.find(commitment);
    if (!row) return undefined;
    if (row.kind !== kind) throw new UnopenableOpening(`the commitment ${commitment} is kept as a ${row.kind}'s, not a ${kind}'s.`);
    return this.key.unseal(row);
  }

  async openWallet(commitment: string): Promise<WalletMaterial | undefined> {
    return await this.open('wallet', commitment) as WalletMaterial | undefined;
  }

  async openNight(commitment: string): Promise<NightMaterial | undefined> {
    return await this.open('night', commitment) as NightMaterial | undefined;
  }

  async wallet(address: string, inForce: string | undefined): Promise<WalletMaterial> {
    const wallet = address.toLowerCase();
    if (inForce !== undefined) {
      // A wallet in force that this key cannot open is replaced, never left without an opening: every
      // night committed after it stays auditable by whoever holds the key that sealed it.
      let opened: WalletMaterial | undefined;
      try {
        opened = await this.openWallet(inForce);
        if (!opened) this.replacing(`the opening of the wallet commitment in force (${inForce}) is not in the database`);
      } catch (error) {
        if (!(error instanceof UnopenableOpening)) throw error;
        this.replacing(error.message);
      }
      if (opened?.wallet === wallet) return opened;
    }
    const salt = newSalt();
    const material = { wallet, salt: salt.toString('base64'), commitment: walletCommitment(salt, wallet), recorded_at: new Date().toISOString() };
    await this.store.add(this.key.seal('wallet', material));
    return material;
  }

  async night(date: string, wallet: WalletMaterial, transfers: { tx: string; amount: bigint }[], previous?: string): Promise<NightMaterial> {
    const payload = nightPayload(date, wallet.wallet, wallet.commitment, transfers);
    if (previous !== undefined) {
      const known = await this.openNight(previous).catch((error: Error) => {
        if (error instanceof UnopenableOpening) return undefined;
        throw error;
      });
      if (known && canonicalJson(known.payload) === canonicalJson(payload)) return known;
    }
    const salt = newSalt();
    const material = { date, salt: salt.toString('base64'), payload, commitment: nightCommitment(salt, payload) };
    await this.store.add(this.key.seal('night', material));
    return material;
  }
}
