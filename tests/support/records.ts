// Fixed records in the shapes the API host returns (checked against the record schemas), for tests
// that exercise the edge's routing and wording without a database: twenty settled nights, the
// latest three not yet final, and the stats and health records that go with them.
import {
  HealthRecordSchema,
  HistoryRecordSchema,
  LogRecordSchema,
  StatsRecordSchema,
  type HealthRecord,
  type HistoryRecord,
  type LogRecord,
  type StatsRecord,
} from '../../contract/records.ts';
import { generateKeyPairSync } from 'node:crypto';
import { base64, noteVerifierKey } from '../../contract/log-key.ts';
import { logOrigin } from '../../contract/paths.ts';
import { buildTree } from '../../contract/tlog/merkle.ts';
import { checkpointBody, importNoteSigningKey, signNote } from '../../contract/tlog/note.ts';

export const FIXED_NIGHTS = 20;
const FIRST_NIGHT = Date.UTC(2025, 2, 1);
const DAY_MS = 86_400_000;
/** When the fixed figures were produced: the morning after the last night. */
export const FIXED_UPDATED_AT = '2025-03-20T06:00:00Z';

/** The log state the fixed records name (the fixed log's own checkpoint is made with a fresh key, so its root differs). */
export const FIXED_LOG_HEAD = { origin: 'stats.example.org/log', size: 17, root: 'm0nvSgPtkMY1wGjWUNaSZ9UzxNFyTZNQmnJlrSxfV2w=' };

const dateOf = (i: number) => new Date(FIRST_NIGHT + i * DAY_MS).toISOString().slice(0, 10);
const cents = (value: number) => Math.round(value * 100) / 100;

/** The history record: usd grows and dips by a fixed pattern, each night recorded the morning after. */
export function fixedHistory(source: 'polymarket' | 'demo' = 'polymarket'): HistoryRecord {
  let total = 0;
  let logIndex = 0;
  const nights = Array.from({ length: FIXED_NIGHTS }, (_, i) => {
    const usd = cents(30 + ((i * 7) % 11) * 1.37);
    total = cents(total + usd);
    const final = i < FIXED_NIGHTS - 3;
    return {
      date: dateOf(i),
      usd,
      total_usd: total,
      trading_cost_usd: i % 4 === 0 ? null : cents(4 + (i % 3) * 0.5),
      at_stake_usd: cents(2500 + i * 10),
      updated_at: `${dateOf(i + 1)}T00:05:00Z`,
      log_index: final ? logIndex++ : null,
      witnessed_at: null,
      witnessed_on_time: null,
    };
  });
  return HistoryRecordSchema.parse({ updated_at: FIXED_UPDATED_AT, since_date: dateOf(0), data_source: source, nights, log_checkpoint: FIXED_LOG_HEAD });
}

/** The stats record of the same nights, as landing_stats returns it. */
export function fixedStats(source: 'polymarket' | 'demo' = 'polymarket'): StatsRecord {
  const nights = fixedHistory(source).nights;
  const last = nights.at(-1)!;
  const usds = nights.map((n) => n.usd);
  return StatsRecordSchema.parse({
    updated_at: FIXED_UPDATED_AT,
    daily: nights.slice(-16).map(({ date, usd }) => ({ date, usd })),
    last_night_usd: last.usd,
    last_night_date: last.date,
    accrued_today_usd: 12.5,
    accrued_today_markets: 9,
    markets_quoted_24h: 14,
    total_usd: last.total_usd,
    since_date: nights[0]!.date,
    best_day_usd: Math.max(...usds),
    worst_day_usd: Math.min(...usds),
    capital: { cash_usd: 1800, inventory_usd: 890.25, positions: 7, at_stake_usd: 2690.25, as_of: '2025-03-20T05:55:00Z' },
    returns: {
      window_days: 15,
      from_date: nights.at(-15)!.date,
      to_date: last.date,
      rewards_usd: 540.12,
      trading_costs_usd: 61.5,
      net_usd: 478.62,
      rewards_vs_costs: 8.78,
      gross_yield_pct: 20.94,
      net_yield_pct: 18.56,
    },
    data_source: source,
    log_checkpoint: FIXED_LOG_HEAD,
  });
}

/**
 * The transparency log: the final nights as canonical JSON entries (keys sorted), in log order, and
 * one checkpoint of them signed with a key made for the fixture, under the fixed site's origin.
 */
export async function fixedLog(siteUrl = 'https://stats.example.org'): Promise<LogRecord> {
  const entries = fixedHistory().nights.filter((n) => n.log_index !== null).map((n) => JSON.stringify({
    at_stake_usd: n.at_stake_usd, date: n.date, supersedes: null, trading_cost_usd: n.trading_cost_usd, updated_at: n.updated_at, usd: n.usd,
  }));
  const tree = await buildTree(entries.map((e) => new TextEncoder().encode(e)));
  const origin = logOrigin({ siteUrl }, false);
  const key = await importNoteSigningKey(generateKeyPairSync('ed25519').privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64url'), 'fixture');
  const note = await signNote(checkpointBody(origin, tree.size, await tree.root()), origin, key.privateKey, key.publicKey);
  const signedAt = fixedHistory().nights.at(-4)!.updated_at;
  return LogRecordSchema.parse({
    updated_at: signedAt, demo: false, vkey: await noteVerifierKey(origin, key.publicKey), policy: null, entries,
    log_checkpoint: { origin, size: tree.size, root: base64(await tree.root()) },
    checkpoints: [{ size: tree.size, root: base64(await tree.root()), note, signed_at: signedAt, quorum_at: null, cosignatures: [] }],
    cosignatures: [], witnessing: null, halted: null,
  });
}

/** An "ok" health record checked at `checkedAt`. */
export function fixedHealth(checkedAt = '2025-03-20T06:01:00Z'): HealthRecord {
  return HealthRecordSchema.parse({
    status: 'ok',
    checked_at: checkedAt,
    data: { last_payout_date: dateOf(FIXED_NIGHTS - 1), payout_age_days: 0, fresh: true, last_accrual_at: '2025-03-20T05:58:00Z', accrual_age_minutes: 3, accrual_fresh: true, replica_lag_seconds: null },
    writer: { last_heartbeat_at: '2025-03-20T06:00:30Z', alive: true, name: 'writer-a' },
  });
}
