// A night's commitment to the reward transfers that paid it, written in the same transaction as the
// rest of the write, so it enters the log with the night (the log appends at the end of every write).
// Only nights not yet in the log are committed: an entry is never re-entered to gain a commitment late.
import type { NightTransfers, Source } from './source.ts';
import * as store from './store.ts';

/** Commits the night's transfers (the vault keeps the opening first); false when the night is logged already or has not come. */
export async function commitNight(trx: store.Trx, source: Source, date: string, today: string, isDemo: boolean, found?: NightTransfers | null): Promise<boolean> {
  const transfers = found === undefined ? await source.rewardTransfers(date, today) : found;
  if (transfers === null || await store.nightLogged(trx, date)) return false;
  const committed = await store.walletCommitments(trx);
  const inForce = committed.at(-1);
  const wallet = source.vault.wallet(transfers.wallet, inForce, committed.length, (c) => committed.includes(c));
  if (wallet.commitment !== inForce) await store.recordWalletCommitment(trx, wallet.commitment, isDemo);
  const night = source.vault.night(date, wallet, transfers.transfers);
  await store.upsertNightTransfers(trx, date, night.commitment, isDemo);
  return true;
}
