// The demo's reward transfers and the commitments to them, made from the date alone: the writer's
// demo source commits to them, and `npm run audit -- disclose` makes them again to open a demo night,
// so the demo shows the whole feature (commitments in the log, openings for an auditor) with nothing
// to keep or lose.
import { createHash } from 'node:crypto';
import { addDays, DAY_MS, midnightMs } from '../dates.ts';
import { baseUnits, nightCommitment, nightPayload, usd6, walletCommitment } from './commitment.ts';
import type { NightMaterial, TransferVault, WalletMaterial } from './transfer-vault.ts';

const EPOCH = Date.UTC(2026, 0, 1);

/** The demo's day number: days since its epoch, of which every demo figure is a function. */
export const demoDay = (date: string): number => Math.round((midnightMs(date) - EPOCH) / DAY_MS);

/** What the demo account earns on activity day `date`; it is paid as the payout dated the next day. */
export function demoEarnings(date: string): number {
  const n = demoDay(date);
  return usd6(41 + 13 * Math.sin(n * 0.9) + 6 * Math.cos(n * 0.37));
}

/** The demo's payout that settled at 00:00 UTC on `payoutDate`. */
export const demoPayout = (payoutDate: string): number => demoEarnings(addDays(payoutDate, -1));

/** The demo account's wallet: no real address (the burn range's zeros), marked by its last digits. */
export const DEMO_WALLET = '0x000000000000000000000000000000000000de30';

/** The night's reward transfers: one paying the whole payout, its hash made from the date: no real transaction. */
export function demoNightTransfers(payoutDate: string): { tx: string; amount: bigint }[] {
  const tx = `0x${createHash('sha256').update(`public-stats demo reward transfer\n${payoutDate}`).digest('hex')}`;
  return [{ tx, amount: baseUnits(demoPayout(payoutDate)) }];
}

/**
 * The demo's vault keeps nothing: its salts are derived from the date, so a demo night is opened by
 * committing to it again. Demo salts are public by construction; they open demo nights only.
 */
export class DemoVault implements TransferVault {
  readonly demo = true;
  private readonly nights = new Map<string, NightMaterial>();

  private static salt(what: string): Buffer {
    return createHash('sha256').update(`public-stats demo salt\n${what}`).digest();
  }

  private walletOf(address: string): WalletMaterial {
    const salt = DemoVault.salt(`wallet\n${address.toLowerCase()}`);
    return { wallet: address.toLowerCase(), salt: salt.toString('base64'), commitment: walletCommitment(salt, address), recorded_at: '2026-01-01T00:00:00.000Z' };
  }

  async wallet(address: string): Promise<WalletMaterial> {
    return this.walletOf(address);
  }

  async night(date: string, wallet: WalletMaterial, transfers: { tx: string; amount: bigint }[]): Promise<NightMaterial> {
    const salt = DemoVault.salt(date);
    const payload = nightPayload(date, wallet.wallet, wallet.commitment, transfers);
    const material = { date, salt: salt.toString('base64'), payload, commitment: nightCommitment(salt, payload) };
    this.nights.set(material.commitment, material);
    return material;
  }

  async openNight(commitment: string): Promise<NightMaterial | undefined> {
    return this.nights.get(commitment);
  }

  async openWallet(commitment: string): Promise<WalletMaterial | undefined> {
    const wallet = this.walletOf(DEMO_WALLET);
    return wallet.commitment === commitment ? wallet : undefined;
  }
}
