// The transparency log as the site serves it (https://c2sp.org/tlog-tiles under /log/): the
// checkpoint as a signed note, hash tiles and entry bundles of height 8, a receipt per night
// (https://c2sp.org/tlog-proof) and a small page saying what the log is. Everything is cut from the
// entries landing_log returns, once per upstream answer; the checkpoint is signed with the key
// directory's Ed25519 key under the log's origin. Ed25519 signatures are deterministic, so every
// node serving the same entries serves the same checkpoint, byte for byte.
import { Hono, type Context } from 'hono';
import type { EdgeConfig } from './config.ts';
import { midnightMs } from '../contract/dates.ts';
import { CACHE_IMMUTABLE } from '../contract/documents.ts';
import { madeFrom, type Figures, type Prepared } from './figures.ts';
import { etagMatches, jsonError, strongEtag } from './http.ts';
import { JSON_TYPE, unavailable } from './routing.ts';
import { esc } from './page/escape.ts';
import { logOrigin, SITE_PATHS } from '../contract/paths.ts';
import type { LogRecord } from '../contract/records.ts';
import { importSigningKey, type SigningKey } from './signing.ts';
import { logInUse, SERVICE_NAME, verification } from '../contract/texts/rules.ts';
import { buildTree, type Tree } from '../contract/tlog/merkle.ts';
import { checkpointBody, formatReceipt, signNote } from '../contract/tlog/note.ts';
import { noteVerifierKey } from '../contract/log-key.ts';
import { parseTilePath, tileBytes } from './tlog/tiles.ts';

const TEXT_TYPE = 'text/plain; charset=utf-8';
/** The checkpoint moves: a few seconds at most (tlog-tiles asks no more). */
const CHECKPOINT_CACHE_CONTROL = 'public, max-age=5';
/** What may still grow or, for the demo log, disappear with the demo data. */
const SHORT_CACHE_CONTROL = 'public, max-age=60';
/** An entry is at most this long: bundles prefix each with a uint16. */
const MAX_ENTRY_BYTES = 0xffff;

export interface PublishedLog {
  origin: string;
  demo: boolean;
  entries: Uint8Array[];
  tree: Tree;
  /** The signed checkpoint note and its strong validator. */
  checkpoint: string;
  checkpointEtag: string;
  verifierKey: string;
  /** Each date's latest entry. */
  latest: Map<string, number>;
}

export async function publishLog(record: LogRecord, siteUrl: string, key: SigningKey): Promise<PublishedLog> {
  const encoder = new TextEncoder();
  const entries = record.entries.map((entry) => encoder.encode(entry));
  const tooLong = entries.findIndex((entry) => entry.length > MAX_ENTRY_BYTES);
  if (tooLong >= 0) throw new Error(`log entry ${tooLong} is longer than an entry bundle can hold`);
  const latest = new Map<string, number>();
  record.entries.forEach((entry, index) => latest.set((JSON.parse(entry) as { date: string }).date, index));
  const demo = record.demo === true;
  const origin = logOrigin(siteUrl, demo);
  const tree = await buildTree(entries);
  const checkpoint = await signNote(checkpointBody(origin, tree.size, await tree.root()), origin, key.privateKey, key.publicKey);
  return { origin, demo, entries, tree, checkpoint, checkpointEtag: await strongEtag(checkpoint), verifierKey: await noteVerifierKey(origin, key.publicKey), latest };
}

function logPage(log: PublishedLog, cfg: Pick<EdgeConfig, 'siteUrl'>): string {
  const say = verification(cfg);
  const site = cfg.siteUrl;
  const which = logInUse(site, log.demo);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Transparency log · ${esc(SERVICE_NAME)}</title></head>
<body><main>
<h1>Transparency log of the nightly figures</h1>
<p>${esc(say.logged)}</p>
<p>${esc(which)}</p>
<dl>
<dt>Origin</dt><dd><code>${esc(log.origin)}</code></dd>
<dt>Entries</dt><dd>${log.tree.size}</dd>
<dt>Note verifier key</dt><dd><code>${esc(log.verifierKey)}</code></dd>
<dt>Checkpoint</dt><dd><a href="${esc(site + SITE_PATHS.LOG_CHECKPOINT)}">${esc(site + SITE_PATHS.LOG_CHECKPOINT)}</a></dd>
<dt>Tiles</dt><dd><code>${esc(SITE_PATHS.LOG_TILES)}&lt;L&gt;/&lt;N&gt;[.p/&lt;W&gt;]</code> and <code>${esc(SITE_PATHS.LOG_TILES)}entries/&lt;N&gt;[.p/&lt;W&gt;]</code> (height 8)</dd>
<dt>Receipts</dt><dd><a href="${esc(site + SITE_PATHS.LOG_PROOF)}">${esc(site + SITE_PATHS.LOG_PROOF)}</a> lists them; one night's is <code>${esc(SITE_PATHS.LOG_PROOF)}&lt;YYYY-MM-DD&gt;</code></dd>
</dl>
<p>${esc(say.signed)}</p>
<p>${esc(say.check)} <a href="${esc(site + SITE_PATHS.LOG_VERIFIER)}">Download the verifier</a>.</p>
<p><a href="${SITE_PATHS.HOME}">Back to the figures</a></p>
</main></body></html>
`;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

/** Where a path of the log is in this app, which the app mounts at SITE_PATHS.LOG. */
const inLog = (path: string) => path.slice(SITE_PATHS.LOG.length - 1);

/** The log's routes, mounted at SITE_PATHS.LOG by the app. */
export function createLogApp(cfg: EdgeConfig, figures: Figures): Hono {
  const app = new Hono();
  let signingKey: Promise<SigningKey> | undefined;
  const published = madeFrom(async (record: Prepared<LogRecord>) => {
    signingKey ??= importSigningKey(cfg.httpSigPrivateKey);
    return publishLog(record.value, cfg.siteUrl, await signingKey);
  });
  const current = async (): Promise<PublishedLog | undefined> => {
    let record: Prepared<LogRecord>;
    try {
      record = await figures.log();
    } catch (error) {
      console.error(`edge: ${(error as Error).message}`);
      return undefined;
    }
    return published(record);
  };
  const notHere = (what: string) => jsonError(404, `Not found: ${what}.`);

  app.get(inLog(SITE_PATHS.LOG), async () => {
    const log = await current();
    if (!log) return unavailable();
    return new Response(logPage(log, cfg), { headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': SHORT_CACHE_CONTROL } });
  });

  app.get(inLog(SITE_PATHS.LOG_CHECKPOINT), async (c) => {
    const log = await current();
    if (!log) return unavailable();
    const headers = { 'content-type': TEXT_TYPE, 'cache-control': CHECKPOINT_CACHE_CONTROL, etag: log.checkpointEtag };
    if (etagMatches(c.req.header('if-none-match'), log.checkpointEtag)) return new Response(null, { status: 304, headers });
    return new Response(log.checkpoint, { headers });
  });

  app.get(`${inLog(SITE_PATHS.LOG_TILES)}*`, async (c) => {
    const tile = parseTilePath(c.req.path.slice(SITE_PATHS.LOG.length));
    if (!tile) return notHere('not a tile path (tile/<L>/<N>[.p/<W>] or tile/entries/<N>[.p/<W>], N in x-prefixed three-digit groups)');
    const log = await current();
    if (!log) return unavailable();
    const bytes = tileBytes(log.tree, log.entries, tile);
    if (!bytes) return notHere('the log holds no such tile yet');
    // A full tile never changes; a partial one is a prefix of what comes, kept briefly all the same.
    const immutable = tile.width === undefined && !log.demo;
    return new Response(bytes, { headers: { 'content-type': 'application/octet-stream', 'cache-control': immutable ? CACHE_IMMUTABLE : SHORT_CACHE_CONTROL } });
  });

  // The receipts there are: each night's latest entry, by date.
  app.get(inLog(SITE_PATHS.LOG_PROOF), async () => {
    const log = await current();
    if (!log) return unavailable();
    const receipts = [...log.latest].sort(([a], [b]) => (a < b ? -1 : 1)).map(([date, index]) => ({ date, index, url: `${cfg.siteUrl}${SITE_PATHS.LOG_PROOF}${date}` }));
    return new Response(`${JSON.stringify({ origin: log.origin, size: log.tree.size, receipts })}\n`, { headers: { 'content-type': JSON_TYPE, 'cache-control': SHORT_CACHE_CONTROL } });
  });

  app.get(`${inLog(SITE_PATHS.LOG_PROOF)}:date`, async (c) => {
    const date = c.req.param('date')!;
    if (!ISO_DATE.test(date) || Number.isNaN(midnightMs(date))) return jsonError(400, `The night must be a date, YYYY-MM-DD (UTC); got "${date}".`);
    const log = await current();
    if (!log) return unavailable();
    const index = log.latest.get(date);
    if (index === undefined) return notHere(`the log holds no entry for ${date} (a night enters it three days after its date)`);
    const receipt = formatReceipt(log.entries[index]!, index, await log.tree.inclusionProof(index), log.checkpoint);
    return new Response(receipt, { headers: { 'content-type': TEXT_TYPE, 'cache-control': SHORT_CACHE_CONTROL, 'content-disposition': `inline; filename="${date}.tlog-proof"` } });
  });

  app.all('*', (c: Context) => (c.req.method === 'GET' || c.req.method === 'HEAD' ? notHere('this log serves checkpoint, tile/… and proof/<date>') : jsonError(405, 'Method not allowed: use GET, HEAD, OPTIONS.', { allow: 'GET, HEAD, OPTIONS' })));
  return app;
}
