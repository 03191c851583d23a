// The run against a site: its key directory, its log read whole and checked against the pinned key,
// the state file and the policy, its signed answers against the log, and the audits published for it.
import { checkAudits } from './audits.ts';
import { answerCheckpoint, checkNights, checkStats, commitmentsLine, gaps, ranges } from './completeness.ts';
import { isoSeconds, isRecord, parseJson, plural } from '../log-reader/encoding.ts';
import { DATE, latestByDate, readEntries } from './entries.ts';
import { fail, Failures, Stale } from '../log-reader/failure.ts';
import { decoded, expectOk, get, MAX_ANSWER_BYTES } from '../log-reader/http.ts';
import { readDirectory, verifyAnswer, type Signed } from './answer-signatures.ts';
import { demoKeys, ED25519_NOTE, parseVkey, readCheckpoint, renamed, signedBy, vkeyOf, type NoteKey } from '../log-reader/notes.ts';
import type { Options, Trust } from './options.ts';
import { checkQuorum, witnessList, type Policy } from './policy.ts';
import { checkConsistent, saveState, writeRewriteEvidence, type State } from '../log-reader/state.ts';
import { getText, readLog, readTree, type Log } from '../log-reader/tiles.ts';
import { readListing } from '../log-reader/archive.ts';
import { checkWitnessing } from './witnessing.ts';

/** /api/history may be cached a little longer than the checkpoint: how often, and how far apart, both are read again. */
const ATTEMPTS = 6;
const RETRY_MS = 5_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function checkSite(o: Options, pinned: Trust | undefined, policy: Policy | undefined, saved: State | undefined): Promise<string[]> {
  const site = o.site;
  const directory = await readDirectory(site);
  const cache = new Map<string, Buffer>();
  // A rewrite's evidence, by the served checkpoint: written once, however often caches make the run read again.
  const rewrites = new Map<string, string>();
  for (let attempt = 1; ; attempt++) {
    // The failures of checks that do not depend on each other, a rewrite's first: each is named.
    const failures = new Failures();
    try {
      const historyAnswer = expectOk(await get(new URL('/api/history', site), MAX_ANSWER_BYTES), '/api/history');
      const history = parseJson(decoded(historyAnswer, '/api/history', MAX_ANSWER_BYTES), '/api/history');
      if (!isRecord(history)) return fail('/api/history is not the track record (not a JSON object)');
      const demo = history.data_source === 'demo';
      const prefix = demo ? '/log/demo' : '/log';
      const listing = await readListing(site, prefix, demo);
      const out: string[] = [];

      // The log's key: pinned, or else the site's, trusted on first use.
      let trust = pinned;
      if (!trust) {
        const named = typeof listing.vkey === 'string' ? parseVkey(listing.vkey, ED25519_NOTE) : 'there is none';
        if (typeof named === 'string') return fail(`the checkpoint archive names no log key to trust on first use (${named}); give one with --vkey`);
        const key = demo && named.name.endsWith('/demo') ? renamed(named, named.name.slice(0, -'/demo'.length)) : named;
        trust = { keys: [key], source: 'the site, trusted on first use', previous: [] };
        out.push(`  trusting the log key ${vkeyOf(key)} on first use: the site named it${o.stateFile ? `; recorded in ${o.stateFile}` : '; run with --state to keep it'}`);
      }
      const logKeys = demo ? demoKeys(trust.keys) : trust.keys;
      const checkpoint = readCheckpoint(await getText(site, `${prefix}/checkpoint`, 'the checkpoint'), 'the checkpoint', logKeys);
      // A rotation overlap: the key the site names now signs this checkpoint too, so it is trusted from here on.
      const siteKey = typeof listing.vkey === 'string' ? parseVkey(listing.vkey, ED25519_NOTE) : undefined;
      let moved: NoteKey | undefined;
      if (siteKey && typeof siteKey !== 'string' && siteKey.name === checkpoint.origin && !siteKey.raw.equals(checkpoint.key.raw) && signedBy(checkpoint, siteKey, 'the checkpoint')) {
        moved = demo ? renamed(siteKey, siteKey.name.slice(0, -'/demo'.length)) : siteKey;
        out.push(`  the log key moved from ${vkeyOf(checkpoint.key)} to ${vkeyOf(siteKey)}: checkpoint ${checkpoint.size} is signed by both`);
      }
      // The checkpoint against the state file comes first: two checkpoints signed by the log's key that
      // no proof joins are named a rewrite and leave their evidence, whatever else fails; a rolled-back
      // log (an older view) explains whatever else then fails to match, so it ends the run.
      let served: Promise<Log> | undefined;
      const readServed = () => (served ??= readLog(site, prefix, checkpoint, cache));
      if (saved) {
        const levels = async (size: number) => (size === checkpoint.size ? (await readServed()).levels : (await readTree(site, prefix, size, cache)).levels);
        const consistency = await checkConsistent(saved, checkpoint, levels);
        if ('extends' in consistency) out.push(consistency.extends);
        else {
          const sentence = rewrites.get(checkpoint.note) ?? writeRewriteEvidence(saved, checkpoint, consistency.rewritten, o.stateFile!);
          rewrites.set(checkpoint.note, sentence);
          failures.add(sentence);
        }
      }
      const log = await failures.check(readServed) ?? failures.stop();
      const witnessed = policy && !demo && policy.quorum !== 'none';
      const cosigned = witnessed ? await failures.check(() => checkQuorum(policy, checkpoint, 'the checkpoint')) : undefined;
      const entries = await failures.check(() => readEntries(log.entries)) ?? failures.stop();

      const nights = await failures.check(async () => {
        const statsAnswer = expectOk(await get(new URL('/api/stats', site), MAX_ANSWER_BYTES), '/api/stats');
        const stats = parseJson(decoded(statsAnswer, '/api/stats', MAX_ANSWER_BYTES), '/api/stats');
        if (!isRecord(stats)) return fail('/api/stats is not the stats record (not a JSON object)');
        const historySize = answerCheckpoint('/api/history', historyAnswer, log);
        const statsSize = answerCheckpoint('/api/stats', statsAnswer, log);
        // The nights first: a changed night is named, whatever else its change breaks.
        const asComputed = entries.slice(0, historySize);
        const nights = checkNights(history, asComputed);
        const historySigned = verifyAnswer('/api/history', historyAnswer, directory);
        const statsSigned = verifyAnswer('/api/stats', statsAnswer, directory);
        if (statsSize !== historySize || stats.updated_at !== history.updated_at) {
          throw new Stale(`/api/stats and /api/history were computed from different states of the figures (log sizes ${statsSize} and ${historySize}, updated ${String(stats.updated_at)} and ${String(history.updated_at)}), even after waiting for caches`);
        }
        const statsLine = checkStats(stats, nights, asComputed);

        const latest = latestByDate(asComputed);
        const since = typeof history.since_date === 'string' && DATE.test(history.since_date) ? history.since_date : undefined;
        const missing = since ? gaps(since, latest) : [];
        const lastLogged = [...latest.keys()].at(-1);
        const at = (signed: Signed, size: number) => `key ${signed.kid}${signed.retired === undefined ? '' : `, retired ${isoSeconds(new Date(signed.retired * 1000))}`}, created ${isoSeconds(new Date(signed.created * 1000))}, against checkpoint ${size}${size === checkpoint.size ? '' : ` (an older state of the same tree)`}`;
        out.unshift(
          `verified ${site.origin}`,
          `  log ${checkpoint.origin}${demo ? ' (demo data)' : ''}: checkpoint of ${checkpoint.size} entries signed by the log key ${vkeyOf(checkpoint.key)} (from ${trust.source}), every tile and entry matches it (${log.tiles} tiles)`,
        );
        out.push(
          cosigned ? `  cosigned by ${witnessList(cosigned)}: the quorum "${policy!.quorum}" of the policy ${o.policyFile}`
            : demo ? '  the demo log is not witnessed'
            : policy ? `  the policy ${o.policyFile} asks for no cosignature (quorum none): the log is not witnessed`
            : '  no --policy: the log\'s witnesses and when each night was logged are not checked',
          `  /api/history: ${nights.length} nights checked, ${latest.size} of them in the log, each the latest entry for its date, and every night of the log among them`,
          !since || lastLogged === undefined ? '  the log holds no night yet'
            : missing.length ? `  no figure for ${plural(missing.length, 'night')} from ${since} to ${lastLogged}: ${ranges(missing)}`
            : `  a figure for every night from ${since} to ${lastLogged}`,
          statsLine,
          `  /api/history signature verifies (${at(historySigned, historySize)}), and its Content-Digest`,
          `  /api/stats signature verifies (${at(statsSigned, statsSize)}), and its Content-Digest`,
        );
        return nights;
      });

      // The witnessing of each night: whether or not the newest checkpoint is cosigned, the archive is what tells.
      if (witnessed && nights) {
        const keys = [...trust.keys, ...trust.previous, ...(moved ? [moved] : [])];
        const lines = await failures.check(() => checkWitnessing(site, log, listing.sizes, keys, policy, { entries, nights, strict: o.strict }));
        if (lines) out.push(...lines);
      }
      // The audits: the nights without a commitment, each attestation published for the log judged, and the openings with no result.
      out.push(commitmentsLine(entries));
      if (policy && !demo) {
        const keys = [...trust.keys, ...trust.previous, ...(moved ? [moved] : [])];
        const lines = await failures.check(() => checkAudits(site, prefix, policy, { origin: checkpoint.origin, keys, entries, levels: log.levels }));
        if (lines) out.push(...lines);
      } else {
        out.push(demo ? '  the demo log is not audited' : '  no --policy: the audits published under /log/audits, and whether their auditors count, are not checked');
      }
      failures.end();

      if (o.stateFile) {
        const key = moved ?? trust.keys.find((k) => k.raw.equals(checkpoint.key.raw)) ?? checkpoint.key;
        const retired = moved ? [...trust.previous, ...trust.keys].map(vkeyOf) : trust.previous.map(vkeyOf);
        // Only a checkpoint consistent with the saved one, at least as large, and with nothing else failed gets here.
        saveState(o.stateFile, {
          vkey: vkeyOf(key), previous_vkeys: [...new Set(retired)].filter((v) => v !== vkeyOf(key)),
          origin: checkpoint.origin, size: checkpoint.size, root: checkpoint.root.toString('base64'), checkpoint: checkpoint.note, seen_at: isoSeconds(new Date()),
        });
        out.push(`  saved checkpoint ${checkpoint.size} to ${o.stateFile}`);
      }
      return out;
    } catch (error) {
      if (!(error instanceof Stale)) throw error;
      if (attempt === ATTEMPTS) return fail([...failures.sentences, error.message].join('\n'));
      await sleep(RETRY_MS);
    }
  }
}
