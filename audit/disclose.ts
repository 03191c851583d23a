// The bundle that opens an audit's nights to its auditor: found by the revealed nonce, whose SHA-256
// the audit's opening in the log names; the nights the opening chose (drawn by rule v2 from the named
// checkpoint's root and the nonce, or named), each at its latest entry within that checkpoint, with
// its salt and payload, grouped by the wallet commitment each names, one section per wallet with the
// wallet's opening and its owner's control signature.
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { DEMO_WALLET, demoNightTransfers, DemoVault } from '../contract/audit/demo.ts';
import { nonceSha256, readOpening } from '../contract/audit/opening.ts';
import { drawNights, sampleCandidates } from '../contract/audit/sample.ts';
import type { NightMaterial, TransferVault, WalletMaterial } from '../contract/audit/transfer-vault.ts';
import { buildTree } from '../contract/tlog/merkle.ts';
import { BUNDLE_FORMAT, BUNDLE_WARNING, type Bundle, type BundleSection } from './bundle.ts';
import { identity, owner, query, servingDemo, type Owner } from './owner.ts';
import { databaseVault } from './openings.ts';

interface LoggedEntry { idx: number; date: string | null; entry: Record<string, unknown>; bytes: string }

/** The entries the latest signed checkpoint covers. */
async function signedEntries(o: Owner, demo: boolean): Promise<LoggedEntry[]> {
  const rows = await query<{ idx: string; date: string | null; entry: string }>(o.databaseUrl,
    'select idx, to_char(date, \'YYYY-MM-DD\') as date, entry from stats.log_entry where is_demo = $1 and idx < stats.log_size() order by idx', [demo]);
  return rows.map((r) => ({ idx: Number(r.idx), date: r.date, entry: JSON.parse(r.entry) as Record<string, unknown>, bytes: r.entry }));
}

export interface DiscloseOptions {
  nonce: string;
  /** The control signature of the wallet the source pays now, and of earlier wallets by address. */
  signature: string;
  signatures: Map<string, string>;
  out: string;
}

/** Writes the bundle for the audit whose opening the nonce names; returns what it did in one line. */
export async function disclose(opts: DiscloseOptions): Promise<string> {
  if (existsSync(opts.out)) throw new Error(`${opts.out} exists already: name a new file, a bundle is never written over another.`);
  const o = owner();
  const demo = await servingDemo(o);
  const { origin, vkey } = await identity(o, demo);
  const entries = await signedEntries(o, demo);
  const hash = nonceSha256(opts.nonce);
  const found = entries.map((e) => ({ idx: e.idx, opening: readOpening(e.entry) })).find((e) => e.opening?.nonce_sha256 === hash);
  if (!found) throw new Error(`the signed log holds no audit opening for this nonce (its SHA-256 is ${hash}): open the audit first (npm run audit -- open …) and wait until the writer has signed it.`);
  const opening = found.opening!;
  const within = entries.slice(0, opening.checkpoint);
  let dates: string[];
  if (opening.sample !== undefined) {
    const root = await (await buildTree(within.map((e) => Buffer.from(e.bytes, 'utf8')))).root(opening.checkpoint);
    const candidates = sampleCandidates(within.map((e) => ({ index: e.idx, date: e.date, kind: e.entry.kind as string | undefined })));
    if (candidates.length === 0) throw new Error(`checkpoint ${opening.checkpoint} holds no night written since commitments began: there is nothing to draw.`);
    dates = drawNights(root, opts.nonce, candidates, opening.sample);
  } else dates = [...opening.nights!].sort();

  const vault: TransferVault = demo ? new DemoVault() : databaseVault(o.databaseUrl, o.cfg.openingsKey);
  const sections = new Map<string, BundleSection>();
  for (const date of dates) {
    const entry = within.filter((e) => e.date === date).at(-1);
    if (!entry) throw new Error(`night ${date} has no entry within checkpoint ${opening.checkpoint}.`);
    const commitment = entry.entry.transfers;
    if (typeof commitment !== 'string') throw new Error(`night ${date} (entry ${entry.idx}) carries no commitment to its reward transfers: it was logged before commitments began, or without one.`);
    // The demo's vault keeps nothing: it opens a night by committing to it again.
    if (demo) await vault.night(date, await vault.wallet(DEMO_WALLET, undefined), demoNightTransfers(date));
    const material: NightMaterial | undefined = await vault.openNight(commitment);
    if (!material) throw new Error(`the opening of night ${date}'s commitment (entry ${entry.idx}) is not in the database: it was committed by a writer whose openings were lost, so the night cannot be audited.`);
    let section = sections.get(material.payload.wallet_commitment);
    if (!section) {
      const wallet: WalletMaterial | undefined = await vault.openWallet(material.payload.wallet_commitment);
      if (!wallet) throw new Error(`the opening of the wallet commitment night ${date} names is not in the database.`);
      const signature = opts.signatures.get(wallet.wallet) ?? (sections.size === 0 || [...sections.values()].every((s) => s.wallet.address === wallet.wallet) ? opts.signature : undefined);
      if (!signature) throw new Error(`night ${date} was paid to another wallet than the nights before it: give its owner's control signature as --signature ${wallet.wallet}:0x… (print its text with control-message --wallet ${wallet.wallet}).`);
      section = { wallet: { address: wallet.wallet, salt: wallet.salt, commitment: wallet.commitment }, signature, nights: [] };
      sections.set(wallet.commitment, section);
    }
    section.nights.push({ date, log_index: entry.idx, salt: material.salt, payload: material.payload });
  }
  const bundle: Bundle = { format: BUNDLE_FORMAT, warning: BUNDLE_WARNING, demo, origin, log_key: vkey, opening: found.idx, nonce: opts.nonce, sections: [...sections.values()] };
  writeFileSync(opts.out, `${JSON.stringify(bundle, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(opts.out, 0o600);
  const how = opening.sample !== undefined ? `drawn from checkpoint ${opening.checkpoint}` : `named by the owner, within checkpoint ${opening.checkpoint}`;
  return `wrote ${opts.out}: ${dates.length} night${dates.length === 1 ? '' : 's'} ${how} (${dates.join(', ')}) of ${origin}${demo ? ' (demo data)' : ''}, in ${sections.size} wallet section${sections.size === 1 ? '' : 's'}, for the audit opened at entry ${found.idx}`;
}
