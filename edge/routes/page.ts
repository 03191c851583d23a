// The landing page at / (HTML, or Markdown for a client that prefers it) and at /index.md
// (Markdown), rendered from the figures by edge/page/; 503 while the stats cannot be read.
import { Hono } from 'hono';
import { SITE_PATHS, type Origins } from '../../contract/paths.ts';
import type { Figures } from '../figures.ts';
import { etagMatches, prefersMarkdown } from '../http.ts';
import { renderHtml, type PageInput } from '../page/html.ts';
import { linkHeader } from '../page/links.ts';
import { renderMarkdown } from '../page/markdown.ts';
import { getRoute, RETRY_AFTER_SECONDS } from '../routing.ts';

export function createPageApp(cfg: Origins, figures: Figures): Hono {
  const app = new Hono();
  const link = linkHeader(cfg);
  const page = async (markdown: boolean, ifNoneMatch: string | undefined): Promise<Response> => {
    const [stats, health, history, log] = await Promise.all([
      figures.stats().catch(() => undefined), figures.health(), figures.history().catch(() => undefined), figures.log().catch(() => undefined),
    ]);
    const input: PageInput = { stats: stats?.value, health: health.value, history: history?.value, log: log?.value };
    const headers: Record<string, string> = {
      link,
      vary: 'Accept',
      'cache-control': stats ? 'public, max-age=60' : 'no-store',
    };
    if (!stats) headers['retry-after'] = RETRY_AFTER_SECONDS;
    const status = stats ? 200 : 503;
    // Validators: the page changes when a figure does (updated_at), the health status does, an
    // audit is published (the latest's time), or the log does (its record's validator, without
    // quotes; none while it cannot be read).
    const updatedAt = stats?.value.updated_at;
    if (stats && updatedAt) {
      headers.etag = `W/"${updatedAt}|${health.value.status}|${stats.value.audit?.published_at ?? 'no-audit'}|${log?.etag.replaceAll('"', '') ?? 'no-log'}|${markdown ? 'md' : 'html'}"`;
      headers['last-modified'] = new Date(updatedAt).toUTCString();
      if (etagMatches(ifNoneMatch, headers.etag)) return new Response(null, { status: 304, headers });
    }
    let body: string;
    if (markdown) {
      body = renderMarkdown(input, cfg);
      headers['content-type'] = 'text/markdown; charset=utf-8';
      // The convention agents use to budget context: about four characters per token.
      headers['x-markdown-tokens'] = String(Math.ceil(body.length / 4));
    } else {
      body = renderHtml(input, cfg);
      headers['content-type'] = 'text/html; charset=utf-8';
    }
    // Stated, so a HEAD answer carries it too.
    headers['content-length'] = String(new TextEncoder().encode(body).length);
    return new Response(body, { status, headers });
  };
  getRoute(app, SITE_PATHS.HOME, (c) => page(prefersMarkdown(c.req.header('accept')), c.req.header('if-none-match')));
  getRoute(app, SITE_PATHS.INDEX_MD, (c) => page(true, c.req.header('if-none-match')));
  return app;
}
