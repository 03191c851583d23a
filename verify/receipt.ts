// A saved receipt (https://c2sp.org/tlog-proof) of one night, checked offline against the pinned log
// key and the policy, and with --site against the log as it stands.
import { readFileSync } from 'node:fs';
import { utf8 } from '../log-reader/encoding.ts';
import { latestByDate, parseNight, readEntries } from './entries.ts';
import { fail } from '../log-reader/failure.ts';
import { demoKeys, readCheckpoint, vkeyOf } from '../log-reader/notes.ts';
import type { Options, Trust } from './options.ts';
import { checkQuorum, witnessList, type Policy } from './policy.ts';
import { getText, readLog } from '../log-reader/tiles.ts';
import { HASH_SIZE, leafHash, treeHash, verifyInclusion } from '../log-reader/tree.ts';

/** A saved /log/proof/<date> receipt, checked offline; with --site, also whether its night is still the latest for its date. */
export async function checkReceipt(o: Options, file: string, trust: Trust, policy: Policy | undefined): Promise<string[]> {
  let text: string;
  try { text = utf8.decode(readFileSync(file)); } catch (error) { return fail(`the receipt ${file} cannot be read as UTF-8 text (${(error as { code?: string }).code ?? 'not UTF-8'})`); }
  const bad = (why: string): never => fail(`the receipt ${file} is not a tlog-proof (https://c2sp.org/tlog-proof): ${why}`);
  const blank = text.indexOf('\n\n');
  if (blank < 0) bad('it has no blank line before its checkpoint');
  const head = text.slice(0, blank).split('\n');
  if (head[0] !== 'c2sp.org/tlog-proof@v1') bad('its first line is not c2sp.org/tlog-proof@v1');
  const base64Of = (line: string) => { const bytes = Buffer.from(line, 'base64'); return bytes.length && bytes.toString('base64') === line ? bytes : undefined; };
  const extra = head[1]?.startsWith('extra ') ? base64Of(head[1].slice(6)) ?? bad('its extra line is not base64') : undefined;
  const at = extra ? 2 : 1;
  const index = Number((/^index (0|[1-9][0-9]*)$/.exec(head[at] ?? '') ?? bad('it has no index line'))[1]);
  const proof = head.slice(at + 1).map((line) => { const hash = base64Of(line); return hash?.length === HASH_SIZE ? hash : bad('a line of its inclusion proof is not a base64 SHA-256 hash'); });
  if (!extra) fail(`the receipt ${file} carries no entry (its "extra" line), so it proves no night`);
  const what = `the receipt's checkpoint`;
  const checkpoint = readCheckpoint(text.slice(blank + 2), what, [...trust.keys, ...demoKeys(trust.keys)]);
  const demo = !trust.keys.some((k) => k.name === checkpoint.origin);
  if (!verifyInclusion(index, checkpoint.size, leafHash(extra!), proof, checkpoint.root)) {
    fail(`the receipt ${file} does not prove its entry is in its checkpoint: the inclusion proof fails`);
  }
  const entry = parseNight(extra!, index);
  const out = [
    `verified the receipt ${file}`,
    `  night ${entry.date} (${entry.usd} USD) is entry ${index} of the checkpoint of ${checkpoint.size} entries of ${checkpoint.origin}${demo ? ' (demo data)' : ''}, signed by the log key ${vkeyOf(checkpoint.key)} (from ${trust.source})`,
  ];
  if (policy && !demo && policy.quorum !== 'none') out.push(`  cosigned by ${witnessList(checkQuorum(policy, checkpoint, what))}: the quorum "${policy.quorum}" of the policy ${o.policyFile}`);
  else if (policy) out.push(demo ? '  the demo log is not witnessed' : `  the policy ${o.policyFile} asks for no cosignature (quorum none)`);
  if (!o.siteGiven) return out;
  // Whether it is still the latest entry for its date: read from the log itself, verified like any other run.
  const prefix = demo ? '/log/demo' : '/log';
  const current = readCheckpoint(await getText(o.site, `${prefix}/checkpoint`, 'the checkpoint'), 'the checkpoint', demo ? demoKeys(trust.keys) : trust.keys);
  if (current.origin !== checkpoint.origin) fail(`the site's checkpoint is for the log "${current.origin}", not the receipt's "${checkpoint.origin}"`);
  const log = await readLog(o.site, prefix, current, new Map());
  if (current.size < checkpoint.size) fail(`the site's checkpoint of ${current.size} entries is older than the receipt's of ${checkpoint.size}: an older view of the log (a lagging node, or a replayed answer)`);
  if (!treeHash(log.levels, 0, checkpoint.size).equals(checkpoint.root)) fail(`the log was rewritten: the site's checkpoint of ${current.size} entries does not hold the receipt's checkpoint of ${checkpoint.size}`);
  const latest = latestByDate(readEntries(log.entries)).get(entry.date)!;
  out.push(latest.index === index
    ? `  night ${entry.date}: entry ${index} is still the latest for its date in the checkpoint of ${current.size} entries at ${o.site.origin}`
    : `  night ${entry.date} was corrected since: entry ${latest.index} (${latest.usd} USD) is now the latest for its date in the checkpoint of ${current.size} entries at ${o.site.origin}`);
  return out;
}
