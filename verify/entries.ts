// The log's entries, each RFC 8785 JSON (https://www.rfc-editor.org/rfc/rfc8785): a night, with a
// correction naming the entry it replaces; the commitment to the wallet the rewards are paid to
// (kind "wallet"), naming the wallet entry it follows; or an audit's opening (kind "audit"): the
// auditor's key, the SHA-256 of the auditor's nonce, the checkpoint the audit reads, and either the
// size of the sample drawn from it or the nights the owner names. Every kind shares the indexes.
import { isRecord, parseJson } from '../log-reader/encoding.ts';
import { fail } from '../log-reader/failure.ts';

/** A night's entry; `transfers` is the commitment to its reward transfers, null when it has none. */
export interface Entry { index: number; date: string; usd: number; trading_cost_usd: number | null; at_stake_usd: number | null; supersedes: number | null; transfers: string | null }
/** The wallet's commitment: the wallet the rewards are paid to from this entry on. */
export interface WalletEntry { index: number; kind: 'wallet'; wallet: string; replaces: number | null }
/** An audit's opening, appended after the checkpoint it names: `sample` nights drawn from it, or the `nights` the owner names. */
export interface AuditEntry { index: number; kind: 'audit'; auditor: string; nonce_sha256: string; checkpoint: number; sample: number | null; nights: string[] | null }
export type LogEntry = Entry | WalletEntry | AuditEntry;

export const isWallet = (entry: LogEntry): entry is WalletEntry => 'kind' in entry && entry.kind === 'wallet';
export const isAudit = (entry: LogEntry): entry is AuditEntry => 'kind' in entry && entry.kind === 'audit';
export const isNight = (entry: LogEntry): entry is Entry => !('kind' in entry);

/** RFC 8785: ECMAScript number and string serialization, object members sorted by UTF-16 code units. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isRecord(value)) return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`;
  return JSON.stringify(value);
}

export const DATE = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;
export const DAY_SECONDS = 86_400;
const numberOrNull = (v: unknown): v is number | null => v === null || (typeof v === 'number' && Number.isFinite(v));
const indexOrNull = (v: unknown): v is number | null => v === null || (Number.isSafeInteger(v) && (v as number) >= 0);
/** A commitment: standard base64 of 32 bytes (44 characters, the last before the padding ending the 32nd byte). */
export const COMMITMENT = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;
const commitment = (v: unknown): v is string => typeof v === 'string' && COMMITMENT.test(v);
/** A SHA-256 digest in lowercase hexadecimal: the opening's nonce_sha256. */
export const HEX_DIGEST = /^[0-9a-f]{64}$/;
const positive = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 1;
const AUDIT_FORM = 'an audit opening (kind "audit", auditor, checkpoint of at least 1, nonce_sha256: 64 lowercase hex digits, and sample of at least 1 or nights: distinct dates)';

function parseAudit(parsed: Record<string, unknown>, index: number): AuditEntry {
  const keys = Object.keys(parsed).sort().join(',');
  const sample = keys === 'auditor,checkpoint,kind,nonce_sha256,sample';
  const named = keys === 'auditor,checkpoint,kind,nights,nonce_sha256';
  const nights = parsed.nights;
  const dates = Array.isArray(nights) && nights.length > 0 && nights.every((d) => typeof d === 'string' && DATE.test(d)) && new Set(nights).size === nights.length;
  if ((!sample && !named) || typeof parsed.auditor !== 'string' || parsed.auditor === '' || !positive(parsed.checkpoint)
    || typeof parsed.nonce_sha256 !== 'string' || !HEX_DIGEST.test(parsed.nonce_sha256) || (sample ? !positive(parsed.sample) : !dates)) {
    return fail(`log entry ${index} is not ${AUDIT_FORM}`);
  }
  return {
    index, kind: 'audit', auditor: parsed.auditor, nonce_sha256: parsed.nonce_sha256, checkpoint: parsed.checkpoint as number,
    sample: sample ? parsed.sample as number : null, nights: sample ? null : nights as string[],
  };
}
export const midnight = (date: string): number => Date.parse(`${date}T00:00:00Z`) / 1000;
export const dateOf = (seconds: number): string => new Date(seconds * 1000).toISOString().slice(0, 10);
/** The log holds amounts at full precision and the answers round them to cents: equal when they round alike. */
export const sameCents = (a: number | null, b: unknown): boolean => (a === null ? b === null : typeof b === 'number' && Math.abs(a - b) < 0.005 + 1e-9);

export function parseEntry(bytes: Buffer, index: number): LogEntry {
  const parsed = parseJson(bytes, `log entry ${index}`);
  if (canonicalJson(parsed) !== bytes.toString('utf8')) fail(`log entry ${index} is not RFC 8785 canonical JSON`);
  if (isRecord(parsed) && 'kind' in parsed) {
    if (parsed.kind === 'audit') return parseAudit(parsed, index);
    if (parsed.kind !== 'wallet') return fail(`log entry ${index} is of a kind this verifier does not know (${JSON.stringify(parsed.kind)})`);
    if (Object.keys(parsed).length !== 3 || !commitment(parsed.wallet) || !indexOrNull(parsed.replaces)) {
      return fail(`log entry ${index} is not a wallet commitment (kind "wallet", replaces, wallet: base64 of 32 bytes)`);
    }
    return { index, kind: 'wallet', wallet: parsed.wallet, replaces: parsed.replaces };
  }
  if (!isRecord(parsed) || typeof parsed.date !== 'string' || !DATE.test(parsed.date) || typeof parsed.usd !== 'number'
    || !numberOrNull(parsed.trading_cost_usd) || !numberOrNull(parsed.at_stake_usd) || typeof parsed.updated_at !== 'string'
    || !indexOrNull(parsed.supersedes) || !(parsed.transfers === undefined || commitment(parsed.transfers))) {
    return fail(`log entry ${index} is not a night (date, usd, trading_cost_usd, at_stake_usd, supersedes, updated_at, and transfers: base64 of 32 bytes, when it has one)`);
  }
  return {
    index, date: parsed.date, usd: parsed.usd, trading_cost_usd: parsed.trading_cost_usd, at_stake_usd: parsed.at_stake_usd,
    supersedes: parsed.supersedes, transfers: parsed.transfers ?? null,
  };
}

/** The entry as a night: a receipt, say, proves a night, never the wallet's commitment or an audit's opening. */
export function parseNight(bytes: Buffer, index: number): Entry {
  const entry = parseEntry(bytes, index);
  return isNight(entry) ? entry : fail(`log entry ${index} is ${isWallet(entry) ? 'the wallet\'s commitment' : 'an audit\'s opening'}, not a night`);
}

/**
 * Every entry, in log order (position = index), each correction naming the previous entry for its
 * date, each wallet entry the previous wallet entry; a night that entered the log without the
 * commitment to its transfers never gains one in a correction; an audit's opening comes after the
 * checkpoint it names, and no two openings share a nonce.
 */
export function readEntries(raw: Buffer[]): LogEntry[] {
  const latest = new Map<string, Entry>();
  const nonces = new Map<string, number>();
  let wallet: WalletEntry | undefined;
  return raw.map((bytes, index) => {
    const entry = parseEntry(bytes, index);
    if (isAudit(entry)) {
      if (entry.checkpoint > index) fail(`log entry ${index}, an audit's opening, names checkpoint ${entry.checkpoint}, which it is not appended after (an opening follows the checkpoint it names)`);
      const earlier = nonces.get(entry.nonce_sha256);
      if (earlier !== undefined) fail(`log entry ${index}, an audit's opening, has the nonce_sha256 of the opening at entry ${earlier}: one opening per nonce`);
      nonces.set(entry.nonce_sha256, index);
      return entry;
    }
    if (isWallet(entry)) {
      if (entry.replaces !== (wallet?.index ?? null)) {
        fail(`log entry ${index}, the wallet's commitment, replaces ${entry.replaces ?? 'nothing'}, but the previous wallet entry is ${wallet?.index ?? 'none'}`);
      }
      wallet = entry;
      return entry;
    }
    // A correction names the entry it replaces: the previous one for its date.
    const previous = latest.get(entry.date);
    if (entry.supersedes !== (previous?.index ?? null)) {
      fail(`log entry ${index} for ${entry.date} supersedes ${entry.supersedes ?? 'nothing'}, but the previous entry for that date is ${previous?.index ?? 'none'}`);
    }
    if (previous && previous.transfers === null && entry.transfers !== null) {
      fail(`log entry ${index} for ${entry.date} carries a commitment to its transfers, but the night entered the log without one (entry ${previous.index}), and a commitment made later is never logged for it`);
    }
    latest.set(entry.date, entry);
    return entry;
  });
}

/** The nights among the entries, in log order. */
export const nightsOf = (entries: readonly LogEntry[]): Entry[] => entries.filter(isNight);

/** Each date's latest entry, in date order; wallet entries and audit openings have no date and are left out. */
export const latestByDate = (entries: readonly LogEntry[]): Map<string, Entry> =>
  new Map(nightsOf(entries).sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : a.index - b.index)).map((e) => [e.date, e]));

/**
 * The wallet commitment in force at entry `index`: the latest wallet entry with a lower index
 * (undefined: none before it). `entries` is the log in order, as readEntries gives it.
 */
export function walletInForce(entries: readonly LogEntry[], index: number): WalletEntry | undefined {
  for (let i = Math.min(index, entries.length) - 1; i >= 0; i--) {
    const entry = entries[i]!;
    if (isWallet(entry)) return entry;
  }
  return undefined;
}

/**
 * The nights logged after the log's first wallet entry without a commitment to their reward
 * transfers, in date order: a date with an entry after that wallet entry that has no `transfers`,
 * unless the night entered the log before it without one (a commitment made later is never logged).
 */
export function uncommittedNights(entries: readonly LogEntry[]): { wallet: number | undefined; dates: string[] } {
  const wallet = entries.find(isWallet)?.index;
  if (wallet === undefined) return { wallet, dates: [] };
  const first = new Map<string, Entry>();
  const dates = new Set<string>();
  for (const entry of nightsOf(entries)) {
    if (!first.has(entry.date)) first.set(entry.date, entry);
    const before = first.get(entry.date)!;
    if (entry.index > wallet && entry.transfers === null && !(before.index < wallet && before.transfers === null)) dates.add(entry.date);
  }
  return { wallet, dates: [...dates].sort() };
}
