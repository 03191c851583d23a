// The auditor's check of a disclosure bundle: the site's log read and verified (./site-log.ts), the
// audit's opening found in it by the hash of the auditor's nonce, the nights the opening chose (drawn
// by rule v2 from the named checkpoint's root and the nonce, or named by the owner), and each of them
// judged within that checkpoint and against the chain (./nights.ts).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { readSalt, walletCommitment } from '../contract/audit/commitment.ts';
import { controlMessage } from '../contract/audit/control.ts';
import { nonceSha256, readOpening, type AuditOpening } from '../contract/audit/opening.ts';
import { parsePayers } from '../contract/audit/payers.ts';
import { drawNights, sampleCandidates } from '../contract/audit/sample.ts';
import { vkeyOf } from '../log-reader/notes.ts';
import { treeHash } from '../log-reader/tree.ts';
import type { Bundle, BundleNight } from './bundle.ts';
import { connectChain, controls, type UsedLogs } from './chain.ts';
import { cents, judgeNight, usdText, type NightResult, type ParsedEntry } from './nights.ts';
import { archivedCheckpoint, readSiteLog, rememberCheckpoint, witnessedByQuorum, type SiteLog } from './site-log.ts';

/** The project's list of reward payers; an auditor may pass their own with --payers. */
export const SHIPPED_PAYERS = fileURLToPath(new URL('./payers.json', import.meta.url));

export interface CheckOptions {
  site: URL; rpc: string; nonce: string; payersFile?: string; stateFile?: string;
  /** The checkpoint the auditor named to the owner; required for a drawn audit. */
  checkpoint?: number;
  /** The auditor's own policy: the log key, the witnesses and their quorum. */
  policyFile?: string;
  /** The auditor's verifier key, when signing: the opening must name it. */
  auditor?: string;
}

export interface CheckResult {
  origin: string;
  logKey: string;
  /** The checkpoint the nights were chosen from and judged within. */
  attested: { size: number; root: string };
  opening: number;
  drawn: { k: number; nonce: string } | null;
  chainId: number;
  payersSha256: string;
  /** Failures that concern the whole audit: the log, the opening, the draw, the wallets, the control proofs. */
  general: string[];
  nights: NightResult[];
  lines: string[];
  pass: boolean;
}

/** The audit cannot be identified, so nothing can be attested: a sentence saying why. */
export class NoAudit extends Error {}

/** Every entry of the log, read once; an audit's opening with the opening it is. */
const entriesOf = (site: SiteLog): (ParsedEntry & { opening?: AuditOpening })[] => site.log.entries.map((bytes, index) => {
  const e = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
  return { index, date: typeof e.date === 'string' ? e.date : null, kind: e.kind as string | undefined, transfers: e.transfers, wallet: e.wallet, usd: e.usd, opening: readOpening(e) };
});

/** The audit's opening: the entry the bundle names, which must be the one the nonce's hash names. */
function findOpening(site: SiteLog, entries: ReturnType<typeof entriesOf>, bundle: Bundle, o: CheckOptions): AuditOpening {
  const hash = nonceSha256(o.nonce);
  const mine = entries.find((x) => x.opening?.nonce_sha256 === hash);
  if (!mine) throw new NoAudit(`the log (${site.checkpoint.size} entries) holds no audit opening whose nonce_sha256 is the SHA-256 of your nonce (${hash}): the owner has not opened this audit in the log, or not yet in a signed checkpoint`);
  if (mine.index !== bundle.opening) throw new NoAudit(`the bundle names entry ${bundle.opening} as the audit's opening, but the opening for your nonce is entry ${mine.index}`);
  const opening = mine.opening!;
  if (o.auditor !== undefined && opening.auditor !== o.auditor) throw new NoAudit(`the opening at entry ${mine.index} names the auditor ${opening.auditor}, not your key ${o.auditor}`);
  if (opening.sample !== undefined && o.checkpoint === undefined) throw new NoAudit(`the opening at entry ${mine.index} draws a sample: name the checkpoint you gave the owner with --checkpoint SIZE`);
  if (opening.checkpoint > site.checkpoint.size) throw new NoAudit(`the opening names checkpoint ${opening.checkpoint}, beyond the log's ${site.checkpoint.size} entries`);
  return opening;
}

/** With a policy: the quorum on the named checkpoint, and on a checkpoint that holds the opening. */
async function checkWitnessed(site: SiteLog, o: CheckOptions, opening: AuditOpening, at: number, root: Buffer, general: string[]): Promise<void> {
  if (!site.policy) return;
  const named = await archivedCheckpoint(site, o.site, opening.checkpoint);
  const rootLine = named?.split('\n')[2];
  if (!named || rootLine !== root.toString('base64')) general.push(`the site keeps no checkpoint ${opening.checkpoint} with the root its entries hash to`);
  else if (!(await witnessedByQuorum(named, site.policy))) general.push(`checkpoint ${opening.checkpoint} carries no cosignatures meeting your policy's quorum: the draw's checkpoint must be one the witnesses cosigned`);
  for (const size of [...site.sizes].filter((s) => s > at).sort((a, b) => b - a)) {
    const note = await archivedCheckpoint(site, o.site, size);
    if (note && await witnessedByQuorum(note, site.policy)) return;
  }
  general.push(`no checkpoint that holds the opening (entry ${at}) carries cosignatures meeting your policy's quorum: wait until the witnesses have cosigned it`);
}

export async function checkBundle(bundle: Bundle, o: CheckOptions): Promise<CheckResult> {
  const payersFile = o.payersFile ?? SHIPPED_PAYERS;
  const payersText = readFileSync(payersFile);
  const payers = parsePayers(payersText.toString('utf8'), payersFile);
  const general: string[] = [];
  const site = await readSiteLog(o, bundle.demo, general);
  const { checkpoint } = site;
  const logKey = vkeyOf(checkpoint.key);
  if (logKey !== bundle.log_key) general.push(`the bundle names the log key ${bundle.log_key}, but the log is signed by ${logKey}`);
  if (checkpoint.origin !== bundle.origin) general.push(`the bundle is of the log "${bundle.origin}", but the site serves "${checkpoint.origin}"`);
  if (bundle.nonce !== o.nonce) general.push(`the bundle answers the nonce "${bundle.nonce}", not yours`);
  const entries = entriesOf(site);
  const opening = findOpening(site, entries, bundle, o);
  const size = opening.checkpoint;
  if (o.checkpoint !== undefined && o.checkpoint !== size) general.push(`the opening names checkpoint ${size}, not checkpoint ${o.checkpoint} you named`);
  if (bundle.opening < size) general.push(`the opening (entry ${bundle.opening}) comes before the end of checkpoint ${size}: an audit opens after the checkpoint it draws from`);
  const root = treeHash(site.log.levels, 0, size);
  await checkWitnessed(site, o, opening, bundle.opening, root, general);
  const chain = await connectChain(o.rpc);

  // The nights the opening chose, and those the bundle opens.
  const drawn = opening.sample !== undefined ? { k: opening.sample, nonce: o.nonce } : null;
  const chosen = drawn ? drawNights(root, o.nonce, sampleCandidates(entries.slice(0, size)), drawn.k) : [...opening.nights!].sort();
  const opened = new Map<string, { night: BundleNight; wallet: string; walletCommitment: string }>();
  for (const section of bundle.sections) {
    const { address, salt, commitment } = section.wallet;
    if (walletCommitment(readSalt(salt)!, address) !== commitment) general.push(`the wallet and salt of a section do not give its commitment ${commitment}`);
    const message = controlMessage({ origin: bundle.origin, logKey: bundle.log_key, wallet: address, nonce: o.nonce });
    if (!(await controls(chain, address, message, section.signature))) {
      general.push(`a section's control signature is not its wallet's: neither the address recovered from it (EOA) nor the wallet's EIP-1271 isValidSignature accepts it on chain ${chain.chainId}`);
    }
    for (const night of section.nights) opened.set(night.date, { night, wallet: address, walletCommitment: commitment });
  }
  const extra = [...opened.keys()].filter((d) => !chosen.includes(d)).sort();
  if (extra.length) general.push(`the bundle opens nights the audit did not choose (${extra.join(', ')}); it chose ${chosen.join(', ')}`);

  const claimedBy = new Map<string, string>();
  for (const date of chosen) for (const t of opened.get(date)?.night.payload.transfers ?? []) {
    const other = claimedBy.get(t.tx);
    claimedBy.set(t.tx, other !== undefined && other !== date ? `${other} and ${date}` : date);
  }
  const used: UsedLogs = new Set();
  const nights: NightResult[] = [];
  for (const date of chosen) nights.push(await judgeNight({ entries, size, chain, payers, used, claimedBy }, date, opened.get(date)));

  const proven = general.length === 0;
  const pass = proven && nights.every((n) => n.reasons.length === 0);
  const how = drawn ? `${drawn.k} drawn by rule v2 from checkpoint ${size}` : `named by the owner (not drawn), within checkpoint ${size}`;
  const lines = [
    `checked ${nights.length} night${nights.length === 1 ? '' : 's'} (${how}) of ${checkpoint.origin}${bundle.demo ? ' (demo data)' : ''}, opened at entry ${bundle.opening}, against chain ${chain.chainId}: ${pass ? 'pass' : 'fail'}`,
    ...(site.keyFrom ? [`NOTE ${site.keyFrom}`] : []),
    ...general.map((g) => `FAIL ${g}`),
    ...nights.map((n) => n.reasons.length === 0
      ? `${proven ? 'ok' : 'FAIL'} ${n.date} entry ${n.index}: ${n.transfers} transfer${n.transfers === 1 ? '' : 's'}, ${usdText(cents(n.baseUnits))} USD as published${proven ? '' : ' (but the audit fails as a whole)'}`
      : `FAIL ${n.date} entry ${n.index ?? '-'}: ${n.reasons.join('; ')}`),
  ];
  if (o.stateFile && proven) rememberCheckpoint(o.stateFile, site);
  return {
    origin: checkpoint.origin, logKey, attested: { size, root: root.toString('base64') }, opening: bundle.opening, drawn, chainId: chain.chainId,
    payersSha256: createHash('sha256').update(payersText).digest('hex'), general, nights, lines, pass,
  };
}
