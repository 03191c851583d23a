// `check`: a read-only dry run against the configured Polymarket account, an operator's first step
// before the first real write. It reads what the writer would publish, writes nothing anywhere, and
// prints figures only (no address, market or order id), flagging what looks implausible. It also says
// what name the transparency log will keep, while its first real checkpoint has not fixed one.
import { usd6 } from '../contract/audit/commitment.ts';
import { addDays, DAY_MS, midnightMs, utcDate } from '../contract/dates.ts';
import { unfixedLogOriginNotice, withStoredLogOrigin, type Origins } from '../contract/paths.ts';
import type { Logger } from './log.ts';
import type { PolymarketSource } from './polymarket/source.ts';
import { CREDIT_TOLERANCE_USD, MIN_PAYOUT_USD } from './polymarket/source.ts';
import { ACTIVITY_KINDS, tradingCost } from './polymarket/ledger.ts';
import { UNDOCUMENTED_REWARDS_SIGNATURE_TYPE } from './polymarket/client.ts';

/** Nights read back, as many as landing_stats' daily array shows. */
export const CHECK_NIGHTS = 16;
/** This many nights in a row without earnings is worth a look. */
const QUIET_NIGHTS = 3;
const money = (usd: number) => `$${usd.toFixed(2)}`;
const orUnknown = (usd: number | null) => (usd === null ? 'unknown' : money(usd));

export interface CheckReport {
  nights: { date: string; payout_usd: number; credited_usd: number }[];
  accrued_today_usd: number;
  accrued_today_markets: number;
  markets_quoted_24h: number;
  capital: { cash_usd: number; clob_cash_usd: number; inventory_usd: number; positions: number; at_stake_usd: number };
  /** deposits and withdrawals include tips received and sent; null while a row's effect is unknown. */
  yesterday_flows: { income_usd: number; deposits_usd: number | null; withdrawals_usd: number | null; trading_rows: number; unknown_types: string[] };
  /** Implausible findings: any makes `check` exit 1. */
  flags: string[];
  /** What the operator should know and nothing suggests is wrong. */
  notes: string[];
}

/** A reward read that failed, in words (HTTP status and the server's message). */
const failure = (error: unknown) => (error as Error).message;

export async function runCheck(source: PolymarketSource, now: Date, log: Logger): Promise<CheckReport> {
  const { client } = source;
  await source.prepare().catch((error: Error) => log.warn('server clock unreadable; signing with the local clock', { error: error.message }));
  const today = utcDate(now);
  const flags: string[] = [];
  const notes: string[] = [];
  const signatureType = source.signatureType;
  const undocumented = signatureType === UNDOCUMENTED_REWARDS_SIGNATURE_TYPE;
  if (undocumented) {
    notes.push(`SIGNATURE_TYPE ${signatureType} (a deposit wallet): Polymarket's rewards reference lists signature types 0, 1 and 2 only ` +
      '(https://docs.polymarket.com/api-reference/rewards/get-total-earnings-for-user-by-date); the official client sends 3 as it is, ' +
      'and the writer also names FUNDER_ADDRESS as maker_address. Compare the nightly figures below with the Rewards page before the first real write.');
  }
  // The reward reads, each on its own: one that fails is reported in words and the rest still runs.
  const rewardFailures: string[] = [];
  const reward = async <T>(what: string, read: () => Promise<T>, fallback: T): Promise<T> => {
    try {
      return await read();
    } catch (error) {
      rewardFailures.push(`${what}: ${failure(error)}`);
      return fallback;
    }
  };

  const first = addDays(today, -(CHECK_NIGHTS - 1));
  const credits = await source.rewardCredits(first, today);
  const nights: CheckReport['nights'] = [];
  for (let date = first; date <= today; date = addDays(date, 1)) {
    const night = await reward(`night ${date}`, () => source.nightPayout(date, today), null);
    if (night === null) continue;
    nights.push({ date, payout_usd: night.paid, credited_usd: usd6(credits.get(date) ?? 0) });
  }
  for (const n of nights) {
    if (n.date < today && Math.abs(n.payout_usd - n.credited_usd) > CREDIT_TOLERANCE_USD) {
      flags.push(`night ${n.date}: earnings give a payout of ${money(n.payout_usd)} but ${money(n.credited_usd)} was credited as REWARD`);
    }
  }
  let quiet = 0;
  for (const n of [...nights].reverse()) {
    if (n.payout_usd >= MIN_PAYOUT_USD) break;
    quiet++;
  }
  if (quiet >= QUIET_NIGHTS) flags.push(`no paid earnings for the last ${quiet} nights: check SIGNATURE_TYPE and FUNDER_ADDRESS (a wrong maker address reads as an empty account)`);

  const accruedUsd = (await reward('accrual today', () => client.totalEarnings(today), null)) ?? 0;
  const earning = await reward('markets earning today', () => client.earningMarkets(today), new Set<string>());
  if (rewardFailures.length > 0) {
    // A 400 is the server refusing the request itself; for a type its reference does not list, that type.
    const refused = undocumented && rewardFailures.some((f) => / answered HTTP 400\b/.test(f));
    flags.push(refused
      ? `the rewards routes refused signature type ${signatureType}, which their reference does not list: this account's rewards cannot be read, ` +
        `so nothing the writer publishes about rewards would be right (${rewardFailures.length} reads failed; first: ${rewardFailures[0]})`
      : `${rewardFailures.length} reward reads failed (first: ${rewardFailures[0]})`);
  }
  const t = now.getTime();
  const quoted = new Set([...(await client.openOrderMarkets(t)), ...(await client.makerFillMarkets(Math.floor((t - DAY_MS) / 1000)))].map((q) => q.market.toLowerCase()));

  const capital = await source.readCapital();
  const clobCash = source.usesChain ? usd6(await client.clobCashUsd()) : capital.cash_usd;
  if (capital.cash_usd === 0 && capital.positions > 0) flags.push(`cash reads as 0 while ${capital.positions} positions are held: a stale balance? (set POLYGON_RPC_URL to read it on chain)`);
  if (source.usesChain && Math.abs(clobCash - capital.cash_usd) > Math.max(1, 0.01 * capital.cash_usd)) {
    flags.push(`the CLOB reports ${money(clobCash)} of cash, the chain ${money(capital.cash_usd)}: the chain's figure is published`);
  }

  const start = Math.floor((midnightMs(today) - DAY_MS) / 1000);
  const flows = await client.data.activity(start, start + DAY_MS / 1000);
  const summary = tradingCost({ cash: 0, inventory: 0 }, { cash: 0, inventory: 0 }, flows);
  const unknown = summary.kind === 'provisional' ? summary.unknownTypes : [];
  if (unknown.length > 0) flags.push(`activity whose effect on cash the writer cannot tell (${unknown.join(', ')}): the trading cost of such a day is held back`);

  return {
    nights,
    accrued_today_usd: usd6(accruedUsd),
    accrued_today_markets: earning.size,
    markets_quoted_24h: quoted.size,
    capital: {
      cash_usd: capital.cash_usd, clob_cash_usd: clobCash, inventory_usd: capital.inventory_usd,
      positions: capital.positions, at_stake_usd: usd6(capital.cash_usd + capital.inventory_usd),
    },
    yesterday_flows: {
      income_usd: usd6(flows.filter((f) => ACTIVITY_KINDS[f.type] === 'income').reduce((s, f) => s + f.usdcSize, 0)),
      deposits_usd: summary.kind === 'cost' ? usd6(summary.deposits) : null,
      withdrawals_usd: summary.kind === 'cost' ? usd6(summary.withdrawals) : null,
      trading_rows: flows.filter((f) => ACTIVITY_KINDS[f.type] === 'trading').length,
      unknown_types: unknown,
    },
    flags,
    notes,
  };
}

/**
 * What `check` says of the transparency log's name: a flag when LOG_ORIGIN names another origin than
 * the one the log's first real checkpoint fixed; a note while none has fixed it and it would be made
 * from a loopback or IP SITE_URL (unfixedLogOriginNotice); nothing once it is fixed. `stored` reads
 * the fixed origin from the database; when that cannot be read the note says so.
 */
export async function logOriginFinding(origins: Pick<Origins, 'siteUrl' | 'logOrigin'>, stored: () => Promise<string | null>): Promise<{ flag: string } | { note: string } | undefined> {
  let origin: string | null;
  try {
    origin = await stored();
  } catch (error) {
    const notice = unfixedLogOriginNotice(origins);
    return notice ? { note: `${notice} (The database could not be read to tell whether a real checkpoint has fixed it already: ${(error as Error).message}.)` } : undefined;
  }
  try {
    withStoredLogOrigin(origins, origin);
  } catch (error) {
    return { flag: (error as Error).message };
  }
  const notice = origin ? undefined : unfixedLogOriginNotice(origins);
  return notice ? { note: notice } : undefined;
}

export function formatCheck(r: CheckReport): string {
  const lines = [
    'What the writer would publish (nothing was written):',
    '',
    'Nightly payouts (payout date: gross reward payout / REWARD credited that day):',
    ...r.nights.map((n) => `  ${n.date}  ${money(n.payout_usd).padStart(11)}  / ${money(n.credited_usd)}`),
    '',
    `Accrued today (estimate): $${r.accrued_today_usd.toFixed(2)} in ${r.accrued_today_markets} markets`,
    `Markets quoted now or filled as maker in 24 h: ${r.markets_quoted_24h}`,
    `Capital: cash $${r.capital.cash_usd.toFixed(2)} (CLOB says $${r.capital.clob_cash_usd.toFixed(2)}), inventory $${r.capital.inventory_usd.toFixed(2)}, ` +
      `${r.capital.positions} positions, at stake $${r.capital.at_stake_usd.toFixed(2)}`,
    `Yesterday's activity: income $${r.yesterday_flows.income_usd.toFixed(2)}, deposits and tips in ${orUnknown(r.yesterday_flows.deposits_usd)}, ` +
      `withdrawals and tips out ${orUnknown(r.yesterday_flows.withdrawals_usd)}, ${r.yesterday_flows.trading_rows} trading rows`,
    'Trading cost: computed once the writer has taken capital snapshots on both sides of a midnight.',
    '',
    r.flags.length === 0 ? 'Nothing implausible found.' : `Look at these before the first real write (${r.flags.length}):`,
    ...r.flags.map((f) => `  - ${f}`),
    ...(r.notes.length === 0 ? [] : ['', 'Good to know:', ...r.notes.map((n) => `  - ${n}`)]),
  ];
  return lines.join('\n');
}
