// The chain's side of an audit, read through any JSON-RPC node the auditor trusts, with viem
// (https://viem.sh): a night's transfers are ERC-20 Transfer events (decoded with viem's erc20Abi and
// parseEventLogs, never by hand) in successful transactions, sent by a listed payer in a listed token
// to the wallet, mined within the night; and the wallet's owner signed the auditor's message, checked
// by viem's verifyMessage: an EOA's address recovered from the signature, or a contract wallet's
// EIP-1271 isValidSignature (https://eips.ethereum.org/EIPS/eip-1271) accepting it. A payer row that
// requires an event (contract/audit/payers.ts) counts a Transfer only beside that event, emitted by
// the payer in the same transaction for the wallet, decoded from the row's ABI item by parseEventLogs:
// a sponsorship contract's refund to a sponsor is a Transfer from the same payer without it.
import { createPublicClient, erc20Abi, http, parseEventLogs, type Hex, type Log, type PublicClient } from 'viem';
import type { Transfer } from '../contract/audit/commitment.ts';
import { countsAsReward, payerRows, type PayerRow } from '../contract/audit/payers.ts';
import { DAY_MS, midnightMs } from '../contract/dates.ts';

export interface Chain { client: PublicClient; chainId: number }

export async function connectChain(rpc: string): Promise<Chain> {
  const client = createPublicClient({ transport: http(rpc, { retryCount: 2, timeout: 30_000 }) });
  try {
    return { client, chainId: await client.getChainId() };
  } catch (error) {
    throw new Error(`the chain node at --rpc does not answer eth_chainId (${(error as Error).message.split('\n')[0]})`);
  }
}

/** A Transfer log already counted, by transaction and log index, so no log pays two claims. */
export type UsedLogs = Set<string>;

/** Under which of `rows` a Transfer of `amount` to `wallet` counts: true for a row that requires no
 * event, else the key of an unused log of a row's event for the wallet (and that amount, when the row
 * names its amount argument); undefined when none does. */
function rewardProof(rows: readonly PayerRow[], logs: readonly Log[], wallet: string, amount: bigint, used: UsedLogs, tx: string): true | string | undefined {
  if (rows.some((r) => !r.event)) return true;
  for (const { event, payer } of rows) {
    if (!event) continue;
    const fromPayer = logs.filter((l) => l.address.toLowerCase() === payer);
    const arg = (args: unknown, name: string): unknown => Array.isArray(args) ? args[event.abi.inputs.findIndex((i) => i.name === name)] : (args as Record<string, unknown>)[name];
    const found = parseEventLogs({ abi: [event.abi], logs: fromPayer }).find((l) => !used.has(`${tx}:${l.logIndex}`)
      && String(arg(l.args, event.recipient)).toLowerCase() === wallet
      && (event.amount === undefined || arg(l.args, event.amount) === amount));
    if (found) return `${tx}:${found.logIndex}`;
  }
  return undefined;
}

/** Checks one claimed transfer of `night`; returns the reason it fails, or undefined when it matches. */
export async function checkTransfer(chain: Chain, payers: readonly PayerRow[], night: string, wallet: string, claim: Transfer, used: UsedLogs, label: string): Promise<string | undefined> {
  let receipt;
  try {
    receipt = await chain.client.getTransactionReceipt({ hash: claim.tx as Hex });
  } catch {
    return `${label}: no such transaction on chain ${chain.chainId}`;
  }
  if (receipt.status !== 'success') return `${label}: its transaction failed on the chain (status 0)`;
  const block = await chain.client.getBlock({ blockNumber: receipt.blockNumber });
  const minedMs = Number(block.timestamp) * 1000;
  if (minedMs < midnightMs(night) || minedMs >= midnightMs(night) + DAY_MS) {
    return `${label}: mined at ${new Date(minedMs).toISOString()}, outside the night ${night} (00:00 to 24:00 UTC)`;
  }
  const logs = parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receipt.logs });
  const amount = BigInt(claim.amount);
  const toWallet = logs.filter((l) => l.args.to.toLowerCase() === wallet && !used.has(`${claim.tx}:${l.logIndex}`));
  let withoutEvent: PayerRow | undefined;
  for (const l of toWallet.filter((t) => t.args.value === amount)) {
    const rows = payerRows(payers, chain.chainId, l.address, l.args.from, night);
    if (rows.length === 0) continue;
    const proof = rewardProof(rows, receipt.logs, wallet, amount, used, claim.tx);
    if (proof === undefined) {
      withoutEvent ??= rows.find((r) => r.event);
      continue;
    }
    used.add(`${claim.tx}:${l.logIndex}`);
    if (proof !== true) used.add(proof);
    return undefined;
  }
  if (withoutEvent) {
    return `${label}: its Transfer comes from the payer of row ${withoutEvent.row} of the payer list without that contract's ${withoutEvent.event!.abi.name} event for the wallet in the same transaction: a refund or withdrawal, not a reward`;
  }
  const unlisted = toWallet.find((l) => l.args.value === amount);
  if (unlisted) {
    const tokenListed = payers.some((r) => r.chain_id === chain.chainId && r.token === unlisted.address.toLowerCase());
    return tokenListed
      ? `${label}: its Transfer to the wallet comes from a sender the payer list does not name for ${night}`
      : `${label}: its Transfer to the wallet is in a token the payer list does not name for ${night}`;
  }
  if (logs.some((l) => l.args.value === amount && countsAsReward(payers, chain.chainId, l.address, l.args.from, night))) return `${label}: its reward Transfer of that amount pays another wallet`;
  return `${label}: no Transfer of ${claim.amount} base units to the wallet in its transaction`;
}

/** Whether the wallet's owner signed `message` (EIP-191 personal_sign): EOA recovery or EIP-1271. */
export async function controls(chain: Chain, wallet: string, message: string, signature: string): Promise<boolean> {
  try {
    return await chain.client.verifyMessage({ address: wallet as Hex, message, signature: signature as Hex });
  } catch {
    return false;
  }
}
