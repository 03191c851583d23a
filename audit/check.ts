// The auditor's check of a disclosure bundle: the site's log read and verified with the verifier's
// own code (the checkpoint signed by the pinned key, every tile hashing to it, and consistency with
// the auditor's earlier state), then each opened night against its entry and against the chain.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { nightCommitment, readSalt, walletCommitment } from '../contract/audit/commitment.ts';
import { controlMessage } from '../contract/audit/control.ts';
import { parsePayers, type PayerRow } from '../contract/audit/payers.ts';
import { drawNights, sampleCandidates } from '../contract/audit/sample.ts';
import { demoKeys, ED25519_NOTE, parseVkey, readCheckpoint, vkeyOf, type Checkpoint, type NoteKey } from '../log-reader/notes.ts';
import { checkConsistent, readState, saveState } from '../log-reader/state.ts';
import { getText, readLog, type Log } from '../log-reader/tiles.ts';
import { treeHash } from '../log-reader/tree.ts';
import { readListing } from '../log-reader/archive.ts';
import type { Bundle } from './bundle.ts';
import { checkTransfer, connectChain, controls, type Chain, type UsedLogs } from './chain.ts';

/** The project's list of reward payers; an auditor may pass their own with --payers. */
export const SHIPPED_PAYERS = fileURLToPath(new URL('./payers.json', import.meta.url));

export interface CheckOptions { site: URL; rpc: string; nonce: string; payersFile?: string; stateFile?: string; checkpoint?: number }

export interface NightResult { date: string; index: number; reasons: string[]; transfers: number; baseUnits: bigint }

export interface CheckResult {
  origin: string;
  /** The checkpoint the sample was drawn from, else the one verified now. */
  attested: { size: number; root: string };
  chainId: number;
  /** Failures that concern the whole bundle: the log, the wallet, the control proof, the sample. */
  general: string[];
  nights: NightResult[];
  lines: string[];
}

const cents = (units: bigint): bigint => (units + 5_000n) / 10_000n;
/** A published amount (a JSON number with at most 6 decimals) in base units, from its decimal text. */
function unitsOf(usd: number): bigint {
  const [whole, fraction = ''] = usd.toFixed(6).split('.');
  return BigInt(whole!) * 1_000_000n + BigInt(fraction.padEnd(6, '0'));
}
const usd = (centsValue: bigint): string => `${centsValue / 100n}.${String(centsValue % 100n).padStart(2, '0')}`;

interface ParsedEntry { index: number; date: string | null; kind?: string; transfers?: unknown; wallet?: unknown; usd?: unknown }

async function siteLog(o: CheckOptions, bundle: Bundle, general: string[]): Promise<{ log: Log; checkpoint: Checkpoint & { key: NoteKey }; note: string }> {
  const prefix = bundle.demo ? '/log/demo' : '/log';
  const listing = await readListing(o.site, prefix, bundle.demo);
  const saved = o.stateFile ? readState(o.stateFile) : undefined;
  const pinnedText = saved?.vkey ?? (typeof listing.vkey === 'string' ? listing.vkey : undefined);
  const pinned = pinnedText === undefined ? 'no key' : parseVkey(pinnedText, ED25519_NOTE);
  if (typeof pinned === 'string') throw new Error(`the log key to check against is not a verifier key: ${pinned}`);
  const base = bundle.demo && pinned.name.endsWith('/demo') ? [pinned] : bundle.demo ? demoKeys([pinned]) : [pinned];
  const note = await getText(o.site, `${prefix}/checkpoint`, 'the checkpoint');
  const checkpoint = readCheckpoint(note, 'the checkpoint', base);
  const cache = new Map<string, Buffer>();
  const log = await readLog(o.site, prefix, checkpoint, cache);
  if (saved) {
    const consistency = await checkConsistent(saved, checkpoint, async (size) => (size === checkpoint.size ? log.levels : (await readLog(o.site, prefix, { ...checkpoint, size }, cache)).levels));
    if ('rewritten' in consistency) general.push(`the site's log is a fork of the one in ${o.stateFile}: checkpoint ${checkpoint.size} is not consistent with checkpoint ${saved.size} seen on ${saved.seen_at}`);
  }
  if (vkeyOf(checkpoint.key) !== bundle.log_key) general.push(`the bundle names the log key ${bundle.log_key}, but the log is signed by ${vkeyOf(checkpoint.key)}`);
  if (checkpoint.origin !== bundle.origin) general.push(`the bundle is of the log "${bundle.origin}", but the site serves "${checkpoint.origin}"`);
  return { log, checkpoint, note };
}

export async function checkBundle(bundle: Bundle, o: CheckOptions): Promise<CheckResult> {
  const payersFile = o.payersFile ?? SHIPPED_PAYERS;
  const payers: PayerRow[] = parsePayers(readFileSync(payersFile, 'utf8'), payersFile);
  const general: string[] = [];
  const { log, checkpoint, note } = await siteLog(o, bundle, general);
  const chain: Chain = await connectChain(o.rpc);
  const entries: ParsedEntry[] = log.entries.map((bytes, index) => {
    const e = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
    return { index, date: typeof e.date === 'string' ? e.date : null, kind: e.kind as string | undefined, transfers: e.transfers, wallet: e.wallet, usd: e.usd };
  });

  // The wallet: its commitment opens, and its owner signed the auditor's nonce.
  const wallet = bundle.wallet.address;
  if (walletCommitment(readSalt(bundle.wallet.salt)!, wallet) !== bundle.wallet.commitment) general.push('the wallet and its salt do not give the wallet commitment the bundle names');
  if (bundle.control.nonce !== o.nonce) general.push(`the control proof answers the nonce "${bundle.control.nonce}", not yours`);
  const message = controlMessage({ origin: bundle.origin, logKey: bundle.log_key, wallet, nonce: o.nonce });
  if (!(await controls(chain, wallet, message, bundle.control.signature))) {
    general.push(`the control signature is not the wallet's: neither the address recovered from it (EOA) nor the wallet's EIP-1271 isValidSignature accepts it on chain ${chain.chainId}`);
  }

  // The sample: the nights are exactly those the named checkpoint draws.
  let attested = { size: checkpoint.size, root: checkpoint.root.toString('base64') };
  if (bundle.sample) {
    const { k, checkpoint: size } = bundle.sample;
    if (o.checkpoint !== undefined && o.checkpoint !== size) general.push(`the bundle's nights are drawn from checkpoint ${size}, not from checkpoint ${o.checkpoint} you named`);
    if (size < 1 || size > checkpoint.size) general.push(`the bundle's sample names checkpoint ${size}, which the log (${checkpoint.size} entries) does not hold`);
    else {
      const root = treeHash(log.levels, 0, size);
      attested = { size, root: root.toString('base64') };
      const drawn = drawNights(root, sampleCandidates(entries.slice(0, size)), k);
      const opened = bundle.nights.map((n) => n.date).sort();
      if (drawn.join(',') !== opened.join(',')) general.push(`the nights opened (${opened.join(', ')}) are not the ${k} that checkpoint ${size} draws (${drawn.join(', ')})`);
    }
  } else if (o.checkpoint !== undefined) {
    general.push(`you named checkpoint ${o.checkpoint}, but the bundle's nights were chosen by its owner, not drawn from a checkpoint`);
  }

  // Each night against its entry, then against the chain; no transaction counts for two nights.
  const claimedBy = new Map<string, string>();
  for (const night of bundle.nights) for (const t of night.payload.transfers) {
    const other = claimedBy.get(t.tx);
    if (other !== undefined && other !== night.date) claimedBy.set(t.tx, `${other} and ${night.date}`);
    else claimedBy.set(t.tx, night.date);
  }
  const used: UsedLogs = new Set();
  const nights: NightResult[] = [];
  for (const night of bundle.nights) {
    const reasons: string[] = [];
    const entry = entries[night.log_index];
    const result = { date: night.date, index: night.log_index, reasons, transfers: night.payload.transfers.length, baseUnits: 0n };
    nights.push(result);
    if (!entry) { reasons.push(`the log holds no entry ${night.log_index} (its checkpoint holds ${checkpoint.size})`); continue; }
    if (entry.date !== night.date) { reasons.push(`entry ${night.log_index} is ${entry.date === null ? 'a wallet entry' : `night ${entry.date}`}, not this night`); continue; }
    const later = entries.find((e) => e.index > night.log_index && e.date === night.date);
    if (later) reasons.push(`entry ${night.log_index} is superseded by entry ${later.index}`);
    if (night.payload.date !== night.date) reasons.push(`the payload is of night ${night.payload.date}`);
    if (typeof entry.transfers !== 'string') reasons.push('its entry carries no commitment to reward transfers');
    else if (nightCommitment(readSalt(night.salt)!, night.payload) !== entry.transfers) reasons.push('the salt and payload do not give the commitment in its entry');
    if (night.payload.wallet !== wallet || night.payload.wallet_commitment !== bundle.wallet.commitment) reasons.push('its payload names another wallet than the bundle\'s');
    const inForce = entries.filter((e) => e.kind === 'wallet' && e.index < night.log_index).at(-1);
    if (inForce?.wallet !== night.payload.wallet_commitment) reasons.push(`its payload's wallet commitment is not the one the log holds in force at entry ${night.log_index}`);
    for (const [i, t] of night.payload.transfers.entries()) {
      const label = `transfer ${i + 1} of ${night.payload.transfers.length}`;
      const claimed = claimedBy.get(t.tx)!;
      if (claimed !== night.date) { reasons.push(`${label}: its transaction is claimed by nights ${claimed}`); continue; }
      const why = await checkTransfer(chain, payers, night.date, wallet, t, used, label);
      if (why) reasons.push(why);
      result.baseUnits += BigInt(t.amount);
    }
    if (typeof entry.usd === 'number') {
      const published = cents(unitsOf(entry.usd));
      const paid = cents(result.baseUnits);
      if (paid !== published) reasons.push(`the transfers add up to ${usd(paid)} USD (${result.baseUnits} base units), not the published ${usd(published)} USD`);
    }
  }

  const proven = general.length === 0;
  const matched = nights.filter((n) => n.reasons.length === 0 && proven).length;
  const lines = [
    `checked ${nights.length} night${nights.length === 1 ? '' : 's'} of ${checkpoint.origin}${bundle.demo ? ' (demo data)' : ''} against checkpoint ${checkpoint.size} and chain ${chain.chainId}: ${matched} matched`,
    ...general.map((g) => `FAIL ${g}`),
    ...nights.map((n) => n.reasons.length === 0
      ? `${proven ? 'ok' : 'FAIL'} ${n.date} entry ${n.index}: ${n.transfers} transfer${n.transfers === 1 ? '' : 's'}, ${usd(cents(n.baseUnits))} USD as published${proven ? '' : ' (but the bundle fails as a whole)'}`
      : `FAIL ${n.date} entry ${n.index}: ${n.reasons.join('; ')}`),
  ];
  if (o.stateFile && proven && nights.every((n) => n.reasons.length === 0)) {
    saveState(o.stateFile, {
      vkey: vkeyOf(checkpoint.key), previous_vkeys: [], origin: checkpoint.origin, size: checkpoint.size,
      root: checkpoint.root.toString('base64'), checkpoint: note, seen_at: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
    });
  }
  return { origin: checkpoint.origin, attested, chainId: chain.chainId, general, nights, lines };
}
