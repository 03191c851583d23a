// The transparency log's routes (https://c2sp.org/tlog-tiles), the real log under /log/ and the demo
// log under /log/demo/: the latest checkpoint with the witnesses' latest cosignatures, every
// checkpoint ever signed with each witness's earliest cosignature (and a listing of them), the
// witness policy, hash tiles and entry bundles of height 8, a receipt per night
// (https://c2sp.org/tlog-proof), the audits and a page saying what the log is. The edge signs nothing
// here: the checkpoints are the ones the log's signer stored, served as they are, and the tiles are
// cut from the entries the latest checkpoint covers, once per upstream answer.
import { Hono, type Context } from 'hono';
import { midnightMs } from '../contract/dates.ts';
import { CACHE_IMMUTABLE } from '../contract/documents.ts';
import { logOrigin, logPrefix, SITE_PATHS } from '../contract/paths.ts';
import type { LogRecord } from '../contract/records.ts';
import { formatReceipt } from '../contract/tlog/note.ts';
import type { EdgeConfig } from './config.ts';
import type { Figures } from './figures.ts';
import { etagMatches, jsonError } from './http.ts';
import type { LogKind } from './log-holder.ts';
import type { LogReader } from './log-views.ts';
import { madeFrom, type Prepared } from './prepared.ts';
import { JSON_TYPE, unavailable } from './routing.ts';
import { emptyLogPage, logPage } from './tlog/page.ts';
import { auditsBody, logGaps, publishLog, type PublishedLog } from './tlog/published.ts';
import { parseTilePath, sizeHolding, tileBytes } from './tlog/tiles.ts';

const TEXT_TYPE = 'text/plain; charset=utf-8';
/** The checkpoint moves: a few seconds at most (tlog-tiles asks no more). */
const CHECKPOINT_CACHE_CONTROL = 'public, max-age=5';
/** What may still grow or, for the demo log, disappear with the demo data. */
const SHORT_CACHE_CONTROL = 'public, max-age=60';
/** A 404 for what the log may hold a moment later is never kept. */
const NOT_YET = { 'cache-control': 'no-store' };

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

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
