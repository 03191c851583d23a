// A night's commitment to the reward transfers that paid it, written in the same transaction as the
// rest of the write, so it enters the log with the night (the log appends at the end of every write).
// Each commitment's opening is sealed into the database in that transaction too, before its digest,
// so no digest is ever without its opening. Only nights not yet in the log are committed: an entry is
// never re-entered to gain a commitment late.
import type { NightTransfers, Source } from './source.ts';
import * as store from './store.ts';

/** The commitment recorded for the night, if any: reused when the night is committed again to the same transfers. */
async function recordedFor(trx: store.Trx, date: string): Promise<string | undefined> {
  return (await trx.selectFrom('stats.night_transfers').select('commitment').where('date', '=', date).executeTakeFirst())?.commitment;
}

/** Commits the night's transfers (the opening first); false when the night is logged already or has not come. */
export async function commitNight(trx: store.Trx, source: Source, date: string, today: string, isDemo: boolean, found?: NightTransfers | null): Promise<boolean> {
  const vault = await source.openings.vaultIn(trx);
  const transfers = found === undefined ? await source.rewardTransfers(date, today) : found;
  if (transfers === null || await store.nightLogged(trx, date)) return false;
  const inForce = (await store.walletCommitments(trx)).at(-1);
  const wallet = await vault.wallet(transfers.wallet, inForce);
  if (wallet.commitment !== inForce) await store.recordWalletCommitment(trx, wallet.commitment, isDemo);
  const night = await vault.night(date, wallet, transfers.transfers, await recordedFor(trx, date));
  await store.upsertNightTransfers(trx, date, night.commitment, isDemo);
  return true;
}
