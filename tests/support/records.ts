// Fixed records in the shapes the API host returns (checked against the record schemas), for tests
// that exercise the edge's routing and wording without a database: twenty settled nights, the
// latest three not yet final, and the stats and health records that go with them; a variant leaves
// nights out, or has the log witnessed under a policy.
import {
  HealthRecordSchema,
  HistoryRecordSchema,
  LogRecordSchema,
  StatsRecordSchema,
  type HealthRecord,
  type Audit,
  type HistoryRecord,
  type LogRecord,
  type StatsRecord,
} from '../../contract/records.ts';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { newAuditorKey, signAttestation, type Attestation, type AttestedNight, type AuditorKey } from '../../contract/audit/attestation.ts';
import { base64, noteVerifierKey } from '../../contract/log-key.ts';
import { logOrigin } from '../../contract/paths.ts';
import { buildTree } from '../../contract/tlog/merkle.ts';
import { checkpointBody, importNoteSigningKey, signNote } from '../../contract/tlog/note.ts';
import { cosign } from '../../contract/tlog/cosignature.ts';
import { cosignerVerifierKey } from '../../contract/tlog/vkey.ts';

export const FIXED_NIGHTS = 20;
const FIRST_NIGHT = Date.UTC(2025, 2, 1);
const DAY_MS = 86_400_000;
/** When the fixed figures were produced: the morning after the last night. */
export const FIXED_UPDATED_AT = '2025-03-20T06:00:00Z';

/** The log state the fixed records name (the fixed log's own checkpoint is made with a fresh key, so its root differs). */
export const FIXED_LOG_HEAD = { origin: 'stats.example.org/log', size: 17, root: 'm0nvSgPtkMY1wGjWUNaSZ9UzxNFyTZNQmnJlrSxfV2w=' };

const dateOf = (i: number) => new Date(FIRST_NIGHT + i * DAY_MS).toISOString().slice(0, 10);
const cents = (value: number) => Math.round(value * 100) / 100;

export interface FixtureVariant {
  /** The nights (0 is the first) the record has no figure for; never the first. */
  gaps?: readonly number[];
  /**
   * The log is cosigned by FIXED_WITNESSES, both needed: their quorum first cosigned at
   * FIRST_QUORUM_AT, and then each night an hour after it turned final, so the nights more than
   * four days older were logged late; the last final night still awaits them.
   */
  witnessed?: boolean;
  /** The audit attestations the log has published, oldest first (none by default). */
  audits?: LogRecord['audits'];
}

export const FIXED_WITNESSES = ['alice.example/witness', 'bob.example/witness'] as const;
export const FIRST_QUORUM_AT = '2025-03-08T12:00:00Z';
/** The last final night: the witnesses have not cosigned it yet. */
const LAST_FINAL = FIXED_NIGHTS - 4;
const isFinal = (i: number) => i <= LAST_FINAL;

/** When the witnesses' quorum first cosigned night i, in the witnessed variant. */
function witnessedAt(i: number): string | null {
  if (!isFinal(i) || i === LAST_FINAL) return null;
  const final = `${dateOf(i + 3)}T01:00:00Z`;
  return Date.parse(final) > Date.parse(FIRST_QUORUM_AT) ? final : FIRST_QUORUM_AT;
}

/** The history record: usd grows and dips by a fixed pattern, each night recorded the morning after. */
export function fixedHistory(source: 'polymarket' | 'demo' = 'polymarket', { gaps = [], witnessed = false }: FixtureVariant = {}): HistoryRecord {
  let total = 0;
  let logIndex = 0;
  const nights = Array.from({ length: FIXED_NIGHTS }, (_, i) => i).filter((i) => !gaps.includes(i)).map((i) => {
    const usd = cents(30 + ((i * 7) % 11) * 1.37);
    total = cents(total + usd);
    const at = witnessed ? witnessedAt(i) : null;
    return {
      date: dateOf(i),
      usd,
      total_usd: total,
      trading_cost_usd: i % 4 === 0 ? null : cents(4 + (i % 3) * 0.5),
      at_stake_usd: cents(2500 + i * 10),
      updated_at: `${dateOf(i + 1)}T00:05:00Z`,
      log_index: isFinal(i) ? logIndex++ : null,
      witnessed_at: at,
      witnessed_on_time: at === null ? null : Date.parse(at) <= FIRST_NIGHT + (i + 4) * DAY_MS,
    };
  });
  return HistoryRecordSchema.parse({ updated_at: FIXED_UPDATED_AT, since_date: dateOf(0), data_source: source, nights, log_checkpoint: FIXED_LOG_HEAD });
}

/** The stats record of the same nights, as landing_stats returns it; `audit`: the latest audit it names (none by default). */
export function fixedStats(source: 'polymarket' | 'demo' = 'polymarket', audit: Audit | null = null): StatsRecord {
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
    audit,
    audits_unfinished: 0,
  });
}

const newKey = (name: string) => importNoteSigningKey(generateKeyPairSync('ed25519').privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64url'), name);

/**
 * The transparency log: the final nights as canonical JSON entries (keys sorted), in log order, and
 * one checkpoint of them signed with a key made for the fixture, under the fixed site's origin. The
 * witnessed variant has a policy and two checkpoints, each signed as its last night turned final:
 * the one before the latest cosigned by both witnesses (the quorum's latest), the latest by the
 * first only.
 */
export async function fixedLog(siteUrl = 'https://stats.example.org', variant: FixtureVariant = {}): Promise<LogRecord> {
  const final = fixedHistory('polymarket', variant).nights.filter((n) => n.log_index !== null);
  const entries = final.map((n) => JSON.stringify({
    at_stake_usd: n.at_stake_usd, date: n.date, supersedes: null, trading_cost_usd: n.trading_cost_usd, updated_at: n.updated_at, usd: n.usd,
  }));
  const tree = await buildTree(entries.map((e) => new TextEncoder().encode(e)));
  const origin = logOrigin({ siteUrl }, false);
  const key = await newKey('fixture');
  const vkey = await noteVerifierKey(origin, key.publicKey);
  const head = { origin, size: tree.size, root: base64(await tree.root()) };
  const checkpoint = async (size: number, signedAt: string) => {
    const body = checkpointBody(origin, size, await tree.root(size));
    return { body, signed: { size, root: base64(await tree.root(size)), note: await signNote(body, origin, key.privateKey, key.publicKey), signed_at: signedAt } };
  };
  if (!variant.witnessed) {
    const latest = await checkpoint(tree.size, final.at(-1)!.updated_at);
    return LogRecordSchema.parse({
      updated_at: latest.signed.signed_at, demo: false, vkey, policy: null, entries, log_checkpoint: head,
      checkpoints: [{ ...latest.signed, quorum_at: null, cosignatures: [] }],
      cosignatures: [], witnessing: null, halted: null, audits: variant.audits ?? [],
    });
  }
  const witnesses = await Promise.all(FIXED_WITNESSES.map(async (name) => ({ name, short: name.split('.')[0]!, key: await newKey(name) })));
  const cosigned = (body: string, at: string, by = witnesses) =>
    Promise.all(by.map(async (w) => (await cosign(body, w.name, w.key.privateKey, w.key.publicKey, Date.parse(at) / 1000)).trimEnd()));
  const quorumAt = final.at(-2)!.witnessed_at!;
  const before = await checkpoint(tree.size - 1, `${quorumAt.slice(0, 10)}T00:05:00Z`);
  const latest = await checkpoint(tree.size, `${dateOf(LAST_FINAL + 3)}T00:05:00Z`);
  const roundAt = `${dateOf(LAST_FINAL + 3)}T00:06:00Z`;
  const latestLines = await cosigned(latest.body, roundAt, witnesses.slice(0, 1));
  const policy = [
    `log ${vkey}`,
    ...(await Promise.all(witnesses.map(async (w) => `witness ${w.short} ${await cosignerVerifierKey(w.name, w.key.publicKey)} https://${w.name}`))),
    `group both all ${witnesses.map((w) => w.short).join(' ')}`,
    'quorum both',
    '',
  ].join('\n');
  return LogRecordSchema.parse({
    updated_at: roundAt, demo: false, vkey, policy, entries, log_checkpoint: head,
    checkpoints: [
      { ...before.signed, quorum_at: quorumAt, cosignatures: await cosigned(before.body, quorumAt) },
      { ...latest.signed, quorum_at: null, cosignatures: latestLines },
    ],
    cosignatures: latestLines,
    witnessing: { at: roundAt, size: tree.size, witnesses: witnesses.length, cosigned: [witnesses[0]!.name], quorum_met: false },
    halted: null,
    audits: variant.audits ?? [],
  });
}

export interface AttestationFacts {
  /** The log's origin and verifier key, and the signed checkpoint the nights were judged within. */
  origin: string;
  logKey: string;
  size: number;
  root: string;
  /** The index of the audit's opening entry. */
  opening: number;
  /** The auditor's nonce the nights were drawn with (as many as were checked); absent when the owner named them. */
  nonce?: string;
  /** Each night checked: its latest entry within the checkpoint (null when none), and whether it matched the chain. */
  nights: AttestedNight[];
  /** The day audited (YYYY-MM-DD). */
  date: string;
  /** The auditor's key name. */
  auditor: string;
}

/** A fixed SHA-256 of a payer list: the tests check that it is carried, not which list it is. */
const PAYERS_SHA256 = createHash('sha256').update('the payer list a test names').digest('hex');

/** The attestation the facts make, unsigned, as contract/audit/attestation.ts writes it. */
export const attestationOf = (a: AttestationFacts): Omit<Attestation, 'auditorKey'> => ({
  origin: a.origin, logKey: a.logKey, checkpointSize: a.size, checkpointRoot: a.root, opening: a.opening,
  drawn: a.nonce === undefined ? null : { k: a.nights.length, nonce: a.nonce }, chainId: 137, payersSha256: PAYERS_SHA256,
  nights: a.nights, result: a.nights.every((n) => n.pass) ? 'pass' : 'fail', date: a.date,
});

/**
 * An audit attestation as an auditor signs it, with `key` or a key made for the test: a signed note
 * (https://c2sp.org/signed-note) whose body states what was checked, then its signature line.
 */
export async function signedAttestation(a: AttestationFacts, key?: AuditorKey): Promise<string> {
  return signAttestation(attestationOf(a), key ?? await newAuditorKey(a.auditor));
}

/** What the stats record says of an attestation published at `publishedAt`. */
export const auditOf = (a: AttestationFacts, publishedAt: string): Audit => {
  const { drawn, result } = attestationOf(a);
  return {
    date: a.date, auditor: a.auditor, chosen: drawn ? 'drawn' : 'named', result, nights_checked: a.nights.length,
    nights_matched: a.nights.filter((n) => n.pass).length, checkpoint_size: a.size, published_at: publishedAt,
  };
};

/** An "ok" health record checked at `checkedAt`. */
export function fixedHealth(checkedAt = '2025-03-20T06:01:00Z'): HealthRecord {
  return HealthRecordSchema.parse({
    status: 'ok',
    checked_at: checkedAt,
    data: { last_payout_date: dateOf(FIXED_NIGHTS - 1), payout_age_days: 0, fresh: true, last_accrual_at: '2025-03-20T05:58:00Z', accrual_age_minutes: 3, accrual_fresh: true, replica_lag_seconds: null, replica_streaming: null },
    writer: { last_heartbeat_at: '2025-03-20T06:00:30Z', alive: true, name: 'writer-a' },
  });
}
