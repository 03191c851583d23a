// The Atom feed (RFC 4287, https://www.rfc-editor.org/rfc/rfc4287): one entry per settled night,
// newest first, the last FEED_NIGHTS of the track record. Each entry's id is a tag URI (RFC 4151)
// made of the site's host name and the night's date, so it never changes; its `updated` is when the
// night's payout was first recorded or last corrected.
import type { EdgeConfig } from './config.ts';
import { esc } from './page/escape.ts';
import { SITE_PATHS } from '../contract/paths.ts';
import type { HistoryRecord } from '../contract/records.ts';
import { money } from '../contract/texts/format.ts';
import { citeSentence, DEMO_NOTICE, RULES, SERVICE_NAME } from '../contract/texts/rules.ts';

export const FEED_NIGHTS = 60;
export const ATOM_TYPE = 'application/atom+xml; charset=utf-8';
/** The feed's `updated` before any data: a fixed instant, so the empty feed stays byte-identical. */
const NO_DATA_UPDATED = '2020-01-01T00:00:00Z';

/** tag:<host>,<date>:night — RFC 4151: the host as its authority, the night's date as the date. */
export function nightTagUri(siteUrl: string, date: string): string {
  return `tag:${new URL(siteUrl).hostname},${date}:night`;
}

/** The feed document and its `updated` instant (the latest change among its nights). */
export function atomFeed(history: HistoryRecord, cfg: Pick<EdgeConfig, 'siteUrl'>): { body: string; updated: string } {
  const demo = history.data_source === 'demo';
  const nights = history.nights.slice(-FEED_NIGHTS).reverse();
  const updated = nights.reduce((latest, n) => (n.updated_at > latest ? n.updated_at : latest), history.updated_at ?? NO_DATA_UPDATED);
  const rules = `${RULES.gross_not_profit} ${citeSentence(cfg)}`;
  const entries = nights.map((night) => {
    const title = `${night.date}: ${money(night.usd)} gross reward payout${demo ? ' (demo data)' : ''}`;
    const text = [
      ...(demo ? [DEMO_NOTICE] : []),
      `The night that settled at 00:00 UTC on ${night.date} paid ${money(night.usd)} in gross reward income (before trading costs, not profit).`,
      `Running gross total since ${history.since_date}: ${money(night.total_usd)}.`,
      rules,
    ].join(' ');
    return `  <entry>
    <id>${esc(nightTagUri(cfg.siteUrl, night.date))}</id>
    <title>${esc(title)}</title>
    <updated>${esc(night.updated_at)}</updated>
    <link rel="alternate" type="text/html" href="${esc(cfg.siteUrl + SITE_PATHS.HOME)}"/>
    <content type="text">${esc(text)}</content>
  </entry>`;
  });
  const body = `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <id>${esc(cfg.siteUrl + SITE_PATHS.FEED)}</id>
  <title>${esc(SERVICE_NAME)}: nightly gross reward payouts${demo ? ' (demo data)' : ''}</title>
  <subtitle>${esc(`${RULES.disclaimer} ${RULES.gross_not_profit}`)}</subtitle>
  <updated>${esc(updated)}</updated>
  <author><name>${esc(SERVICE_NAME)}</name><uri>${esc(cfg.siteUrl + SITE_PATHS.HOME)}</uri></author>
  <link rel="self" type="application/atom+xml" href="${esc(cfg.siteUrl + SITE_PATHS.FEED)}"/>
  <link rel="alternate" type="text/html" href="${esc(cfg.siteUrl + SITE_PATHS.HOME)}"/>
${entries.join('\n')}
</feed>
`;
  return { body, updated };
}
