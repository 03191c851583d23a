// The tables of the private `stats` schema, each named once with what the code that goes over all of
// them needs to know: the writer (which tables may hold real rows), the backup (what it keeps and what
// a restore rebuilds) and the tests (what they empty between cases). sql/ declares the tables;
// tests/sql/tables.test.ts checks this list against the catalog, so a table added on one side only fails.

export interface StatsTable {
  /**
   * data: rows the writer records, and their audit trail (kept by a backup);
   * settings: the one row of settings (kept by a backup, replacing the one the migrations make);
   * derived: worked out from the data as it commits (left out of a backup, rebuilt by a restore).
   */
  kind: 'data' | 'settings' | 'derived';
  /** Rows carry is_demo, and the first real write removes the demo ones (stats.purge_demo). */
  demoRows: boolean;
  /** No role may change, remove or truncate a row: the transparency log. */
  appendOnly: boolean;
}

/** Every table of the `stats` schema, in the order sql/ declares them. */
export const STATS_TABLES = {
  settings: { kind: 'settings', demoRows: false, appendOnly: false },
  payout: { kind: 'data', demoRows: true, appendOnly: false },
  payout_correction: { kind: 'data', demoRows: false, appendOnly: false },
  trading_cost: { kind: 'data', demoRows: true, appendOnly: false },
  trading_cost_correction: { kind: 'data', demoRows: false, appendOnly: false },
  accrual: { kind: 'data', demoRows: true, appendOnly: false },
  breadth: { kind: 'data', demoRows: true, appendOnly: false },
  capital: { kind: 'data', demoRows: true, appendOnly: false },
  heartbeat: { kind: 'data', demoRows: true, appendOnly: false },
  capital_held: { kind: 'data', demoRows: false, appendOnly: false },
  log_entry: { kind: 'data', demoRows: true, appendOnly: true },
  log_checkpoint: { kind: 'data', demoRows: true, appendOnly: true },
  log_cosignature: { kind: 'data', demoRows: false, appendOnly: true },
  log_witnessed: { kind: 'data', demoRows: false, appendOnly: true },
  log_witness_round: { kind: 'data', demoRows: false, appendOnly: true },
  log_policy: { kind: 'data', demoRows: false, appendOnly: true },
  log_halt: { kind: 'data', demoRows: false, appendOnly: false },
  log_audit: { kind: 'data', demoRows: false, appendOnly: true },
  quoted_market: { kind: 'data', demoRows: false, appendOnly: false },
  wallet_commitment: { kind: 'data', demoRows: true, appendOnly: false },
  night_transfers: { kind: 'data', demoRows: true, appendOnly: false },
  transfer_opening: { kind: 'data', demoRows: false, appendOnly: true },
  history_snapshot: { kind: 'derived', demoRows: false, appendOnly: false },
  stats_snapshot: { kind: 'derived', demoRows: false, appendOnly: false },
} as const satisfies Record<string, StatsTable>;

export type StatsTableName = keyof typeof STATS_TABLES;
type Tables = typeof STATS_TABLES;

/** The tables whose rows may be demo rows. */
export type DemoTable = { [K in StatsTableName]: Tables[K]['demoRows'] extends true ? K : never }[StatsTableName];
/** The tables of recorded data. */
export type DataTable = { [K in StatsTableName]: Tables[K]['kind'] extends 'data' ? K : never }[StatsTableName];
/** The tables worked out from the data. */
export type DerivedTable = { [K in StatsTableName]: Tables[K]['kind'] extends 'derived' ? K : never }[StatsTableName];

const names = (keep: (table: StatsTable) => boolean) =>
  (Object.entries(STATS_TABLES) as [StatsTableName, StatsTable][]).filter(([, table]) => keep(table)).map(([name]) => name);

export const TABLE_NAMES = Object.keys(STATS_TABLES) as StatsTableName[];
export const DEMO_TABLES = names((t) => t.demoRows) as DemoTable[];
export const DATA_TABLES = names((t) => t.kind === 'data') as DataTable[];
export const DERIVED_TABLES = names((t) => t.kind === 'derived') as DerivedTable[];
