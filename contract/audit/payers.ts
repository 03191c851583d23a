// Which ERC-20 transfers count as reward payouts: a JSON array of
// {"chain_id", "token", "payer", "from", "until", "source"} rows (extra keys such as "note" allowed).
// A transfer counts for a night when its token and its sender match a row of the chain whose dates
// cover the night: `from` inclusive, `until` exclusive, null for a row still in force. The project
// ships its list in audit/payers.json; an auditor may pass their own in the same format.
import { isCalendarDate } from '../dates.ts';

export interface PayerRow { chain_id: number; token: string; payer: string; from: string; until: string | null; source: string }

const ADDRESS_ANY_CASE = /^0x[0-9a-fA-F]{40}$/;

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
    return { chain_id: r.chain_id as number, token: r.token.toLowerCase(), payer: r.payer.toLowerCase(), from: r.from, until: r.until as string | null, source: r.source };
  });
}

/** Whether a transfer of `token` sent by `payer` counts for `night` on `chainId`. */
export const countsAsReward = (rows: readonly PayerRow[], chainId: number, token: string, payer: string, night: string): boolean =>
  rows.some((r) => r.chain_id === chainId && r.token === token.toLowerCase() && r.payer === payer.toLowerCase()
    && r.from <= night && (r.until === null || night < r.until));
