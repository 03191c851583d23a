// Shared pieces of the SQL tests of the audits: auditors' keys, the policy that lists one, audit
// openings through stats.open_audit, and attestations whose body is written by the contract's own
// attestationBody, signed in form only (Postgres checks the signature line's name, not its bytes).
import type pg from 'pg';
import { attestationBody, type AttestedNight } from '../../contract/audit/attestation.ts';
import { nonceSha256 } from '../../contract/audit/opening.ts';
import { ORIGIN, ROOT } from './log-commitments.ts';

export const AUDITOR_KEY = `auditor.example+0a1b2c3d+${Buffer.alloc(33, 7).toString('base64')}`;
/** Another auditor's key, which no policy of these tests lists. */
export const OTHER_KEY = `other.example+1a2b3c4d+${Buffer.alloc(33, 8).toString('base64')}`;
export const LOG_KEY = `${ORIGIN}+2a3b4c5d+${Buffer.alloc(33, 1).toString('base64')}`;
export const NONCE = 'the-auditors-nonce.0123456789abcdef';
export const PAYERS_SHA256 = 'ab'.repeat(32);
const SIGNATURE = Buffer.alloc(68, 9).toString('base64');

/** A witness policy (https://c2sp.org/tlog-policy) of the log that lists `auditors`, recorded as the writer records it. */
export async function listAuditors(c: pg.Client, ...auditors: string[]) {
  const policy = [`log ${LOG_KEY}`, 'quorum none', ...auditors.map((a) => `auditor ${a}`), ''].join('\n');
  await c.query('insert into stats.log_policy (policy) values ($1)', [policy]);
}

export interface Opening { auditor?: string; nonce?: string; checkpoint?: number; sample?: number | null; nights?: string[] | null }

/** stats.open_audit as `npm run audit -- open` calls it; a draw of one night from checkpoint 2 by default. Returns the opening's index. */
export async function openAudit(c: pg.Client, o: Opening = {}): Promise<number> {
  const nights = o.nights ?? null;
  const sample = o.sample === undefined ? (nights ? null : 1) : o.sample;
  const { rows } = await c.query('select stats.open_audit($1, $2, $3::bigint, $4::integer, $5::date[])::int as idx',
    [o.auditor ?? AUDITOR_KEY, nonceSha256(o.nonce ?? NONCE), o.checkpoint ?? 2, sample, nights]);
  return rows[0].idx;
}

export interface AttestationText {
  nights?: AttestedNight[];
  size?: number;
  root?: string;
  origin?: string;
  opening?: number;
  /** The nonce the nights were drawn with; null: named by the owner. */
  nonce?: string | null;
  /** How many were drawn: the nights' count unless given. */
  k?: number;
  result?: 'pass' | 'fail';
  date?: string;
  auditorKey?: string;
  signer?: string;
}

/**
 * An attestation as its body is specified, signed (in form only) by `signer`: by default auditor.example's
 * draw of one night, 2026-03-06 (entry 0), from checkpoint 2 with NONCE, opened at entry 2, which passed.
 */
export function attestation(o: AttestationText = {}): string {
  const nights = o.nights ?? [{ date: '2026-03-06', index: 0, pass: true }];
  const body = attestationBody({
    origin: o.origin ?? ORIGIN, logKey: LOG_KEY, checkpointSize: o.size ?? 2, checkpointRoot: o.root ?? ROOT, opening: o.opening ?? 2,
    drawn: o.nonce === null ? null : { k: o.k ?? nights.length, nonce: o.nonce ?? NONCE }, chainId: 137, payersSha256: PAYERS_SHA256,
    nights, result: o.result ?? (nights.every((n) => n.pass) ? 'pass' : 'fail'), date: o.date ?? '2026-03-09', auditorKey: o.auditorKey ?? AUDITOR_KEY,
  });
  return `${body}\n— ${o.signer ?? 'auditor.example'} ${SIGNATURE}\n`;
}

/** stats.publish_audit, and the row it published as these tests compare it. */
export const publish = async (c: pg.Client, note: string) => (await c.query(`select a.note, a.auditor, a.auditor_key, a.audit_date, a.origin,
  a.checkpoint_size::int, a.checkpoint_root, a.chain_id, array_to_string(a.nights, ',') as nights, a.nights_matched, a.opening_idx::int,
  a.chosen, a.sample_k, a.nonce, a.log_key, a.payers_sha256, a.result, stats.iso(a.published_at) as published
  from stats.publish_audit($1) a`, [note])).rows[0];

/** The stats record as of the wall clock: an audit is published at clock_timestamp(), after the transaction's now(). */
export const statsNow = async (c: pg.Client) => (await c.query('select stats.stats_at(clock_timestamp()) as r')).rows[0].r;
export const logRecord = async (c: pg.Client) => (await c.query('select stats.log_record() as r')).rows[0].r;
