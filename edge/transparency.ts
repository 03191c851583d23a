// The transparency log as the site serves it (https://c2sp.org/tlog-tiles), the real log under /log/
// and the demo log under /log/demo/: the latest checkpoint with the witnesses' latest cosignatures,
// every checkpoint ever signed with each witness's earliest cosignature (and a listing of them), the
// witness policy, hash tiles and entry bundles of height 8, a receipt per night
// (https://c2sp.org/tlog-proof) and a page saying what the log is. The edge signs nothing here: the
// checkpoints are the ones the log's signer stored, served as they are, and the tiles are cut from the
// entries the latest checkpoint covers, once per upstream answer.
import { Hono, type Context } from 'hono';
import type { EdgeConfig } from './config.ts';
import type { LogKind } from './log-holder.ts';
import type { LogReader } from './log-views.ts';
import { datesMissing, midnightMs } from '../contract/dates.ts';
import { CACHE_IMMUTABLE } from '../contract/documents.ts';
import { madeFrom, type Figures, type Prepared } from './figures.ts';
import { etagMatches, jsonError, strongEtag } from './http.ts';
import { JSON_TYPE, unavailable } from './routing.ts';
import { esc } from './page/escape.ts';
import { logOrigin, logPrefix, SITE_PATHS } from '../contract/paths.ts';
import type { AuditsRecord, HistoryRecord, LogRecord } from '../contract/records.ts';
import { allGaps, GAPS_ANCHOR, logSentences, logSummary, signerOf } from '../contract/texts/witnessing.ts';
import { auditsListed } from '../contract/texts/audit.ts';
import { partHtml } from './page/html.ts';
import { logInUse, SERVICE_NAME, verification } from '../contract/texts/rules.ts';
import { base64 } from '../contract/log-key.ts';
import { buildTree, type Tree } from '../contract/tlog/merkle.ts';
import { formatReceipt } from '../contract/tlog/note.ts';
import { parseTilePath, tileBytes, TILE_WIDTH, type TileAddress } from './tlog/tiles.ts';

const TEXT_TYPE = 'text/plain; charset=utf-8';
/** The checkpoint moves: a few seconds at most (tlog-tiles asks no more). */
const CHECKPOINT_CACHE_CONTROL = 'public, max-age=5';
/** What may still grow or, for the demo log, disappear with the demo data. */
const SHORT_CACHE_CONTROL = 'public, max-age=60';
/** A 404 for what the log may hold a moment later is never kept. */
const NOT_YET = { 'cache-control': 'no-store' };
/** An entry is at most this long: bundles prefix each with a uint16. */
const MAX_ENTRY_BYTES = 0xffff;
/** A superseded checkpoint may still gain the cosignature of a round that was under way; after this, it never changes. */
const SETTLED_MS = 60_000;

interface Archived {
  size: number;
  /** The note with each witness's earliest cosignature. */
  text: string;
  settled: boolean;
}

export interface PublishedLog {
  origin: string;
  demo: boolean;
  entries: Uint8Array[];
  tree: Tree;
  /** The latest checkpoint with each witness's latest cosignature, and its strong validator. */
  checkpoint: string;
  checkpointEtag: string;
  verifierKey: string;
  policy: string | null;
  archive: Map<number, Archived>;
  /** The listing of the archive, as served. */
  listing: string;
  /** Each date's latest entry. */
  latest: Map<string, number>;
  /** Every published audit attestation of the log, as served, and its strong validator. */
  audits: string;
  auditsEtag: string;
  record: LogRecord;
}

const withLines = (note: string, lines: readonly string[]) => note + lines.map((line) => `${line}\n`).join('');

/** The audits as served: each attestation verbatim, with when it was published. */
const auditsBody = (audits: LogRecord['audits']): string => `${JSON.stringify({ audits: audits.map(({ note, published_at }) => ({ note, published_at })) } satisfies AuditsRecord)}\n`;

/** The log as served, or undefined while nothing is signed. Throws when the entries do not give the checkpoint's root. */
export async function publishLog(record: LogRecord, siteUrl: string, now = Date.now()): Promise<PublishedLog | undefined> {
  const last = record.checkpoints.at(-1);
  if (!last) return undefined;
  const encoder = new TextEncoder();
  const entries = record.entries.map((entry) => encoder.encode(entry));
  const tooLong = entries.findIndex((entry) => entry.length > MAX_ENTRY_BYTES);
  if (tooLong >= 0) throw new Error(`log entry ${tooLong} is longer than an entry bundle can hold`);
  const tree = await buildTree(entries);
  if (tree.size !== last.size || base64(await tree.root()) !== last.root) throw new Error(`the log's ${tree.size} entries do not give the root of its checkpoint of ${last.size}`);
  const latest = new Map<string, number>();
  // Nights only: a wallet commitment's entry names no date.
  record.entries.forEach((entry, index) => {
    const { date } = JSON.parse(entry) as { date?: unknown };
    if (typeof date === 'string') latest.set(date, index);
  });
  const demo = record.demo === true;
  const origin = last.note.slice(0, last.note.indexOf('\n'));
  const checkpoint = withLines(last.note, record.cosignatures);
  const archive = new Map<number, Archived>();
  record.checkpoints.forEach((c, i) => {
    const next = record.checkpoints[i + 1];
    archive.set(c.size, { size: c.size, text: withLines(c.note, c.cosignatures), settled: next !== undefined && now - Date.parse(next.signed_at) > SETTLED_MS });
  });
  const prefix = siteUrl + logPrefix(demo);
  const listing = `${JSON.stringify({
    origin,
    vkey: record.vkey,
    policy: record.policy === null ? null : `${prefix}policy`,
    checkpoints: record.checkpoints.map((c) => ({
      size: c.size, root: c.root, signed_at: c.signed_at, quorum_at: c.quorum_at, witnesses: c.cosignatures.map(signerOf), url: `${prefix}checkpoint/${c.size}`,
    })),
  })}\n`;
  const audits = auditsBody(record.audits);
  return { origin, demo, entries, tree, checkpoint, checkpointEtag: await strongEtag(checkpoint), verifierKey: record.vkey ?? '', policy: record.policy, archive, listing, latest, audits, auditsEtag: await strongEtag(audits), record };
}

/** The dates between the first and the last night the log holds for which it holds nothing. */
export function logGaps(latest: ReadonlyMap<string, number>): string[] {
  const dates = [...latest.keys()].sort();
  return dates.length ? datesMissing(dates, dates[0]!, dates.at(-1)!) : [];
}

/** The /log/ page: the same account of the log as the landing page gives, then its technical detail. */
function logPage(log: PublishedLog, history: HistoryRecord | undefined, cfg: Pick<EdgeConfig, 'siteUrl' | 'logOrigin'>): string {
  const say = verification(cfg);
  const site = cfg.siteUrl;
  const prefix = logPrefix(log.demo);
  const summary = history && logSummary(history, log.record);
  const facts = summary ? logSentences(summary, log.demo, cfg).facts : [['The track record could not be read right now.']];
  const gaps = summary && allGaps(summary);
  const policy = log.policy === null ? '' : `<dt>Witness policy</dt><dd><a href="${esc(site + prefix)}policy">${esc(site + prefix)}policy</a></dd>\n`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Transparency log · ${esc(SERVICE_NAME)}</title></head>
<body><main>
<h1>Transparency log of the nightly figures</h1>
<ul id="log-summary">
${facts.map((parts) => `<li>${parts.map(partHtml).join('')}</li>`).join('\n')}
</ul>
${gaps ? `<h2 id="${GAPS_ANCHOR}">Dates with no figure</h2>\n<p>${esc(gaps)}</p>\n` : ''}<p>${esc(say.logged)}</p>
<p>${esc(logInUse(cfg, log.demo))}</p>
<dl>
<dt>Origin</dt><dd><code>${esc(log.origin)}</code></dd>
<dt>Entries</dt><dd>${log.tree.size}</dd>
<dt>Note verifier key</dt><dd><code>${esc(log.verifierKey)}</code></dd>
<dt>Checkpoint</dt><dd><a href="${esc(site + prefix)}checkpoint">${esc(site + prefix)}checkpoint</a>; every one ever signed: <a href="${esc(site + prefix)}checkpoint/">${esc(site + prefix)}checkpoint/</a></dd>
<dt>Tiles</dt><dd><code>${esc(prefix)}tile/&lt;L&gt;/&lt;N&gt;[.p/&lt;W&gt;]</code> and <code>${esc(prefix)}tile/entries/&lt;N&gt;[.p/&lt;W&gt;]</code> (height 8)</dd>
${policy}<dt>Receipts</dt><dd><a href="${esc(site + prefix)}proof/">${esc(site + prefix)}proof/</a> lists them; one night's is <code>${esc(prefix)}proof/&lt;YYYY-MM-DD&gt;</code></dd>
<dt>Audits</dt><dd><a href="${esc(site + prefix)}audits">${esc(site + prefix)}audits</a>: ${esc(auditsListed(log.record.audits.length))}</dd>
</dl>
<p>${esc(say.signed)}</p>
<p>${esc(say.check)} <a href="${esc(site + SITE_PATHS.LOG_VERIFIER)}">Download the verifier</a>.</p>
<p><a href="${SITE_PATHS.HOME}">Back to the figures</a></p>
</main></body></html>
`;
}

function emptyLogPage(cfg: Pick<EdgeConfig, 'siteUrl' | 'logOrigin'>): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Transparency log · ${esc(SERVICE_NAME)}</title></head>
<body><main>
<h1>Transparency log of the nightly figures</h1>
<p>The log holds no signed checkpoint yet: a night enters it three days after its date, and the writer signs each new tree.</p>
<p>${esc(verification(cfg).logged)}</p>
<p><a href="${SITE_PATHS.HOME}">Back to the figures</a></p>
</main></body></html>
`;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

/** The tree size from which the log holds `tile`. */
function sizeHolding(tile: TileAddress): number {
  const level = tile.level === 'entries' ? 0 : tile.level;
  return (tile.index * TILE_WIDTH + (tile.width ?? TILE_WIDTH)) * TILE_WIDTH ** level;
}

/** The logs as served now: the one the figures use, and each log the node's holder holds (undefined while it has no checkpoint). */
interface ServedLogs {
  inUse: LogKind;
  logs: Partial<Record<LogKind, PublishedLog | undefined>>;
}

const kindOf = (demo: boolean): LogKind => (demo ? 'demo' : 'real');

/** The log's routes, mounted at SITE_PATHS.LOG by the app: the real log there, the demo log under demo/. */
export function createLogApp(cfg: EdgeConfig, reader: LogReader, figures: Figures): Hono {
  const app = new Hono();
  const publisher = () => madeFrom(async (record: Prepared<LogRecord>) => publishLog(record.value, cfg.siteUrl));
  // One each: the demo log stays held beside the real one.
  const publishers = { real: publisher(), demo: publisher() };
  /** The logs now served, as the node's holder holds them: 'down' when they cannot be read. */
  const current = async (): Promise<ServedLogs | 'down'> => {
    try {
      const views = await reader.now();
      const logs: ServedLogs['logs'] = {};
      for (const kind of ['real', 'demo'] as const) {
        const record = views.logs[kind];
        if (record) logs[kind] = await publishers[kind](record);
      }
      return { inUse: views.inUse, logs };
    } catch (error) {
      console.error(`edge: ${(error as Error).message}`);
      return 'down';
    }
  };
  const notHere = (what: string, headers: Record<string, string> = {}) => jsonError(404, `Not found: ${what}.`, headers);

  for (const demo of [false, true]) {
    const kind = kindOf(demo);
    const at = (path: string) => logPrefix(demo).slice(SITE_PATHS.LOG.length - 1) + path;
    /**
     * The log this prefix serves, or the answer that says where it is. While the figures are demo
     * data and no real log was ever signed, the real log's paths lead to the demo log's, so that every
     * documented path of the log answers; a log once served stays served at its own paths.
     */
    const served = async (c: Context): Promise<PublishedLog | Response> => {
      const now = await current();
      if (now === 'down') return unavailable();
      const log = now.logs[kind];
      if (log) return log;
      if (!demo && now.inUse === 'demo' && now.logs.demo) {
        const url = new URL(c.req.url);
        return new Response(null, { status: 302, headers: { location: SITE_PATHS.LOG_DEMO + url.pathname.slice(SITE_PATHS.LOG.length) + url.search, ...NOT_YET } });
      }
      if (now.inUse === kind || !now.logs[now.inUse]) return notHere('the log holds no signed checkpoint yet', NOT_YET);
      return notHere(`the figures are ${now.inUse === 'demo' ? 'demo data: their log is at' : 'real: their log is at'} ${logPrefix(now.inUse === 'demo')}`, NOT_YET);
    };
    /** The log this prefix serves once its holder holds `size` entries, if it ever signed that many (a client named it). */
    const servedHolding = async (c: Context, size: number): Promise<PublishedLog | Response> => {
      const log = await served(c);
      if (log instanceof Response || log.tree.size >= size) return log;
      await reader.ensure(log.origin, size, true);
      return served(c);
    };

    app.get(at(''), async (c) => {
      const now = await current();
      if (now === 'down') return unavailable();
      // A person who follows a link to the other log's page is taken to the log in use.
      if (now.inUse !== kind) return c.redirect(logPrefix(now.inUse === 'demo'));
      const log = now.logs[kind];
      // Before the first checkpoint the page says so, rather than answer a person with a 404.
      if (!log) return new Response(emptyLogPage(cfg), { headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': SHORT_CACHE_CONTROL } });
      const history = await figures.history().then((h) => h.value, () => undefined);
      return new Response(logPage(log, history, cfg), { headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': SHORT_CACHE_CONTROL } });
    });

    app.get(at('checkpoint'), async (c) => {
      const log = await served(c);
      if (log instanceof Response) return log;
      const headers = { 'content-type': TEXT_TYPE, 'cache-control': CHECKPOINT_CACHE_CONTROL, etag: log.checkpointEtag };
      if (etagMatches(c.req.header('if-none-match'), log.checkpointEtag)) return new Response(null, { status: 304, headers });
      return new Response(log.checkpoint, { headers });
    });

    app.get(at('checkpoint/'), async (c) => {
      const log = await served(c);
      if (log instanceof Response) return log;
      return new Response(log.listing, { headers: { 'content-type': JSON_TYPE, 'cache-control': CHECKPOINT_CACHE_CONTROL } });
    });

    app.get(at('checkpoint/:size'), async (c) => {
      const size = c.req.param('size')!;
      if (!/^[1-9]\d{0,15}$/.test(size)) return jsonError(400, `A checkpoint is named by its tree size, a whole number above 0; got "${size}".`);
      const log = await servedHolding(c, Number(size));
      if (log instanceof Response) return log;
      const archived = log.archive.get(Number(size));
      if (!archived) return notHere(`the log signed no checkpoint of ${size} entries`, NOT_YET);
      return new Response(archived.text, { headers: { 'content-type': TEXT_TYPE, 'cache-control': archived.settled && !demo ? CACHE_IMMUTABLE : SHORT_CACHE_CONTROL } });
    });

    app.get(at('policy'), async (c) => {
      const log = await served(c);
      if (log instanceof Response) return log;
      if (log.policy === null) return notHere('the log has no witness policy: it is not witnessed', NOT_YET);
      return new Response(log.policy, { headers: { 'content-type': TEXT_TYPE, 'cache-control': SHORT_CACHE_CONTROL } });
    });

    app.get(at('tile/*'), async (c) => {
      const tile = parseTilePath(c.req.path.slice(logPrefix(demo).length));
      if (!tile) return notHere('not a tile path (tile/<L>/<N>[.p/<W>] or tile/entries/<N>[.p/<W>], N in x-prefixed three-digit groups)');
      // A checkpoint another node serves may already name this tile: the holder reads the log anew before saying no.
      const log = await servedHolding(c, sizeHolding(tile));
      if (log instanceof Response) return log;
      const bytes = tileBytes(log.tree, log.entries, tile);
      if (!bytes) return notHere('the log holds no such tile yet', NOT_YET);
      // A full tile never changes; a partial one is a prefix of what comes, kept briefly all the same.
      const immutable = tile.width === undefined && !demo;
      return new Response(bytes, { headers: { 'content-type': 'application/octet-stream', 'cache-control': immutable ? CACHE_IMMUTABLE : SHORT_CACHE_CONTROL } });
    });

    // The receipts there are: each night's latest entry, by date.
    app.get(at('proof/'), async (c) => {
      const now = await current();
      // No checkpoint signed yet: no receipt either.
      if (now !== 'down' && !Object.values(now.logs).some(Boolean)) return new Response(`${JSON.stringify({ origin: logOrigin(cfg, demo), size: 0, receipts: [], gaps: [] })}\n`, { headers: { 'content-type': JSON_TYPE, 'cache-control': NOT_YET['cache-control'] } });
      const log = await served(c);
      if (log instanceof Response) return log;
      const receipts = [...log.latest].sort(([a], [b]) => (a < b ? -1 : 1)).map(([date, index]) => ({ date, index, url: `${cfg.siteUrl}${logPrefix(demo)}proof/${date}` }));
      return new Response(`${JSON.stringify({ origin: log.origin, size: log.tree.size, receipts, gaps: logGaps(log.latest) })}\n`, { headers: { 'content-type': JSON_TYPE, 'cache-control': SHORT_CACHE_CONTROL } });
    });

    app.get(at('proof/:date'), async (c) => {
      const date = c.req.param('date')!;
      if (!ISO_DATE.test(date) || Number.isNaN(midnightMs(date))) return jsonError(400, `The night must be a date, YYYY-MM-DD (UTC); got "${date}".`);
      const log = await served(c);
      if (log instanceof Response) return log;
      const index = log.latest.get(date);
      if (index === undefined) return notHere(`the log holds no entry for ${date} (a night enters it three days after its date)`, NOT_YET);
      const receipt = formatReceipt(log.entries[index]!, index, await log.tree.inclusionProof(index), log.checkpoint);
      return new Response(receipt, { headers: { 'content-type': TEXT_TYPE, 'cache-control': SHORT_CACHE_CONTROL, 'content-disposition': `inline; filename="${date}.tlog-proof"` } });
    });

    // Every audit attestation published for the log, verbatim, oldest first.
    app.get(at('audits'), async (c) => {
      const now = await current();
      // No checkpoint signed yet: nothing an auditor could have checked, but the list is answered all the same.
      if (now !== 'down' && !Object.values(now.logs).some(Boolean)) {
        const record = await reader.inUse().then((log) => log.value, () => undefined);
        return new Response(auditsBody(record?.audits ?? []), { headers: { 'content-type': JSON_TYPE, 'cache-control': NOT_YET['cache-control'] } });
      }
      const log = await served(c);
      if (log instanceof Response) return log;
      const headers = { 'content-type': JSON_TYPE, 'cache-control': SHORT_CACHE_CONTROL, etag: log.auditsEtag };
      if (etagMatches(c.req.header('if-none-match'), log.auditsEtag)) return new Response(null, { status: 304, headers });
      return new Response(log.audits, { headers });
    });
  }

  app.all('*', (c: Context) => (c.req.method === 'GET' || c.req.method === 'HEAD' ? notHere('this log serves checkpoint, checkpoint/<size>, policy, tile/…, proof/<date> and audits') : jsonError(405, 'Method not allowed: use GET, HEAD, OPTIONS.', { allow: 'GET, HEAD, OPTIONS' })));
  return app;
}
