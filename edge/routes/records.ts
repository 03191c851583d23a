// The site host's records and what is made from them: the stats and the track record (JSON and
// CSV, signed), health, the Atom feed, the badge and the share card. Each made thing is made once
// per upstream answer, not once per request.
import { Hono, type Context } from 'hono';
import { SITE_PATHS, type Origins } from '../../contract/paths.ts';
import type { HistoryRecord, PublishedStats } from '../../contract/records.ts';
import type { Answer } from '../answers.ts';
import { badgeSvg, SVG_TYPE } from '../badge.ts';
import { ATOM_TYPE, atomFeed } from '../feed.ts';
import type { Figures } from '../figures.ts';
import { historyCsv, parseRange, withinRange } from '../history.ts';
import { jsonError } from '../http.ts';
import { shareImageSvg } from '../page/share-image.ts';
import { madeFrom, type Prepared } from '../prepared.ts';
import { getRoute, JSON_TYPE, notFound, sent, unavailable, validated, withEtag, type Sign } from '../routing.ts';

/** Health is near-live: a few seconds at most. */
const HEALTH_CACHE_CONTROL = 'public, max-age=5';
/** text/csv as RFC 4180 §3 registers it, with its header parameter: the first line names the columns. */
const CSV_TYPE = 'text/csv; charset=utf-8; header=present';

/** The query exactly as the client sent it (with its "?"), which a signature then covers; none when empty. */
function rawQuery(url: string): string | undefined {
  const at = url.indexOf('?');
  return at >= 0 && at < url.length - 1 ? url.slice(at) : undefined;
}

export interface RecordsOptions {
  cfg: Origins;
  figures: Figures;
  /** Signs for the site host. */
  sign: Sign;
  /** SVG to PNG, for the share card; without it that route answers 404. */
  renderPng?: (svg: string) => Uint8Array;
}

export function createRecordsApp({ cfg, figures, sign, renderPng }: RecordsOptions): Hono {
  const app = new Hono();
  /** A figure, or undefined (the failure logged) while it cannot be read. */
  const orLogged = <T>(read: () => Promise<T>) => () => read().catch((error: Error) => {
    console.error(`edge: ${error.message}`);
    return undefined;
  });
  const readStats = orLogged(() => figures.stats());
  const readHistory = orLogged(() => figures.history());

  getRoute(app, SITE_PATHS.SITE_STATS, async (c) => {
    const stats = await readStats();
    if (!stats) return unavailable();
    // The record takes no query, so a signature never covers one.
    const answer: Answer = { body: stats.body, contentType: JSON_TYPE, etag: stats.etag, path: SITE_PATHS.SITE_STATS, logCheckpoint: stats.value.log_checkpoint };
    return sent(c, await sign(c, answer, 'stats'));
  });

  // The track record, whole or within from/to, as JSON or CSV. The whole record's JSON is the
  // prepared upstream answer; its CSV, the feed and the badge are made once per upstream answer.
  const wholeCsv = madeFrom((history: Prepared<HistoryRecord>) => withEtag(historyCsv(history.value)));
  const history = (format: 'json' | 'csv') => async (c: Context) => {
    const range = parseRange({ from: c.req.query('from'), to: c.req.query('to') });
    if ('error' in range) return jsonError(400, range.error);
    const whole = await readHistory();
    if (!whole) return unavailable();
    const type = format === 'csv' ? CSV_TYPE : JSON_TYPE;
    const record = withinRange(whole.value, range);
    const made = record !== whole.value ? await withEtag(format === 'csv' ? historyCsv(record) : `${JSON.stringify(record)}\n`)
      : format === 'csv' ? await wholeCsv(whole) : whole;
    const path = format === 'csv' ? SITE_PATHS.SITE_HISTORY_CSV : SITE_PATHS.SITE_HISTORY;
    const query = rawQuery(c.req.url);
    const answer: Answer = { body: made.body, contentType: type, etag: made.etag, path, query, logCheckpoint: whole.value.log_checkpoint };
    // Only the whole record, asked with no query, is kept signed here; the gateway caches the rest.
    return sent(c, await sign(c, answer, query ? undefined : path));
  };
  getRoute(app, SITE_PATHS.SITE_HISTORY, history('json'));
  getRoute(app, SITE_PATHS.SITE_HISTORY_CSV, history('csv'));

  // Always 200 while the site is up: the status field carries "down", never the HTTP status.
  getRoute(app, SITE_PATHS.SITE_HEALTH, async () => {
    const health = await figures.health();
    return new Response(health.body, { headers: { 'content-type': JSON_TYPE, 'cache-control': HEALTH_CACHE_CONTROL } });
  });

  const feed = madeFrom(async (history: Prepared<HistoryRecord>) => {
    const { body, updated } = atomFeed(history.value, cfg);
    return { ...(await withEtag(body)), updated };
  });
  getRoute(app, SITE_PATHS.FEED, async (c) => {
    const whole = await readHistory();
    if (!whole) return unavailable();
    const { body, etag, updated } = await feed(whole);
    return validated(c, body, { 'content-type': ATOM_TYPE, etag, 'last-modified': new Date(updated).toUTCString() });
  });

  // The badge says "no data" rather than fail while the figures cannot be read.
  const badge = madeFrom((stats: Prepared<PublishedStats>) => withEtag(badgeSvg(stats.value)));
  getRoute(app, SITE_PATHS.BADGE, async (c) => {
    const stats = await readStats();
    const { body, etag } = stats ? await badge(stats) : await withEtag(badgeSvg(undefined));
    const updatedAt = stats?.value.updated_at;
    return validated(c, body, { 'content-type': SVG_TYPE, etag, ...(updatedAt ? { 'last-modified': new Date(updatedAt).toUTCString() } : {}) });
  });

  // The share card, rendered once per change of the figures and kept until the next.
  let shareCard: { key: string; png: Uint8Array<ArrayBuffer> } | undefined;
  getRoute(app, SITE_PATHS.OG_IMAGE, async (c) => {
    if (!renderPng) return notFound(c);
    const [stats, history] = await Promise.all([readStats(), readHistory()]);
    const key = [stats?.etag, history?.etag].map((etag) => etag?.replace(/"/g, '') ?? 'none').join('-');
    if (shareCard?.key !== key) shareCard = { key, png: new Uint8Array(renderPng(shareImageSvg(stats?.value, history?.value))) };
    return validated(c, shareCard.png, { 'content-type': 'image/png', etag: `"${key}"` });
  });

  return app;
}
