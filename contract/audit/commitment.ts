// Salted commitments to a night's reward transfers and to the wallet they paid. The log carries only
// the digests; the salts and payloads stay with the writer until an auditor is shown chosen nights.
// Each salt is 32 random bytes (RFC 9901 §9.3 recommends at least 128 bits for salted disclosures,
// https://www.rfc-editor.org/rfc/rfc9901#section-9.3), because the few thousand recipients paid on a
// night are public on the chain: without a salt anyone could try each of them against the digest.
import { createHash } from 'node:crypto';
import { isCalendarDate } from '../dates.ts';
import { canonicalJson } from './canonical-json.ts';

export const SALT_BYTES = 32;
/** Domain separation: a digest of one kind can never stand for the other. */
const NIGHT_DOMAIN = 'public-stats reward-transfers v1\n';
const WALLET_DOMAIN = 'public-stats wallet v1\n';

export const ADDRESS = /^0x[0-9a-f]{40}$/;
export const TX_HASH = /^0x[0-9a-f]{64}$/;
const BASE_UNITS = /^(0|[1-9]\d{0,30})$/;
/** Standard base64 of a SHA-256 digest. */
export const DIGEST_BASE64 = /^[A-Za-z0-9+/]{43}=$/;

/** One reward transfer: its transaction and its amount in the token's 6-decimal base units. */
export interface Transfer { tx: string; amount: string }

/** What a night's commitment binds: the night, the wallet (and its own commitment) and its transfers. */
export interface NightPayload { v: 1; date: string; wallet: string; wallet_commitment: string; transfers: Transfer[] }

/** Amounts are kept to USDC's 6 decimals. */
export const usd6 = (n: number): number => Math.round(n * 1e6) / 1e6;

/** USD with 6 decimals as base units (the Data API gives amounts as JSON numbers). */
export function baseUnits(usd: number): bigint {
  if (!Number.isFinite(usd) || usd < 0) throw new RangeError(`a reward amount must be a finite non-negative number, got ${usd}`);
  return BigInt(Math.round(usd * 1e6));
}

const byTxThenAmount = (a: Transfer, b: Transfer) =>
  a.tx < b.tx ? -1 : a.tx > b.tx ? 1 : BigInt(a.amount) < BigInt(b.amount) ? -1 : BigInt(a.amount) > BigInt(b.amount) ? 1 : 0;

/** The payload in its one form: lowercase hex, transfers sorted by transaction, then amount. */
export function nightPayload(date: string, wallet: string, walletCommitment: string, transfers: { tx: string; amount: bigint }[]): NightPayload {
  const payload: NightPayload = {
    v: 1, date, wallet: wallet.toLowerCase(), wallet_commitment: walletCommitment,
    transfers: transfers.map((t) => ({ tx: t.tx.toLowerCase(), amount: t.amount.toString() })).sort(byTxThenAmount),
  };
  const wrong = payloadProblem(payload);
  if (wrong) throw new Error(wrong);
  return payload;
}

/** What is wrong with a payload read from a file, or undefined when it is one. */
export function payloadProblem(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'the payload is not a JSON object';
  const p = value as Record<string, unknown>;
  const keys = Object.keys(p).sort().join(',');
  if (keys !== 'date,transfers,v,wallet,wallet_commitment') return `the payload's keys are ${keys}, not date, transfers, v, wallet, wallet_commitment`;
  if (p.v !== 1) return 'the payload is not of version 1';
  if (typeof p.date !== 'string' || !isCalendarDate(p.date)) return 'the payload\'s date is not a calendar date';
  if (typeof p.wallet !== 'string' || !ADDRESS.test(p.wallet)) return 'the payload\'s wallet is not a lowercase 0x address';
  if (typeof p.wallet_commitment !== 'string' || !DIGEST_BASE64.test(p.wallet_commitment)) return 'the payload\'s wallet_commitment is not a base64 SHA-256 digest';
  if (!Array.isArray(p.transfers)) return 'the payload\'s transfers are not a list';
  for (const [i, t] of (p.transfers as unknown[]).entries()) {
    const transfer = t as Record<string, unknown>;
    if (t === null || typeof t !== 'object' || Object.keys(transfer).sort().join(',') !== 'amount,tx'
      || typeof transfer.tx !== 'string' || !TX_HASH.test(transfer.tx)
      || typeof transfer.amount !== 'string' || !BASE_UNITS.test(transfer.amount)) {
      return `transfer ${i + 1} of the payload is not {"tx": lowercase 0x hash, "amount": base units as a decimal string}`;
    }
  }
  return undefined;
}

const digest = (domain: string, salt: Uint8Array, message: string): string => {
  if (salt.length !== SALT_BYTES) throw new RangeError(`a salt is ${SALT_BYTES} bytes, not ${salt.length}`);
  return createHash('sha256').update(domain, 'utf8').update(salt).update(message, 'utf8').digest('base64');
};

/** SHA-256("public-stats reward-transfers v1\n" || salt || RFC 8785 JSON of the payload), base64. */
export const nightCommitment = (salt: Uint8Array, payload: NightPayload): string => digest(NIGHT_DOMAIN, salt, canonicalJson(payload));

/** SHA-256("public-stats wallet v1\n" || salt || the lowercase address), base64. */
export const walletCommitment = (salt: Uint8Array, wallet: string): string => digest(WALLET_DOMAIN, salt, wallet.toLowerCase());

/** A salt as files and bundles carry it: standard base64 of 32 bytes, or undefined. */
export function readSalt(text: unknown): Buffer | undefined {
  if (typeof text !== 'string' || !DIGEST_BASE64.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64');
  return bytes.length === SALT_BYTES && bytes.toString('base64') === text ? bytes : undefined;
}
