// The record contract: every field the service publishes, its type and what it means, once. The
// figures come from landing_stats()/landing_history()/landing_health() unchanged (SQL is the one truth); these
// schemas check what arrived, give MCP its output schemas, and generate the OpenAPI component
// schemas (site/render/schemas.ts). The top-level records are open, because the published record is
// abridged: a field the SQL adds later passes through. The nested objects are closed.
import { z } from 'zod';

/** Named schemas of the contract: each becomes #/components/schemas/<id> in the OpenAPI document. */
export const contract = z.registry<{ id: string }>();

const date = z.iso.date();
const timestamp = z.iso.datetime();
const count = z.int().min(0);

export const DailyPayoutSchema = z.object({
  date: date.describe("Payout date (UTC). The payout settled at 00:00 UTC and covers the prior day's activity."),
  usd: z.number().min(0).describe('Gross reward payout for that night, USD. Gross reward income, not profit.'),
}).describe('One settled night.').register(contract, { id: 'DailyPayout' });

export const CapitalSchema = z.object({
  cash_usd: z.number().describe('Cash held, USD.'),
  inventory_usd: z.number().describe('Value of filled inventory, USD.'),
  positions: count.describe('Count of positions.'),
  at_stake_usd: z.number().describe('Total capital at stake, USD: cash plus inventory.'),
  as_of: timestamp.describe('Time of the snapshot (ISO 8601 UTC).'),
}).describe('Capital snapshot.').register(contract, { id: 'Capital' });

export const ReturnsSchema = z.object({
  window_days: z.int().min(1).describe('Length of the window in days (15 by default).'),
  from_date: date.nullable().describe('Window start: to_date - window_days + 1.'),
  to_date: date.nullable().describe('Window end: last_night_date.'),
  rewards_usd: z.number().nullable().describe("Reward income in the window, USD: the sum of the window's nightly payouts as published (each in cents), so it foots with them."),
  trading_costs_usd: z.number().nullable().describe('Cost of unwinding filled inventory in the window, USD (signed: a gain from unwinding is a negative cost); null when no cost is recorded in the window. The sum of the window\'s daily costs as published (each in cents).'),
  net_usd: z.number().nullable().describe('rewards_usd minus trading_costs_usd as published, USD; may be negative.'),
  rewards_vs_costs: z.number().nullable().describe('rewards_usd divided by trading_costs_usd as published; null when costs are zero or negative.'),
  gross_yield_pct: z.number().nullable().describe('Gross yield over the window: rewards_usd as a percent of the mean of each window day\'s last capital at stake (in cents; the mean rounded to cents once). Covers window_days only: never annualise it.'),
  net_yield_pct: z.number().nullable().describe('Net yield over the window: net_usd as a percent of the same capital base; may be negative. Never annualised.'),
}).describe('Trailing-window returns. The window ends at last_night_date; every field but window_days is null before the first payout, and the yields are null without a capital base.').register(contract, { id: 'Returns' });

export const LogHeadSchema = z.object({
  origin: z.string().describe("The log's origin (https://c2sp.org/tlog-checkpoint)."),
  size: z.int().min(1).describe('The tree size of its latest signed checkpoint.'),
  root: z.string().describe('That checkpoint\'s root hash, base64.'),
}).describe('The transparency log state a record was computed against: its latest signed checkpoint. Every signed answer names it in its Log-Checkpoint field.').register(contract, { id: 'LogCheckpoint' });
export type LogHead = z.infer<typeof LogHeadSchema>;

export const AuditSchema = z.object({
  date: date.describe('The day the auditor checked (UTC), as its signed attestation states.'),
  auditor: z.string().describe("The auditor's key name: the name on its attestation's signature line (https://c2sp.org/signed-note). Only an auditor the log's published policy lists ({base_url}/log/policy, an `auditor` line) is shown here."),
  chosen: z.enum(['drawn', 'named']).describe('How the nights were chosen: "drawn" at random from the checkpoint\'s root and the auditor\'s secret nonce, after the audit was opened in the log (the owner could not steer the draw); "named" by the owner, so they were not drawn at random and say nothing of the nights not named.'),
  result: z.enum(['pass', 'fail']).describe('The audit\'s outcome as the auditor signed it: "pass" only when every night checked matched the chain; failed audits are published and shown too.'),
  nights_checked: z.int().min(1).describe("How many nights the auditor checked against the chain: each night's log entry carries a commitment to that night's reward transfers (`transfers`), which the auditor opened and compared with the transfers on the chain."),
  nights_matched: count.describe('How many of those nights matched: the transfers committed to are on the chain as committed. Fewer than nights_checked means a night did not match.'),
  checkpoint_size: z.int().min(1).describe("The tree size of the log's signed checkpoint the nights were chosen from and judged within: a night corrected after it fails."),
  published_at: timestamp.describe('When the attestation was published here (ISO 8601 UTC).'),
}).describe("The latest independent audit by an auditor the log's policy lists: its signed attestation of a few nights' reward transfers checked against the chain, pass or fail. It covers those nights only, not the figures as a whole. Every attestation, signed, is at {base_url}/log/audits.").register(contract, { id: 'Audit' });
export type Audit = z.infer<typeof AuditSchema>;

const logCheckpoint = LogHeadSchema.nullable().describe('The transparency log state this record was computed against (its latest signed checkpoint); null before the log has one.');

export const StatsRecordSchema = z.looseObject({
  updated_at: timestamp.nullable().describe('Time the figures were produced: the latest time a published figure changed (ISO 8601 UTC); null before any data. Cite it when reporting the figures.'),
  daily: z.array(DailyPayoutSchema).max(16).describe('Payouts of the last 16 settled nights, oldest first; empty before any payout.'),
  last_night_usd: z.number().min(0).nullable().describe('Payout of the latest settled night, USD (gross).'),
  last_night_date: date.nullable().describe('Date of that night (UTC).'),
  accrued_today_usd: z.number().min(0).describe("In-progress estimate of today's accrual, USD; grows through the day and settles tonight. 0 when none yet today. An estimate: never compare it with a settled night."),
  accrued_today_markets: count.describe('Number of markets accruing today; 0 when none yet today.'),
  markets_quoted_24h: count.describe('Markets quoted in the last 24 hours; 0 when the latest observation is older than 24 hours.'),
  total_usd: z.number().min(0).nullable().describe('All-time gross payout total since since_date, USD: the sum of the nightly payouts as published (each in cents), so adding up the nights of the history reaches it exactly.'),
  since_date: date.nullable().describe('Date from which the totals count.'),
  best_day_usd: z.number().min(0).nullable().describe('Highest single-night gross payout, USD.'),
  worst_day_usd: z.number().min(0).nullable().describe('Lowest single-night gross payout since since_date, USD; null before any payout.'),
  capital: CapitalSchema.nullable().describe('Capital snapshot; null when there is none.'),
  returns: ReturnsSchema,
  data_source: z.enum(['polymarket', 'import', 'demo']).nullable()
    .describe('Where the figures come from; "demo" means demo data, not the real account; null before any data.'),
  log_checkpoint: logCheckpoint,
  audit: AuditSchema.nullable().describe("The latest published audit attestation by an auditor the log's policy lists (the latest by published_at); null until one is published."),
  audits_unfinished: count.describe('How many audits were opened in the log (each begins with an entry naming its auditor, before anyone knows which nights it draws) and have no published attestation: audits under way, or abandoned.'),
}).describe('The stats record (abridged: further top-level fields may appear). "No data" is null, never a made-up zero, except today\'s accrual and breadth, which are 0 when there is nothing for today.').register(contract, { id: 'StatsRecord' });
export type StatsRecord = z.infer<typeof StatsRecordSchema>;

export const HistoryNightSchema = z.object({
  date: date.describe("Payout date (UTC). The payout settled at 00:00 UTC and covers the prior day's activity."),
  usd: z.number().min(0).describe('Gross reward payout for that night, USD. Gross reward income, not profit.'),
  total_usd: z.number().min(0).describe('Running gross payout total from since_date through this night, USD: the sum of the usd values published for those nights.'),
  trading_cost_usd: z.number().nullable().describe("That date's cost of unwinding filled inventory, USD (signed: a gain is a negative cost); null when none is recorded."),
  at_stake_usd: z.number().nullable().describe("The capital base the returns use for that day: the day's last snapshot of capital at stake, USD; null when the day has none."),
  updated_at: timestamp.describe("When that night's payout was first recorded or last corrected (ISO 8601 UTC)."),
  log_index: count.nullable().describe("Index of the transparency log's latest signed entry for this night (its leaf in the tree at {base_url}/log/); null until the night is final, three days after its date."),
  witnessed_at: timestamp.nullable().describe("When the witnesses' quorum first cosigned a checkpoint holding this night's first log entry (ISO 8601 UTC, the completing cosignature's own time); null while none has, or when the log has no witness policy."),
  witnessed_on_time: z.boolean().nullable().describe('true when that cosigning came no later than its date plus four days (final after three, plus one), so the night cannot have been made up later; false when it came later or has not come by then (logged late: imported, or a log behind); null without a witness policy, or while the night is not yet due.'),
}).describe('One settled night of the track record.').register(contract, { id: 'HistoryNight' });

export const HistoryRecordSchema = z.looseObject({
  updated_at: timestamp.nullable().describe('Time the figures were produced, as in the stats record; null before any data. Cite it.'),
  since_date: date.nullable().describe('Date from which the track record and its running total count; null before any payout.'),
  data_source: z.enum(['polymarket', 'import', 'demo']).nullable()
    .describe('Where the figures come from; "demo" means demo data, not the real account; null before any data.'),
  nights: z.array(HistoryNightSchema).describe('Every settled night since since_date, oldest first; empty before any payout.'),
  log_checkpoint: logCheckpoint,
}).describe('The whole track record: every settled night with its running gross total, trading cost and capital base.').register(contract, { id: 'HistoryRecord' });
export type HistoryRecord = z.infer<typeof HistoryRecordSchema>;

const CosignatureLine = z.string().describe('A cosignature/v1 note signature line (https://c2sp.org/tlog-cosignature): "— <witness key name> <base64(key ID || timestamp || signature)>".');

export const LogCheckpointSchema = z.object({
  size: z.int().min(1).describe('The tree size.'),
  root: z.string().describe('The root hash, base64.'),
  note: z.string().describe("The checkpoint as the log's signer signed it: a signed note (https://c2sp.org/signed-note) with the log's signature only."),
  signed_at: timestamp.describe('When it was signed, by the database clock (ISO 8601 UTC).'),
  quorum_at: timestamp.nullable().describe("When the witnesses' quorum first cosigned it: the completing cosignature's own time; null while it has not."),
  cosignatures: z.array(CosignatureLine).describe("Each witness's earliest cosignature of it, by witness name."),
}).describe('One signed checkpoint of the log.');

export const PublishedAuditSchema = z.object({
  note: z.string().describe("The attestation as its auditor signed it, verbatim: a signed note (https://c2sp.org/signed-note) whose body names the log's origin and key, the checkpoint the nights were judged within (its size and root), the audit's opening entry, how the nights were chosen (drawn with the auditor's nonce, or named by the owner), the chain, the payer list's hash, each night with its entry and result, the overall result (pass or fail), the day and the auditor's verifier key, followed by the auditor's signature line."),
  published_at: timestamp.describe('When it was published here (ISO 8601 UTC).'),
  listed: z.boolean().describe("Whether the log's policy ({base_url}/log/policy) lists its auditor (an `auditor` line); an attestation by a key it does not list is kept here and never shown as the audit."),
}).describe('One published audit attestation.').register(contract, { id: 'PublishedAudit' });

/** What {base_url}/log/audits serves. */
export const AuditsRecordSchema = z.object({
  audits: z.array(PublishedAuditSchema).describe('Every published attestation, oldest first; empty until one is published.'),
}).describe("Every independent audit attestation published for the log, verbatim, passed or failed: each is a signed note an auditor's Ed25519 key signed, stating how the nights were chosen, each night's result and the audit's.").register(contract, { id: 'AuditsRecord' });
export type AuditsRecord = z.infer<typeof AuditsRecordSchema>;

export const LogRecordSchema = z.looseObject({
  updated_at: timestamp.nullable().describe('When the log last changed: a checkpoint signed, a cosignature received or a witnessing round (ISO 8601 UTC); null while the log is empty.'),
  demo: z.boolean().nullable().describe('true while the log holds demo nights (a log of its own, removed when real data arrive); null before any data.'),
  vkey: z.string().nullable().describe("The note verifier key that signed the latest checkpoint (https://c2sp.org/signed-note#verifier-keys); null before any."),
  log_checkpoint: logCheckpoint,
  policy: z.string().nullable().describe("The witness policy the log is cosigned under (https://c2sp.org/tlog-policy); null: the log is not witnessed."),
  entries: z.array(z.string()).describe('Every entry the latest checkpoint covers, in log order, each RFC 8785 canonical JSON: a final night (date, usd, trading_cost_usd, at_stake_usd, updated_at, supersedes: the index of the entry it corrects, or null, and, when the night has one, transfers: a commitment to its reward transfers, base64), or a wallet commitment (kind "wallet", wallet: the commitment, base64, and replaces: the index of the wallet entry it follows, or null).'),
  checkpoints: z.array(LogCheckpointSchema).describe('Every checkpoint ever signed, smallest first.'),
  cosignatures: z.array(CosignatureLine).describe("Each witness's latest cosignature of the latest checkpoint."),
  witnessing: z.object({
    at: timestamp,
    size: z.int().min(1),
    witnesses: z.int().min(1).describe('How many witnesses the policy names.'),
    cosigned: z.array(z.string()).describe('The witnesses holding a fresh cosignature of that checkpoint.'),
    quorum_met: z.boolean(),
  }).nullable().describe('The latest round of asking the witnesses; null before any.'),
  halted: z.object({ at: timestamp, reason: z.string() }).nullable()
    .describe('Why the log stopped growing (its new tree did not extend what was signed, or a witness saw a larger tree); null while it grows.'),
  audits: z.array(PublishedAuditSchema).describe('Every published audit attestation, oldest first.'),
}).describe("The transparency log: its entries (the leaves of the Merkle tree served as tiles at {base_url}/log/), its signed checkpoints and the witnesses' cosignatures.").register(contract, { id: 'LogRecord' });
export type LogRecord = z.infer<typeof LogRecordSchema>;

export const HealthDataSchema = z.object({
  last_payout_date: date.nullable().describe('Date of the latest payout; null before any.'),
  payout_age_days: count.nullable().describe('Age of that payout in days.'),
  fresh: z.boolean().describe('Payout data freshness (age at most 1 day by default).'),
  last_accrual_at: timestamp.nullable().describe('Time of the latest accrual; null before any.'),
  accrual_age_minutes: count.nullable().describe('Age of that accrual in whole minutes, rounded down.'),
  accrual_fresh: z.boolean().describe('Accrual data freshness (age at most 15 minutes by default).'),
  replica_lag_seconds: count.nullable().describe(
    'How far the data trails the primary database when this answer comes from a read replica, in whole seconds: 0 while the replica streams from the primary and has replayed all it has received, else (behind, or not streaming) the age of the last change it has replayed (an upper bound). Past 60 s by default the status is "degraded". null when the answer comes from the primary itself, or from a replica that has replayed no change since it started and is not caught up (then "degraded").',
  ),
  replica_streaming: z.boolean().nullable().describe(
    'Whether the read replica this answer comes from is receiving the primary\'s changes now (its WAL receiver is streaming); false makes the status "degraded" at once, whatever the lag. null when the answer comes from the primary itself.',
  ),
  tls: z.object({
    expires_at: timestamp.nullable().describe('When the certificate served now expires: the earliest notAfter among the served certificates (ISO 8601 UTC); null while none has been obtained.'),
    obtaining: z.boolean().describe('true while the first certificate is being obtained from the ACME server.'),
    error: z.string().nullable().describe('Why the latest attempt to obtain or renew the certificate failed; null when it did not.'),
  }).optional().describe('The HTTPS certificate of this host, added by its gateway; absent when the service is served over plain HTTP. Under 14 days before expires_at, or while obtaining, the status is "degraded".'),
}).describe('Data freshness.').register(contract, { id: 'HealthData' });

export const WriterLivenessSchema = z.object({
  last_heartbeat_at: timestamp.nullable().describe('Time of the latest heartbeat; null before any.'),
  alive: z.boolean().describe('Whether the writer is alive (heartbeat under 5 minutes old by default).'),
  name: z.string().nullable().describe("Name of the writer that wrote the latest heartbeat: the one writing now while alive is true. An operator-chosen name or one the writer drew at random when it started, never a host or an address; another name means another writer (a standby, or a restart) took over. null before any heartbeat, or when the latest was imported."),
}).describe('Liveness of the process that writes the data.').register(contract, { id: 'WriterLiveness' });

export const LogHealthSchema = z.object({
  size: count.describe('Entries in the latest signed checkpoint.'),
  witnessed: z.boolean().describe('Whether the log works under a witness policy; false: nobody else holds its checkpoints.'),
  witnesses: z.int().min(0).nullable().describe('How many witnesses the policy names (0 for one that trusts none, `quorum none`); null without a policy or before the first round.'),
  cosigned: count.nullable().describe('How many of them hold a fresh cosignature of the latest checkpoint; null without a policy.'),
  checked_at: timestamp.nullable().describe('When the witnesses were last asked; null without a policy or before the first round.'),
  quorum_cosigned_at: timestamp.nullable().describe("When the policy's quorum last cosigned; past 26 hours the status is \"degraded\"."),
  halted: z.string().nullable().describe('Why the log has stopped growing; null while it grows. A halted log makes the status "degraded".'),
  waiting: z.string().nullable().describe('"written on one node, waiting for a standby" while the database fails over by itself and no standby that could take over holds what its primary writes: the newest nights are stored there alone, and the writer signs them only once a standby holds them. Makes the status "degraded". null otherwise.'),
}).describe("The transparency log's state.").register(contract, { id: 'LogHealth' });

export const HealthRecordSchema = z.looseObject({
  status: z.enum(['ok', 'degraded', 'down'])
    .describe('"ok" when payouts and accruals are fresh, the writer is alive and (on a read replica) the replica streams from the primary and its data trails it by no more than the bound; "degraded" otherwise; "down" when the database cannot be reached.'),
  checked_at: timestamp.describe('Time of the check (ISO 8601 UTC).'),
  data: HealthDataSchema.nullable().describe('Data freshness; null when down.'),
  writer: WriterLivenessSchema.nullable().describe('Writer liveness; null when down.'),
  log: LogHealthSchema.nullable().optional().describe("The transparency log's state; null or absent when down."),
}).describe('The health record. Read status, not the HTTP status code.').register(contract, { id: 'HealthRecord' });
export type HealthRecord = z.infer<typeof HealthRecordSchema>;

const AttributionSchema = z.object({
  name: z.string().describe("The service's name."),
  url: z.url().describe("The service's address ({base_url})."),
  cite: z.string().describe('How to cite the figures, including updated_at.'),
}).describe("Who to credit: the service's name and address, with a sentence asking to cite updated_at.");

/** What /api/stats, MCP get_stats, the A2A data part and the page all publish. */
export const PublishedStatsSchema = StatsRecordSchema.extend({
  attribution: AttributionSchema,
  notes: z.record(z.string(), z.string()).describe('The reporting rules of the figures in plain words, by topic.'),
}).describe('The stats record plus attribution and plain-words notes on the reporting rules.').register(contract, { id: 'SiteStatsRecord' });
export type PublishedStats = z.infer<typeof PublishedStatsSchema>;

/** The health record plus whether the API host answered at all. */
export const PublishedHealthSchema = HealthRecordSchema.extend({
  api_host_reachable: z.boolean().nullable()
    .describe("false when the API host could not be reached; null when the site's application server itself is not answering."),
}).describe("The health record plus whether the site host's edge reached the API host.").register(contract, { id: 'SiteHealthRecord' });
export type PublishedHealth = z.infer<typeof PublishedHealthSchema>;

/**
 * The health record while the database cannot be reached, as of `checkedAt` (ISO 8601 UTC, no
 * fraction). The edge says it, and so does the API host's gateway while PostgREST does not answer
 * (in its nginx template, where no code runs; a test holds the copy to this).
 */
export function downHealth(checkedAt: string): HealthRecord {
  return { status: 'down', checked_at: checkedAt, data: null, writer: null };
}

/** What the site host's gateway says while the edge itself does not answer (its nginx template's copy). */
export function edgeDownHealth(checkedAt: string): PublishedHealth {
  return { ...downHealth(checkedAt), api_host_reachable: null };
}
