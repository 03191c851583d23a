// The shapes the edge publishes. The figures themselves come from landing_stats()/landing_health()
// unchanged (SQL is the one truth); these schemas only check what arrived and describe
// it to MCP clients. Objects are loose because the published record is abridged: a field the SQL
// adds later passes through instead of being dropped or rejected.
import { z } from 'zod';

const usd = z.number().nullable();
const date = z.string().nullable();
const timestamp = z.string().nullable();

export const StatsRecordSchema = z.looseObject({
  updated_at: timestamp.describe('Latest time a published figure changed (ISO 8601 UTC); cite it'),
  daily: z.array(z.looseObject({ date: z.string(), usd: z.number() }))
    .describe('Gross reward payouts of the last 16 settled nights, oldest first'),
  last_night_usd: usd.describe('Gross reward payout of the latest settled night, USD'),
  last_night_date: date.describe('UTC date of that payout'),
  accrued_today_usd: z.number().describe("In-progress estimate of today's accrual, USD; settles tonight"),
  accrued_today_markets: z.number().int(),
  markets_quoted_24h: z.number().int(),
  total_usd: usd.describe('Gross payouts since since_date, USD'),
  since_date: date,
  best_day_usd: usd,
  capital: z.looseObject({
    cash_usd: z.number(),
    inventory_usd: z.number(),
    positions: z.number().int(),
    at_stake_usd: z.number(),
    as_of: z.string(),
  }).nullable(),
  returns: z.looseObject({
    window_days: z.number().int(),
    from_date: date,
    to_date: date,
    rewards_usd: usd,
    trading_costs_usd: usd,
    net_usd: usd,
    rewards_vs_costs: z.number().nullable(),
    gross_yield_pct: z.number().nullable().describe('Over window_days only; never annualise'),
    net_yield_pct: z.number().nullable(),
  }),
  data_source: z.enum(['polymarket', 'import', 'demo']).nullable()
    .describe('"demo" means the figures are demo data, not real results'),
});
export type StatsRecord = z.infer<typeof StatsRecordSchema>;

export const HealthRecordSchema = z.looseObject({
  status: z.string().describe('"ok", "degraded" or "down"'),
  checked_at: z.string(),
  data: z.looseObject({
    last_payout_date: date,
    payout_age_days: z.number().int().nullable(),
    fresh: z.boolean(),
    last_accrual_at: timestamp,
    accrual_age_minutes: z.number().int().nullable(),
    accrual_fresh: z.boolean(),
  }).nullable(),
  writer: z.looseObject({
    last_heartbeat_at: timestamp,
    alive: z.boolean(),
  }).nullable(),
});
export type HealthRecord = z.infer<typeof HealthRecordSchema>;

const AttributionSchema = z.object({ name: z.string(), url: z.string(), cite: z.string() });

/** What /api/stats, MCP get_stats, the A2A data part and the page all publish. */
export const PublishedStatsSchema = StatsRecordSchema.extend({
  attribution: AttributionSchema,
  notes: z.record(z.string(), z.string()),
});
export type PublishedStats = z.infer<typeof PublishedStatsSchema>;

/** The health record plus whether the API host answered at all. */
export const PublishedHealthSchema = HealthRecordSchema.extend({
  api_host_reachable: z.boolean().describe('false when the edge could not reach the API host'),
});
export type PublishedHealth = z.infer<typeof PublishedHealthSchema>;
