// verify/: the verifier that followers run: a site's answers, nights, witnesses and audits against
// its log. It imports log-reader/.
//
// Checks the Public Stats Service from outside, as anyone can: `node verify.mjs --site URL --state FILE
// [--policy FILE] [--vkey VKEY] [--receipt FILE] [--strict]` on Node 20 or later with nothing
// installed. Its source is a folder of small modules that import only Node's own modules and each
// other; the site's build bundles them into the one file it serves at /log/verify.mjs. It is written
// from the standards, not from the service's code, and trusts nothing the site says about itself:
//
// 1. the log's key is a note verifier key (https://c2sp.org/signed-note) from --vkey, the policy's
//    `log` line, or the state file; only with none of them is the key the site names trusted, on
//    first use, printed and recorded in the state file. A checkpoint not signed by that key fails;
//    one signed by it and by the key the site now names (a rotation overlap) moves the state file to
//    the new key. The demo log (under /log/demo/ while /api/history says "demo") is signed by the
//    same key under its own origin;
// 2. the checkpoint (https://c2sp.org/tlog-checkpoint) verifies with that key, and with a policy
//    (https://c2sp.org/tlog-policy) carries cosignature/v1 lines (https://c2sp.org/tlog-cosignature)
//    of a quorum of its witnesses;
// 3. the entry bundles and hash tiles (https://c2sp.org/tlog-tiles) rebuild exactly the tree the
//    checkpoint names (RFC 6962 hashing, https://www.rfc-editor.org/rfc/rfc6962#section-2.1), and
//    every entry is RFC 8785 JSON (https://www.rfc-editor.org/rfc/rfc8785) of a night, the wallet's
//    commitment or an audit's opening;
// 4. with --state, the checkpoint is consistent with the one an earlier run saved (RFC 9162 §2.1.4
//    consistency proofs, https://www.rfc-editor.org/rfc/rfc9162#section-2.1.4): a smaller one that is
//    a prefix is an older view, one that is not is a rewrite, and a rewrite leaves an evidence file
//    with both signed checkpoints and the failed proof, whatever else fails too; the state file keeps
//    the newer checkpoint;
// 5. completeness both ways: every night /api/history serves is the latest log entry for its date,
//    every date in the log is a night of /api/history with the same figures, a night not yet in the
//    log comes after every night in it, every calendar gap in the log is named, and /api/stats's
//    total_usd and the daily values of final nights agree with the log to the cent;
// 6. /api/history and /api/stats carry RFC 9421 signatures (https://www.rfc-editor.org/rfc/rfc9421)
//    by a key of the key directory (Ed25519 JWKs named by their RFC 7638 thumbprints; a retired
//    key's only before its "exp"), over an RFC 9530 Content-Digest
//    (https://www.rfc-editor.org/rfc/rfc9530) of the bytes sent and a Log-Checkpoint field naming
//    the verified checkpoint or an older state of the same tree;
// 7. with a policy, every checkpoint of the archive (/log/checkpoint/<size>) is a state of the same
//    tree, and each night is witnessed on time when a checkpoint holding its first entry was
//    cosigned by the quorum by midnight UTC of its date plus 4 days, or else logged late; the
//    site's witnessed_at claims must agree, and --strict fails on a night logged late after the
//    first one witnessed on time;
// 8. every night logged after the log's first wallet entry carries a commitment to its reward
//    transfers (`transfers`), or is named; with a policy, every audit attestation the site publishes
//    under /log/audits (a signed note by an auditor's own Ed25519 key, type 0x01, which its body
//    names) verifies by that key and is of this log. It counts only when the policy lists that key on
//    an `auditor <vkey>` line, it is of rule v2, it passed, and its nights were drawn: drawn again here
//    from its checkpoint's root and its nonce, that checkpoint being a state of the log, and opened in
//    the log by the entry its `opening` line names, an audit's opening after that checkpoint by the
//    same auditor with the nonce's SHA-256, the checkpoint and the sample; each night it names is the
//    night's latest entry within the checkpoint, and a night passed carries a commitment there. A
//    listed auditor's attestation that the log contradicts fails; one of rule v1, of nights the owner
//    named, that failed, by a key the policy does not list, or checked against another log key, is
//    named and not counted. An attested night corrected after its checkpoint, and each opening in the
//    log that no attestation by its auditor names, get a line each;
// 9. --receipt checks a saved /log/proof/<date> receipt (https://c2sp.org/tlog-proof) offline with
//    the pinned key and the policy; with --site, it also says whether its night is still the latest
//    entry for its date.
//
// Each failure is one sentence, a line on stderr, and the run exits 1: one line, or after a rewrite
// (or a failed check the others do not depend on) one for each failure, the rewrite's first. Bad
// usage exits 2.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { Failure, fail } from '../log-reader/failure.ts';
import { agents } from '../log-reader/http.ts';
import { DEFAULT_SITE } from './default-site.ts';
import { ED25519_NOTE, parseVkey, type NoteKey } from '../log-reader/notes.ts';
import type { Options, Trust } from './options.ts';
import { parsePolicy, type Policy } from './policy.ts';
import { checkReceipt } from './receipt.ts';
import { checkSite } from './site.ts';
import { readState } from '../log-reader/state.ts';

// The checkout's source runs as `npm run verify`; the one file a site serves, as `node <that file>`.
const program = basename(process.argv[1] ?? 'verify.mjs');
const USAGE = `Usage: ${program === 'cli.ts' ? 'npm run verify --' : `node ${program}`} [--site URL] [--state FILE] [--policy FILE] [--vkey VKEY] [--receipt FILE] [--strict]
  --site URL      the site to check, scheme and host only (default ${DEFAULT_SITE})
  --state FILE    the log's key and the last checkpoint seen: a later run checks the log is consistent with it, then saves the newest
  --policy FILE   a C2SP tlog-policy (https://c2sp.org/tlog-policy): the log's key, its witnesses and the quorum that must cosign, and the auditors whose attestations count
  --vkey VKEY     the log's note verifier key (https://c2sp.org/signed-note), pinned
  --receipt FILE  check a saved /log/proof/<date> receipt offline (with --site, also whether its night is still the latest for its date)
  --strict        fail on any night logged late after the first night witnessed on time
  --help          print this help`;

async function main(o: Options): Promise<string[]> {
  let policy: Policy | undefined;
  if (o.policyFile) {
    let bytes: Buffer;
    try { bytes = readFileSync(o.policyFile); } catch (error) { return fail(`the policy ${o.policyFile} cannot be read (${(error as { code?: string }).code ?? (error as Error).message})`); }
    policy = parsePolicy(bytes, o.policyFile);
  }
  const saved = o.stateFile ? readState(o.stateFile) : undefined;
  const logKey = (vkey: string, where: string): NoteKey => {
    const key = parseVkey(vkey, ED25519_NOTE);
    return typeof key === 'string' ? fail(`${where} is not a log key (a note verifier key of type 0x01): ${key}`) : key;
  };
  const previous = (saved?.previous_vkeys ?? []).map((v) => logKey(v, `a previous log key in the state file ${o.stateFile}`));
  const pinned: Trust | undefined = o.vkey ? { keys: [logKey(o.vkey, '--vkey')], source: '--vkey', previous }
    : policy?.logs.length ? { keys: policy.logs, source: `the policy ${o.policyFile}`, previous }
    : saved?.vkey ? { keys: [logKey(saved.vkey, `the log key in the state file ${o.stateFile}`)], source: `the state file ${o.stateFile}`, previous }
    : undefined;
  if (o.receiptFile) {
    if (!pinned) usage('--receipt needs the log\'s key: --vkey, a --policy with a log line, or a --state file an earlier run wrote');
    return checkReceipt(o, o.receiptFile, pinned!, policy);
  }
  return checkSite(o, pinned, policy, saved);
}

function usage(message: string): never {
  console.error(`verify: ${message}\n${USAGE}`);
  process.exit(2);
}

let options: { site?: string | undefined; state?: string | undefined; policy?: string | undefined; vkey?: string | undefined; receipt?: string | undefined; strict?: boolean | undefined; help?: boolean | undefined };
try {
  options = parseArgs({
    options: {
      site: { type: 'string' }, state: { type: 'string' }, policy: { type: 'string' }, vkey: { type: 'string' }, receipt: { type: 'string' },
      strict: { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: false,
  }).values;
} catch (error) {
  usage((error as Error).message);
}
if (options.help) {
  console.log(USAGE);
  process.exit(0);
}
let site: URL;
try { site = new URL(options.site ?? DEFAULT_SITE); } catch { usage(`--site must be the URL of the site (scheme and host), not "${options.site}"`); }
if ((site.protocol !== 'http:' && site.protocol !== 'https:') || site.username || site.password || site.pathname !== '/' || site.search || site.hash) {
  usage(`--site must be an http or https URL of the site itself (scheme and host only), not "${options.site}"`);
}
for (const name of ['state', 'policy', 'vkey', 'receipt'] as const) if (options[name] === '') usage(`--${name} needs a value`);
if (options.strict && !options.policy) usage('--strict needs --policy: without witnesses no night is witnessed on time or late');
if (options.vkey && typeof parseVkey(options.vkey, ED25519_NOTE) === 'string') usage(`--vkey must be the log's note verifier key (<name>+<key ID>+<key>, type 0x01), not "${options.vkey}"`);
let code = 0;
try {
  const o: Options = {
    site, siteGiven: options.site !== undefined, stateFile: options.state, policyFile: options.policy, vkey: options.vkey,
    receiptFile: options.receipt, strict: options.strict === true,
  };
  console.log((await main(o)).join('\n'));
} catch (error) {
  const sentences = error instanceof Failure ? error.message.split('\n') : [`an unexpected error: ${(error as Error).message}`];
  console.error(sentences.map((sentence) => `verify: ${sentence}`).join('\n'));
  code = 1;
}
agents.http.destroy();
agents.https.destroy();
process.exit(code);
