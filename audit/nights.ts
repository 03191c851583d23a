// One night of an audit judged: its latest entry within the checkpoint the audit names (a later one
// is a correction made after the draw, which fails it), the commitment that entry carries against the
// opened salt and payload, the wallet commitment in force, and every claimed transfer against the chain.
import { nightCommitment, readSalt } from '../contract/audit/commitment.ts';
import type { PayerRow } from '../contract/audit/payers.ts';
import type { BundleNight } from './bundle.ts';
import { checkTransfer, type Chain, type UsedLogs } from './chain.ts';

export interface ParsedEntry { index: number; date: string | null; kind?: string; transfers?: unknown; wallet?: unknown; usd?: unknown }

export interface NightResult { date: string; index: number | null; reasons: string[]; transfers: number; baseUnits: bigint }

export interface NightContext {
  entries: ParsedEntry[];
  /** The size of the checkpoint the nights are judged within. */
  size: number;
  chain: Chain;
  payers: readonly PayerRow[];
  used: UsedLogs;
  /** Each claimed transaction's night, or "A and B" when two nights claim it. */
  claimedBy: Map<string, string>;
}

export const cents = (units: bigint): bigint => (units + 5_000n) / 10_000n;
export const usdText = (centsValue: bigint): string => `${centsValue / 100n}.${String(centsValue % 100n).padStart(2, '0')}`;
/** A published amount (a JSON number with at most 6 decimals) in base units, from its decimal text. */
function unitsOf(usd: number): bigint {
  const [whole, fraction = ''] = usd.toFixed(6).split('.');
  return BigInt(whole!) * 1_000_000n + BigInt(fraction.padEnd(6, '0'));
}

/** Judges `date`: `opened` is the bundle's opening of it with the wallet it names (undefined when the bundle does not open it). */
export async function judgeNight(c: NightContext, date: string, opened: { night: BundleNight; wallet: string; walletCommitment: string } | undefined): Promise<NightResult> {
  const latest = c.entries.filter((e) => e.index < c.size && e.date === date).at(-1);
  const result: NightResult = { date, index: latest?.index ?? null, reasons: [], transfers: opened?.night.payload.transfers.length ?? 0, baseUnits: 0n };
  const reasons = result.reasons;
  if (!latest) { reasons.push(`the log's first ${c.size} entries (checkpoint ${c.size}) hold no entry of this night`); return result; }
  const corrected = c.entries.find((e) => e.index >= c.size && e.date === date);
  if (corrected) reasons.push(`corrected after checkpoint ${c.size}: entry ${corrected.index} supersedes entry ${latest.index}`);
  if (!opened) { reasons.push('the bundle does not open it'); return result; }
  const { night, wallet, walletCommitment } = opened;
  if (night.log_index !== latest.index) reasons.push(`the bundle opens entry ${night.log_index}, but its latest entry within checkpoint ${c.size} is entry ${latest.index}`);
  if (night.payload.date !== date) reasons.push(`the payload is of night ${night.payload.date}`);
  if (typeof latest.transfers !== 'string') reasons.push('its entry carries no commitment to reward transfers');
  else if (nightCommitment(readSalt(night.salt)!, night.payload) !== latest.transfers) reasons.push('the salt and payload do not give the commitment in its entry');
  if (night.payload.wallet !== wallet || night.payload.wallet_commitment !== walletCommitment) reasons.push('its payload names another wallet than its section\'s');
  const inForce = c.entries.filter((e) => e.kind === 'wallet' && e.index < latest.index).at(-1);
  if (inForce?.wallet !== night.payload.wallet_commitment) reasons.push(`its payload's wallet commitment is not the one the log holds in force at entry ${latest.index}`);
  for (const [i, t] of night.payload.transfers.entries()) {
    const label = `transfer ${i + 1} of ${night.payload.transfers.length}`;
    const claimed = c.claimedBy.get(t.tx)!;
    if (claimed !== date) { reasons.push(`${label}: its transaction is claimed by nights ${claimed}`); continue; }
    const why = await checkTransfer(c.chain, c.payers, date, wallet, t, c.used, label);
    if (why) reasons.push(why);
    result.baseUnits += BigInt(t.amount);
  }
  if (typeof latest.usd === 'number') {
    const published = cents(unitsOf(latest.usd));
    const paid = cents(result.baseUnits);
    if (paid !== published) reasons.push(`the transfers add up to ${usdText(paid)} USD (${result.baseUnits} base units), not the published ${usdText(published)} USD`);
  }
  return result;
}
