// The owner's side of an audit: opening it in the log, the text the wallet's owner signs, and
// publishing the auditor's attestation, pass or fail (the bundle is ./disclose.ts). Each reads the
// configuration `npm start` reads (.env and the environment) and the database it runs on.
import { existsSync, readFileSync } from 'node:fs';
import { readAttestation } from '../contract/audit/attestation.ts';
import { controlMessage } from '../contract/audit/control.ts';
import { DEMO_WALLET } from '../contract/audit/demo.ts';
import { logIdentity, withStoredLogOrigin } from '../contract/paths.ts';
import { importNoteSigningKey } from '../contract/tlog/note.ts';
import { parseVerifierKey, ED25519_NOTE } from '../contract/tlog/vkey.ts';
import { loadEnv } from '../config/checkout.ts';
import { adminDatabaseUrl } from '../config/database-urls.ts';
import { writerConfigFromEnv, type WriterConfig } from '../config/writer.ts';
import { connectDatabase, SERVER_TIMEOUTS } from '../db-client/pg-connect.ts';

export interface Owner { cfg: WriterConfig; databaseUrl: string }

export function owner(): Owner {
  const env = loadEnv();
  return { cfg: writerConfigFromEnv(env), databaseUrl: adminDatabaseUrl(env) };
}

export async function query<T>(databaseUrl: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = await connectDatabase(databaseUrl, { applicationName: 'stats-audit', timeouts: SERVER_TIMEOUTS });
  try {
    return (await client.query(text, values)).rows as T[];
  } finally {
    await client.end();
  }
}

/** Whether the figures served now are demo data (then the demo log and the demo wallet are the ones opened). */
export async function servingDemo(o: Owner): Promise<boolean> {
  const [row] = await query<{ source: string }>(o.databaseUrl, 'select stats.data_source() as source');
  return row?.source === 'demo';
}

/** The log's origin and verifier key: under the origin its first real checkpoint fixed, once there is one, as the writer signs. */
export async function identity(o: Owner, demo: boolean): Promise<{ origin: string; vkey: string }> {
  if (!o.cfg.log) throw new Error('LOG_SIGNING_KEY is not set, so there is no signed log to audit: run `npm run keys`, then `npm start`.');
  const key = await importNoteSigningKey(o.cfg.log.signingKey, 'LOG_SIGNING_KEY');
  const [stored] = await query<{ origin: string | null }>(o.databaseUrl, 'select stats.log_origin() as origin');
  return logIdentity(withStoredLogOrigin(o.cfg.log.origins, stored?.origin ?? null), key.publicKey, demo);
}

/** The wallet the source pays: the funder address, or the demo's. */
export function walletOf(o: Owner, demo: boolean): string {
  if (demo) return DEMO_WALLET;
  if (!o.cfg.polymarket) throw new Error('No Polymarket account is configured (FUNDER_ADDRESS or POLY_ADDRESS), so there is no wallet to prove.');
  return o.cfg.polymarket.funder.toLowerCase();
}

/** The control message for the wallet the source pays now, or for `wallet`, an earlier one a bundle's section names. */
export async function controlMessageCommand(nonce: string, wallet?: string): Promise<string> {
  const o = owner();
  const demo = await servingDemo(o);
  const { origin, vkey } = await identity(o, demo);
  return controlMessage({ origin, logKey: vkey, wallet: wallet ?? walletOf(o, demo), nonce });
}

export interface OpenOptions { auditor: string; nonceSha256: string; checkpoint: number; sample?: number; nights?: string[] }

/** Appends the audit's opening to the log; returns what it did in one line. */
export async function openAudit(opts: OpenOptions): Promise<string> {
  const key = await parseVerifierKey(opts.auditor).catch((error: Error) => { throw new Error(`--auditor is not a verifier key: ${error.message}`); });
  if (key.type !== ED25519_NOTE) throw new Error('--auditor is not an Ed25519 note key (type 0x01): the auditor makes one with `npm run audit -- keygen`');
  const o = owner();
  const demo = await servingDemo(o);
  const { origin } = await identity(o, demo);
  let index: number;
  try {
    const [row] = await query<{ idx: string }>(o.databaseUrl, 'select stats.open_audit($1, $2, $3, $4, $5::date[]) as idx',
      [opts.auditor, opts.nonceSha256, opts.checkpoint, opts.sample ?? null, opts.nights ?? null]);
    index = Number(row!.idx);
  } catch (error) {
    throw new Error(`no audit was opened: ${(error as Error).message}`);
  }
  const what = opts.sample !== undefined ? `${opts.sample} night${opts.sample === 1 ? '' : 's'} to draw from checkpoint ${opts.checkpoint}` : `the nights ${opts.nights!.join(', ')} (named, within checkpoint ${opts.checkpoint})`;
  return `opened an audit by ${key.name} at entry ${index} of ${origin}${demo ? ' (demo data)' : ''}: ${what}. The writer signs it with its next write (a heartbeat a minute); once a checkpoint the witnesses cosigned holds it, the auditor reveals the nonce.`;
}

/** Stores an auditor's attestation of this log, pass or fail, once; the site serves it under /log/audits. */
export async function publish(file: string): Promise<string> {
  if (!existsSync(file)) throw new Error(`${file} does not exist.`);
  const a = await readAttestation(readFileSync(file, 'utf8'));
  const o = owner();
  const { origin } = await identity(o, false);
  if (a.origin !== origin) throw new Error(`the attestation is of the log "${a.origin}", not of this one ("${origin}").`);
  const [known] = await query<{ n: number }>(o.databaseUrl, 'select count(*)::int as n from stats.log_audit where note = $1', [a.note]);
  if (known && known.n > 0) throw new Error(`${file} is published already.`);
  try {
    await query(o.databaseUrl, 'select stats.publish_audit($1)', [a.note]);
  } catch (error) {
    throw new Error(`${file} was not published: ${(error as Error).message}`);
  }
  const matched = a.nights.filter((n) => n.pass).length;
  const how = a.drawn ? `drawn by rule v2 from checkpoint ${a.checkpointSize}` : `named by the owner, within checkpoint ${a.checkpointSize}`;
  return `published the attestation by ${a.auditor} of ${a.date}: ${a.result}, ${matched} of ${a.nights.length} nights ${how} matched (the audit opened at entry ${a.opening})`;
}
