// The owner's side of an audit: the text the wallet's owner signs, the bundle that opens chosen
// nights to one auditor, and publishing the auditor's attestation. Each reads the configuration
// `npm start` reads (.env and the environment) and the database it runs on.
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { readAttestation } from '../contract/audit/attestation.ts';
import { readSalt, walletCommitment } from '../contract/audit/commitment.ts';
import { controlMessage } from '../contract/audit/control.ts';
import { DEMO_WALLET, demoNightTransfers, DemoVault } from '../contract/audit/demo.ts';
import { drawNights, sampleCandidates } from '../contract/audit/sample.ts';
import { FileVault, type TransferVault } from '../contract/audit/transfer-vault.ts';
import { logIdentity, withStoredLogOrigin } from '../contract/paths.ts';
import { buildTree } from '../contract/tlog/merkle.ts';
import { importNoteSigningKey } from '../contract/tlog/note.ts';
import { loadEnv } from '../config/checkout.ts';
import { adminDatabaseUrl } from '../config/database-urls.ts';
import { writerConfigFromEnv, type WriterConfig } from '../config/writer.ts';
import { connectDatabase, SERVER_TIMEOUTS } from '../db-client/pg-connect.ts';
import { BUNDLE_FORMAT, BUNDLE_WARNING, type Bundle, type BundleNight } from './bundle.ts';

interface Owner { cfg: WriterConfig; databaseUrl: string }

function owner(): Owner {
  const env = loadEnv();
  return { cfg: writerConfigFromEnv(env), databaseUrl: adminDatabaseUrl(env) };
}

async function query<T>(databaseUrl: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = await connectDatabase(databaseUrl, { applicationName: 'stats-audit', timeouts: SERVER_TIMEOUTS });
  try {
    return (await client.query(text, values)).rows as T[];
  } finally {
    await client.end();
  }
}

/** Whether the figures served now are demo data (then the demo log and the demo wallet are the ones opened). */
async function servingDemo(o: Owner): Promise<boolean> {
  const [row] = await query<{ source: string }>(o.databaseUrl, 'select stats.data_source() as source');
  return row?.source === 'demo';
}

/** The log's origin and verifier key: under the origin its first real checkpoint fixed, once there is one, as the writer signs. */
async function identity(o: Owner, demo: boolean): Promise<{ origin: string; vkey: string }> {
  if (!o.cfg.log) throw new Error('LOG_SIGNING_KEY is not set, so there is no signed log to audit: run `npm run keys`, then `npm start`.');
  const key = await importNoteSigningKey(o.cfg.log.signingKey, 'LOG_SIGNING_KEY');
  const [stored] = await query<{ origin: string | null }>(o.databaseUrl, 'select stats.log_origin() as origin');
  return logIdentity(withStoredLogOrigin(o.cfg.log.origins, stored?.origin ?? null), key.publicKey, demo);
}

/** The wallet the source pays: the funder address, or the demo's. */
function walletOf(o: Owner, demo: boolean): string {
  if (demo) return DEMO_WALLET;
  if (!o.cfg.polymarket) throw new Error('No Polymarket account is configured (FUNDER_ADDRESS or POLY_ADDRESS), so there is no wallet to prove.');
  return o.cfg.polymarket.funder.toLowerCase();
}

export async function controlMessageCommand(nonce: string): Promise<string> {
  const o = owner();
  const demo = await servingDemo(o);
  const { origin, vkey } = await identity(o, demo);
  return controlMessage({ origin, logKey: vkey, wallet: walletOf(o, demo), nonce });
}

interface LoggedEntry { idx: number; date: string | null; entry: Record<string, unknown>; bytes: string }

async function logEntries(o: Owner, demo: boolean): Promise<LoggedEntry[]> {
  const rows = await query<{ idx: string; date: string | null; entry: string }>(o.databaseUrl,
    'select idx, to_char(date, \'YYYY-MM-DD\') as date, entry from stats.log_entry where is_demo = $1 and idx < (select coalesce(max(size), 0) from stats.log_checkpoint where is_demo = $1) order by idx', [demo]);
  return rows.map((r) => ({ idx: Number(r.idx), date: r.date, entry: JSON.parse(r.entry) as Record<string, unknown>, bytes: r.entry }));
}

export interface DiscloseOptions { nights?: string[]; sample?: { k: number; checkpoint: number }; nonce: string; signature: string; out: string }

/** Writes the bundle opening the nights asked for (or the sample a checkpoint draws); returns what it did in one line. */
export async function disclose(opts: DiscloseOptions): Promise<string> {
  if (existsSync(opts.out)) throw new Error(`${opts.out} exists already: name a new file, a bundle is never written over another.`);
  const o = owner();
  const demo = await servingDemo(o);
  const { origin, vkey } = await identity(o, demo);
  const entries = await logEntries(o, demo);
  const signed = entries.length;
  let dates: string[];
  if (opts.sample) {
    const { k, checkpoint } = opts.sample;
    if (checkpoint < 1 || checkpoint > signed) throw new Error(`--checkpoint ${checkpoint} is not a size of this log (its latest signed checkpoint holds ${signed} entries).`);
    const within = entries.slice(0, checkpoint);
    const root = await (await buildTree(within.map((e) => Buffer.from(e.bytes, 'utf8')))).root(checkpoint);
    const candidates = sampleCandidates(within.map((e) => ({ index: e.idx, date: e.date })));
    if (candidates.length === 0) throw new Error(`checkpoint ${checkpoint} holds no night written since commitments began: there is nothing to draw.`);
    dates = drawNights(root, candidates, k);
  } else {
    dates = [...new Set(opts.nights)].sort();
  }
  const vault: TransferVault = demo ? new DemoVault() : new FileVault(o.cfg.transfersDir);
  let walletCommitted: string | undefined;
  const nights: BundleNight[] = [];
  for (const date of dates) {
    const entry = entries.filter((e) => e.date === date).at(-1);
    if (!entry) throw new Error(`night ${date} has no entry in the signed log.`);
    const commitment = entry.entry.transfers;
    if (typeof commitment !== 'string') throw new Error(`night ${date} (entry ${entry.idx}) carries no commitment to its reward transfers: it was logged before commitments began, or without one.`);
    // The demo's vault keeps nothing: it opens a night by committing to it again.
    if (demo) vault.night(date, vault.wallet(DEMO_WALLET, undefined, 0, () => false), demoNightTransfers(date));
    const material = vault.openNight(commitment);
    if (!material) throw new Error(`the opening of night ${date}'s commitment is not in ${o.cfg.transfersDir}: restore it from a backup (npm run backup -- restore), or the night cannot be audited.`);
    walletCommitted ??= material.payload.wallet_commitment;
    if (material.payload.wallet_commitment !== walletCommitted) throw new Error(`night ${date} names another wallet than the nights before it: open the nights of one wallet at a time.`);
    nights.push({ date, log_index: entry.idx, salt: material.salt, payload: material.payload });
  }
  const wallet = vault.openWallet(walletCommitted!);
  if (!wallet || walletCommitment(readSalt(wallet.salt)!, wallet.wallet) !== walletCommitted) throw new Error(`the opening of the wallet's commitment is not in ${o.cfg.transfersDir}: restore it from a backup.`);
  const bundle: Bundle = {
    format: BUNDLE_FORMAT, warning: BUNDLE_WARNING, demo, origin, log_key: vkey,
    sample: opts.sample ?? null,
    wallet: { address: wallet.wallet, salt: wallet.salt, commitment: wallet.commitment },
    control: { nonce: opts.nonce, signature: opts.signature },
    nights,
  };
  writeFileSync(opts.out, `${JSON.stringify(bundle, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(opts.out, 0o600);
  const how = opts.sample ? `drawn from checkpoint ${opts.sample.checkpoint}` : 'named';
  return `wrote ${opts.out}: ${nights.length} night${nights.length === 1 ? '' : 's'} ${how} (${dates.join(', ')}) of ${origin}${demo ? ' (demo data)' : ''}`;
}

/** Stores an auditor's attestation of this log, once; the site serves it under /log/audits. */
export async function publish(file: string): Promise<string> {
  if (!existsSync(file)) throw new Error(`${file} does not exist.`);
  const a = await readAttestation(readFileSync(file, 'utf8'));
  const o = owner();
  const { origin } = await identity(o, false);
  if (a.origin !== origin) throw new Error(`the attestation is of the log "${a.origin}", not of this one ("${origin}").`);
  const [known] = await query<{ n: number }>(o.databaseUrl, 'select count(*)::int as n from stats.log_audit where note = $1', [a.note]);
  if (known && known.n > 0) throw new Error(`${file} is published already.`);
  await query(o.databaseUrl, 'select stats.publish_audit($1)', [a.note]);
  return `published the attestation by ${a.auditor} of ${a.date}: ${a.matched} of ${a.nights.length} nights matched against checkpoint ${a.checkpointSize}`;
}
