// kysely over pg, logged in as the writer's own role (stats_writer), which can write only the data tables.
import { Kysely, PostgresDialect, type Generated } from 'kysely';
import pg from 'pg';
import type { DemoTable, StatsTableName } from '../contract/tables.ts';
import { poolOnServer, type SessionTimeouts } from '../db-client/pg-connect.ts';

// Dates stay 'YYYY-MM-DD' strings: a JS Date would shift them by the local time zone.
pg.types.setTypeParser(1082, (value) => value);

type Usd = string; // numeric comes back as a string; we send strings too, so no float rounding sneaks in

export interface StatsTables {
  'stats.payout': { date: string; usd: Usd; is_demo: boolean; recorded_at: Generated<Date>; updated_at: Generated<Date> };
  'stats.payout_correction': { id: Generated<string>; date: string; old_usd: Usd; new_usd: Usd; corrected_at: Generated<Date> };
  'stats.accrual': { observed_at: Date; usd: Usd; markets: number; is_demo: boolean };
  'stats.breadth': { observed_at: Date; markets_quoted_24h: number; is_demo: boolean };
  'stats.capital': { observed_at: Date; cash_usd: Usd; inventory_usd: Usd; positions: number; is_demo: boolean };
  'stats.trading_cost': { date: string; usd: Usd; is_demo: boolean; recorded_at: Generated<Date>; updated_at: Generated<Date> };
  'stats.heartbeat': { at: Date; is_demo: boolean; writer: string | null };
  'stats.quoted_market': { digest: Buffer; last_seen_at: Date };
  'stats.capital_held': { id: Generated<boolean>; cash_usd: Usd; at_stake_usd: Usd; readings: number; first_read_at: Date; last_read_at: Date };
  'stats.trading_cost_correction': { id: Generated<string>; date: string; old_usd: Usd; new_usd: Usd; corrected_at: Generated<Date> };
  'stats.log_entry': { idx: string; date: string | null; entry: string; is_demo: boolean; appended_at: Date };
  'stats.log_checkpoint': { size: string; root: string; note: string; vkey: string; is_demo: boolean; signed_at: Generated<Date> };
  'stats.log_cosignature': { size: string; witness: string; cosigned_at: Date; line: string; received_at: Generated<Date> };
  'stats.log_witnessed': { size: string; quorum_at: Date; witnesses: string[] };
  'stats.log_witness_round': { at: Generated<Date>; size: string; witnesses: number; cosigned: string[]; quorum_met: boolean };
  'stats.log_policy': { recorded_at: Generated<Date>; policy: string | null };
  'stats.log_halt': { at: Generated<Date>; reason: string };
  'stats.wallet_commitment': { commitment: string; is_demo: boolean; recorded_at: Generated<Date> };
  'stats.night_transfers': { date: string; commitment: string; is_demo: boolean };
  'stats.transfer_opening': { commitment: string; kind: 'wallet' | 'night'; key_id: string; sealed: Buffer; recorded_at: Generated<Date> };
  'stats.settings': { id: boolean; since_date: string | null; window_days: number; data_source: 'polymarket' | 'import' | null };
}

// The tables named here are the schema's (contract/tables.ts), and every table of demo rows is here
// with its flag: a table added to or dropped from the list without this interface fails to compile.
type Holds<T extends true> = T;
type KnownTablesOnly = Holds<keyof StatsTables extends `stats.${StatsTableName}` ? true : false>;
type DemoTablesFlagged = Holds<StatsTables[`stats.${DemoTable}`] extends { is_demo: boolean } ? true : false>;

export type WriterDb = Kysely<StatsTables>;

/**
 * The timeouts of the connections of commands that do not take the writer lock (import, status, sign,
 * seed-demo). A minute: far beyond any of their statements, and an import fed by a pipe that stalls
 * for that long gives up, writing nothing, rather than keep the settings row (which every write locks
 * first) locked and the running writer waiting. The server's idle_session_timeout is left as it is:
 * these sessions hold no lease.
 */
export const COMMAND_TIMEOUTS: SessionTimeouts = { statementMs: 60_000, idleInTransactionMs: 60_000, idleSessionMs: 0 };

/**
 * A command's server that sends nothing for 15 s beyond those timeouts is taken as cut off: a
 * healthy server has by then answered, or ended the statement or the session itself.
 */
export const COMMAND_SILENCE_MS = Math.max(COMMAND_TIMEOUTS.statementMs, COMMAND_TIMEOUTS.idleInTransactionMs) + 15_000;

export function openWriterDb(connectionString: string): WriterDb {
  // The server is chosen when the first query needs a connection.
  const pool = () => poolOnServer(connectionString, { applicationName: 'stats-writer', timeouts: COMMAND_TIMEOUTS, silenceMs: COMMAND_SILENCE_MS, max: 3 });
  return new Kysely<StatsTables>({ dialect: new PostgresDialect({ pool }) });
}
