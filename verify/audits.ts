// Audits of the log: the attestations the site publishes under /log/audits (verify/attestation.ts)
// judged against the verified log and the reader's policy, and the audits the log shows opened.
//
// An audit counts only when it is of this log, by an auditor the policy lists (`auditor <vkey>`),
// attested under rule v2 as passed, with nights drawn (not named by the owner) that this verifier
// draws again from the checkpoint's root and the revealed nonce, and opened in the log: the entry
// its `opening` line names is an audit's opening by the same auditor, with the SHA-256 of that
// nonce, the same checkpoint and sample, appended after that checkpoint; each night it names is the
// night's latest entry within the checkpoint, and every night it passed carries a commitment to its
// reward transfers there. A listed auditor's attestation that the log contradicts fails the run;
// one that is honest but does not count (named nights, a failed audit, rule v1, another log key)
// is a line saying why.
import { isRecord, parseJson, plural } from '../log-reader/encoding.ts';
import { fail, Failure, Stale } from '../log-reader/failure.ts';
import { decoded, expectOk, get, MAX_ANSWER_BYTES } from '../log-reader/http.ts';
import { ED25519_NOTE, parseVkey, vkeyOf, type NoteKey } from '../log-reader/notes.ts';
import { treeHash } from '../log-reader/tree.ts';
import { readAttestation, type Attestation, type AttestationV2 } from './attestation.ts';
import { drawCandidates, drawNights, nonceDigest } from './draw.ts';
import { isAudit, latestByDate, type AuditEntry, type LogEntry } from './entries.ts';
import type { Policy } from './policy.ts';

/** The same key: name and public key. */
const sameKey = (a: NoteKey, b: NoteKey): boolean => a.name === b.name && a.raw.equals(b.raw);

/** Whether the policy lists the attestation's key (name and public key) as an auditor's. */
export const listedAuditor = (policy: Pick<Policy, 'auditors'>, key: NoteKey): boolean => policy.auditors.some((auditor) => sameKey(auditor, key));

/**
 * The verified log an attestation is judged against: its origin, the log keys this run trusts for it
 * (current and earlier), its entries as readEntries gives them (position = index), and their subtree hashes.
 */
export interface AuditedLog { origin: string; keys: readonly NoteKey[]; entries: readonly LogEntry[]; levels: Buffer[][] }

/** One attestation judged: its lines (its verdict, then each of its nights corrected after its checkpoint) and whether it counts. */
export interface Verdict { lines: string[]; counts: boolean }

/** The opening's auditor key, when it is one. */
const openingKey = (entry: AuditEntry): NoteKey | undefined => { const key = parseVkey(entry.auditor, ED25519_NOTE); return typeof key === 'string' ? undefined : key; };

/**
 * Judges one attestation against the policy and the log: fails (a Failure) on one of another log, or
 * one by a listed auditor that the log contradicts; throws Stale when it names more of the log than
 * the verified checkpoint holds (caches out of step).
 */
export function judgeAttestation(a: Attestation, policy: Pick<Policy, 'auditors'>, log: AuditedLog): Verdict {
  const name = a.key.name;
  if (a.origin !== log.origin) fail(`the attestation by ${name} on ${a.date} is an audit of the log "${a.origin}", not of "${log.origin}"`);
  if (!listedAuditor(policy, a.key)) return { lines: [`  attestation by ${name} (key ${vkeyOf(a.key)}) is not by an auditor the policy lists: not counted`], counts: false };
  if (a.version === 1) return { lines: [`  attestation by ${name} on ${a.date} is of rule v1, which records neither how its nights were chosen nor a nonce opened in the log: not counted`], counts: false };
  const audit = `the audit by ${name} on ${a.date}`;
  if (a.size > log.entries.length || a.opening >= log.entries.length) {
    throw new Stale(`${audit} names checkpoint ${a.size} and its opening at entry ${a.opening}, but the verified log holds ${log.entries.length} entries (even after waiting for caches)`);
  }
  const root = treeHash(log.levels, 0, a.size);
  if (!root.equals(a.root)) {
    fail(`${audit} names checkpoint ${a.size} with the root ${a.root.toString('base64')}, but the log's first ${a.size} entries hash to ${root.toString('base64')}: not a state of this log`);
  }
  checkOpening(a, audit, log);
  const within = latestByDate(log.entries.slice(0, a.size));
  for (const night of a.nights) {
    const entry = within.get(night.date);
    if (night.index !== (entry?.index ?? null)) {
      fail(`night ${night.date} of ${audit} names ${night.index === null ? 'no entry' : `entry ${night.index}`}, but its latest entry within checkpoint ${a.size} is ${entry ? `entry ${entry.index}` : 'none'}`);
    }
    if (night.pass && entry!.transfers === null) fail(`night ${night.date} of ${audit} passed, but its latest entry within checkpoint ${a.size} (entry ${entry!.index}) carries no commitment to its reward transfers`);
  }
  const latest = latestByDate(log.entries);
  const corrected = a.nights.flatMap((night) => {
    const now = latest.get(night.date)!;
    return night.index !== null && now.index > night.index ? [`  night ${night.date} of ${audit} was corrected after checkpoint ${a.size}: entry ${now.index}`] : [];
  });
  const [line, counts] = verdictLine(a, log);
  return { lines: [line, ...corrected], counts };
}

/** The opening the attestation names is that audit's: same auditor, checkpoint, and nonce and sample (drawn) or nights (named); a drawn sample is the one rule v2 draws. */
function checkOpening(a: AttestationV2, audit: string, log: AuditedLog): void {
  const entry = log.entries[a.opening]!;
  const at = `its opening (entry ${a.opening})`;
  if (!isAudit(entry)) return fail(`${audit} names entry ${a.opening} as its opening, which is not an audit's opening`);
  const key = openingKey(entry);
  if (!key || !sameKey(key, a.key)) fail(`${audit}: ${at} opens an audit by another auditor (${entry.auditor})`);
  if (entry.checkpoint !== a.size) fail(`${audit} reads checkpoint ${a.size}, but ${at} names checkpoint ${entry.checkpoint}`);
  const dates = a.nights.map((n) => n.date);
  if (!a.chosen.drawn) {
    if (entry.nights === null) fail(`${audit} says the owner named its nights, but ${at} asks for a sample of ${entry.sample} drawn`);
    const named = [...entry.nights!].sort();
    if (named.join() !== dates.join()) fail(`${audit} judges the nights ${dates.join(', ') || 'none'}, but ${at} names ${named.join(', ')}`);
    return;
  }
  const { k, nonce } = a.chosen;
  if (entry.sample === null) fail(`${audit} says its nights were drawn, but ${at} names the nights ${entry.nights!.join(', ')}`);
  if (entry.sample !== k) fail(`${audit} draws ${k} nights, but ${at} asks for ${entry.sample}`);
  if (nonceDigest(nonce) !== entry.nonce_sha256) fail(`${audit}'s nonce does not hash to the nonce_sha256 of ${at}`);
  const drawn = drawNights(a.root, nonce, drawCandidates(log.entries, a.size), k);
  if (drawn.join() !== dates.join()) {
    fail(`${audit} judges the nights ${dates.join(', ') || 'none'} as drawn, but rule v2 draws ${drawn.join(', ') || 'none'} from checkpoint ${a.size} with its nonce`);
  }
}

/** The line of a listed auditor's attestation of rule v2 that the log does not contradict, and whether it counts. */
function verdictLine(a: AttestationV2, log: AuditedLog): [string, boolean] {
  const head = `  audit by ${a.key.name} on ${a.date}`;
  const within = `checkpoint ${a.size}, opened at entry ${a.opening}`;
  const chosen = a.chosen.drawn ? `drawn by rule v2 (sample ${a.chosen.k}, nonce ${a.chosen.nonce})` : 'named by the owner, not drawn';
  if (!a.pass) {
    const failed = a.nights.filter((n) => !n.pass).map((n) => `${n.date} (${n.index === null ? 'no entry' : `entry ${n.index}`})`);
    return [`${head} failed: ${failed.length ? `night${failed.length === 1 ? '' : 's'} ${failed.join(', ')} failed` : 'every night passed but a check beyond them failed'}; ${a.nights.length - failed.length} of ${plural(a.nights.length, 'night')} passed, ${chosen}, ${within}: not counted`, false];
  }
  const nights = a.nights.map((n) => n.date).join(', ');
  if (!a.chosen.drawn) return [`${head}: nights named by the owner, not drawn: ${nights}, each passed (${within}): not counted`, false];
  if (!log.keys.some((k) => sameKey(k, a.logKey))) return [`${head} was checked against the log key ${vkeyOf(a.logKey)}, not one this run trusts for the log: not counted`, false];
  return [`${head}: ${plural(a.nights.length, 'night')} ${chosen}, each passed against chain ${a.chainId} (${within}): ${nights}: counted`, true];
}

/** What the audits published for the log come to: a line each, the failures, the counted attestations, and the openings with no result. */
export interface Judgement { lines: string[]; failures: string[]; counted: AttestationV2[]; unfinished: AuditEntry[] }

/**
 * Judges every attestation published (notes verbatim, as `where` serves them) against the policy and
 * the log, and names each audit opened in the log with no attestation by its auditor naming that opening.
 */
export function judgeAudits(notes: readonly string[], policy: Pick<Policy, 'auditors'>, log: AuditedLog, where = '/log/audits'): Judgement {
  const judgement: Judgement = { lines: [], failures: [], counted: [], unfinished: [] };
  const read: AttestationV2[] = [];
  for (const [i, note] of notes.entries()) {
    try {
      const a = readAttestation(note, `attestation ${i + 1} of ${where}`);
      if (a.version === 2 && a.origin === log.origin) read.push(a);
      const verdict = judgeAttestation(a, policy, log);
      judgement.lines.push(...verdict.lines);
      if (verdict.counts) judgement.counted.push(a as AttestationV2);
    } catch (error) {
      if (!(error instanceof Failure)) throw error;
      judgement.failures.push(error.message);
    }
  }
  for (const entry of log.entries.filter(isAudit)) {
    const key = openingKey(entry);
    if (read.some((a) => a.opening === entry.index && key && sameKey(a.key, key))) continue;
    judgement.unfinished.push(entry);
    const asked = entry.sample === null ? `the nights ${entry.nights!.join(', ')} named` : `a sample of ${entry.sample} drawn`;
    judgement.lines.push(`  the audit opened at entry ${entry.index} by ${key?.name ?? entry.auditor} (${asked} from checkpoint ${entry.checkpoint}) has no published result`);
  }
  if (notes.length) {
    const last = judgement.counted.at(-1);
    judgement.lines.push(last ? `  ${plural(judgement.counted.length, 'audit')} counted, the last by ${last.key.name} on ${last.date}`
      : '  no audit counts: none is a passing audit, drawn by rule v2, by an auditor the policy lists');
  }
  return judgement;
}

interface Published { note: string; published_at: string }

/** The audits document: {"audits":[{"note": the attestation verbatim, "published_at": an ISO time}, …]}. */
export function parseAudits(bytes: Buffer, what: string): Published[] {
  const document = parseJson(bytes, what);
  const notList = (): never => fail(`${what} is not a list of attestations ({"audits":[{"note", "published_at"}, …]})`);
  if (!isRecord(document) || !Array.isArray(document.audits)) return notList();
  return document.audits.map((item: unknown) => (isRecord(item) && typeof item.note === 'string' && typeof item.published_at === 'string' && !Number.isNaN(Date.parse(item.published_at))
    ? { note: item.note, published_at: item.published_at } : notList()));
}

/**
 * Every attestation the site publishes for the log under `<prefix>/audits` (none when it serves no
 * such document), judged: a line each and the openings with no result, or one failure a line for
 * every attestation that fails.
 */
export async function checkAudits(site: URL, prefix: string, policy: Pick<Policy, 'auditors'>, log: AuditedLog): Promise<string[]> {
  const path = `${prefix}/audits`;
  const answer = await get(new URL(path, site), MAX_ANSWER_BYTES);
  const published = answer.status === 404 ? undefined : parseAudits(decoded(expectOk(answer, path), path, MAX_ANSWER_BYTES), path);
  const judgement = judgeAudits((published ?? []).map((p) => p.note), policy, log, path);
  if (judgement.failures.length) fail(judgement.failures.join('\n'));
  const none = published === undefined ? [`  no audit is published: the site serves no ${path}`] : published.length ? [] : [`  no audit is published under ${path}`];
  return [...none, ...judgement.lines];
}
