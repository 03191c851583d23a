// Which ERC-20 transfers count as reward payouts: a JSON array of
// {"chain_id", "token", "payer", "from", "until", "source"} rows (extra keys such as "note" allowed).
// A transfer counts for a night when its token and its sender match a row of the chain whose dates
// cover the night: `from` inclusive, `until` exclusive, null for a row still in force. The project
// ships its list in audit/payers.json; an auditor may pass their own in the same format.
//
// A row may also require an event, for a payer that sends the same token for other reasons (a
// sponsorship contract that both pays rewards and returns deposits): "event": {"abi", "recipient",
// "amount"?}, where `abi` is the payer contract's reward-distribution event, either as viem's
// human-readable ABI reads it ("event DistributedRewards(address indexed user, uint256 amount)",
// https://viem.sh/docs/abi/parseAbiItem) or as a JSON ABI event item, `recipient` names its address
// argument that must be the wallet, and `amount`, when given, names its integer argument that must
// equal the transfer's value. A transfer from such a row counts only when the same transaction
// carries that event, emitted by the payer itself, for the wallet.
import { type AbiEvent, parseAbiItem } from 'viem';
import { isCalendarDate } from '../dates.ts';

/** The event a payer row requires beside its Transfer. */
export interface PayerEvent { abi: AbiEvent; recipient: string; amount?: string }

export interface PayerRow {
  chain_id: number; token: string; payer: string; from: string; until: string | null; source: string;
  /** Its place in the list, from 1, to name it in a finding. */
  row: number;
  event?: PayerEvent;
}

const ADDRESS_ANY_CASE = /^0x[0-9a-fA-F]{40}$/;
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** A JSON ABI event item as the human-readable line viem parses, so both forms are checked alike. */
function humanReadable(item: Record<string, unknown>): string | undefined {
  if (item.type !== 'event' || typeof item.name !== 'string' || !Array.isArray(item.inputs)) return undefined;
  const params: string[] = [];
  for (const p of item.inputs as Record<string, unknown>[]) {
    if (typeof p?.type !== 'string' || p.type.startsWith('tuple') || (p.name !== undefined && p.name !== '' && (typeof p.name !== 'string' || !IDENTIFIER.test(p.name)))) return undefined;
    params.push([p.type, p.indexed === true ? 'indexed' : '', p.name ?? ''].filter(Boolean).join(' '));
  }
  return `event ${item.name}(${params.join(', ')})`;
}

function parseEvent(value: unknown, where: string): PayerEvent {
  const e = (value ?? {}) as Record<string, unknown>;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${where}: event is not an object {"abi", "recipient", "amount"?}`);
  const text = typeof e.abi === 'string' ? e.abi : typeof e.abi === 'object' && e.abi !== null ? humanReadable(e.abi as Record<string, unknown>) : undefined;
  let abi: AbiEvent | undefined;
  try {
    const item = text === undefined ? undefined : parseAbiItem(text);
    if (item?.type === 'event') abi = item;
  } catch {
    // Not an event viem reads: refused below.
  }
  if (!abi || (e.abi as { anonymous?: unknown }).anonymous === true) {
    throw new Error(`${where}: event.abi is not an event viem can decode (such as "event DistributedRewards(address indexed user, uint256 amount)", or a JSON ABI event item that is not anonymous)`);
  }
  const input = (name: unknown) => abi.inputs.find((i) => i.name === name);
  if (typeof e.recipient !== 'string' || input(e.recipient)?.type !== 'address') throw new Error(`${where}: event.recipient does not name an address argument of ${abi.name}`);
  if (e.amount !== undefined && (typeof e.amount !== 'string' || !/^uint\d*$/.test(input(e.amount)?.type ?? ''))) throw new Error(`${where}: event.amount does not name an unsigned integer argument of ${abi.name}`);
  return { abi, recipient: e.recipient, ...(e.amount === undefined ? {} : { amount: e.amount as string }) };
}

export function parsePayers(text: string, file: string): PayerRow[] {
  let value: unknown;
  try { value = JSON.parse(text); } catch { throw new Error(`${file} is not JSON`); }
  if (!Array.isArray(value) || value.length === 0) throw new Error(`${file} is not a JSON array of payer rows`);
  return value.map((row: unknown, i): PayerRow => {
    const r = (row ?? {}) as Record<string, unknown>;
    const where = `row ${i + 1} of ${file}`;
    if (!Number.isSafeInteger(r.chain_id) || (r.chain_id as number) <= 0) throw new Error(`${where}: chain_id is not a chain id`);
    if (typeof r.token !== 'string' || !ADDRESS_ANY_CASE.test(r.token)) throw new Error(`${where}: token is not a 0x address`);
    if (typeof r.payer !== 'string' || !ADDRESS_ANY_CASE.test(r.payer)) throw new Error(`${where}: payer is not a 0x address`);
    if (typeof r.from !== 'string' || !isCalendarDate(r.from)) throw new Error(`${where}: from is not a date YYYY-MM-DD`);
    if (r.until !== null && (typeof r.until !== 'string' || !isCalendarDate(r.until) || r.until <= r.from)) throw new Error(`${where}: until is neither null nor a date after from`);
    if (typeof r.source !== 'string' || r.source === '') throw new Error(`${where}: source does not say where the address was found`);
    const event = r.event === undefined ? undefined : parseEvent(r.event, where);
    return { chain_id: r.chain_id as number, token: r.token.toLowerCase(), payer: r.payer.toLowerCase(), from: r.from, until: r.until as string | null, source: r.source, row: i + 1, ...(event ? { event } : {}) };
  });
}

/** The rows under which a transfer of `token` sent by `payer` may count for `night` on `chainId`. */
export const payerRows = (rows: readonly PayerRow[], chainId: number, token: string, payer: string, night: string): PayerRow[] =>
  rows.filter((r) => r.chain_id === chainId && r.token === token.toLowerCase() && r.payer === payer.toLowerCase()
    && r.from <= night && (r.until === null || night < r.until));

/** Whether the list names the sender of a transfer of `token` for `night` on `chainId`, whatever event its row requires. */
export const countsAsReward = (rows: readonly PayerRow[], chainId: number, token: string, payer: string, night: string): boolean =>
  payerRows(rows, chainId, token, payer, night).length > 0;
