// The landing page: server-rendered HTML that reads completely without JavaScript (the only
// script is the optional WebMCP registration). Inline CSS and SVG, no external assets.
import type { HistoryRecord, LogRecord, PublishedHealth, PublishedStats } from '../../contract/records.ts';
import { count, humanTime, money, orNone, percent } from '../../contract/texts/format.ts';
import { citeSentence, DEMO_NOTICE, disclaimer, FIGURES_LICENSE, lede, PRIVACY, RULES, RULES_FOR_PEOPLE, SERVICE_NAME } from '../../contract/texts/rules.ts';
import { keyFigures, replicaLag, type KeyFigure } from '../../contract/texts/summaries.ts';
import { logSentences, logSummary, type Part } from '../../contract/texts/witnessing.ts';
import { auditSentences } from '../../contract/texts/audit.ts';
import { cumulativeChart, monthEnds, nightsChart } from './chart.ts';
import { SHARE_IMAGE_SIZE } from './share-image.ts';
import { API_PATHS, SITE_PATHS, type Origins } from '../../contract/paths.ts';
import { esc } from './escape.ts';
import { DISCOVERY_DOCUMENTS, ENDPOINTS } from './links.ts';
import { WEBMCP_SCRIPT } from './webmcp.ts';

const CSS = `
:root{color-scheme:light dark;--fg:#16202a;--muted:#44515e;--line:#c9d1d9;--accent:#1d5a86;--bg:#fff;--panel:#f4f6f8;--banner-fg:#3d2800;--banner-bg:#fff1c7;--banner-line:#8a5a00}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#aab6c2;--line:#3d4852;--accent:#79b8ff;--bg:#0f141a;--panel:#1b232c;--banner-fg:#ffe7a3;--banner-bg:#3a2c05;--banner-line:#d9a520}}
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:56rem;margin:0 auto;padding:1rem}h1{font-size:1.6rem;margin:.5rem 0}h2{font-size:1.2rem;margin:1.6rem 0 .5rem;border-bottom:1px solid var(--line)}
a{color:var(--accent)}.lede{color:var(--muted)}
.demo-banner{border:2px solid var(--banner-line);background:var(--banner-bg);color:var(--banner-fg);padding:.75rem 1rem;border-radius:.4rem;font-weight:600}
.figures{display:grid;grid-template-columns:repeat(auto-fit,minmax(12rem,1fr));gap:.75rem;margin:0}
.figures div{background:var(--panel);border-radius:.4rem;padding:.6rem .8rem}.figures dt{color:var(--muted);font-size:.9rem}.figures dd{margin:0;font-size:1.35rem;font-weight:650}
.figures .note{display:block;font-size:.8rem;font-weight:400;color:var(--muted)}
.plot{display:grid;grid-template-columns:auto minmax(0,1fr);column-gap:.4rem;margin:.5rem 0}
.plot .y{display:flex;flex-direction:column;justify-content:space-between;text-align:right}
.plot .x{grid-column:2;display:flex;justify-content:space-between;gap:1rem;padding-top:.2rem}
.plot .y,.plot .x{font-size:.8rem;line-height:1.1;color:var(--muted);font-variant-numeric:tabular-nums;white-space:nowrap}
.chart{display:block;width:100%;height:11rem}@media (min-width:40rem){.chart{height:14rem}}
.chart .bar{fill:var(--accent)}.chart .axis{stroke:var(--fg)}.chart .grid{stroke:var(--line);stroke-dasharray:4 4}.chart .line{stroke:var(--accent);stroke-width:2.5}
.chart line,.chart path{vector-effect:non-scaling-stroke}
details{margin:.5rem 0}summary{cursor:pointer;color:var(--accent)}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.25rem .5rem;border-bottom:1px solid var(--line)}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
time{white-space:nowrap}code{background:var(--panel);padding:0 .2rem;border-radius:.2rem;overflow-wrap:anywhere}footer{margin:2rem 0 1rem;color:var(--muted);font-size:.9rem}
`;

/** A calendar date, kept whole on one line. */
function day(date: string): string {
  return `<time datetime="${esc(date)}">${esc(date)}</time>`;
}

/** An instant as a person reads it ("26 Nov 2026, 07:27 UTC"), the exact ISO value in `datetime`. */
function time(iso: string | null | undefined, field?: string): string {
  const marked = field ? ` data-field="${field}"` : '';
  return iso ? `<time${marked} datetime="${esc(iso)}">${esc(humanTime(iso))}</time>` : `<span${marked}>${esc(orNone(iso))}</span>`;
}

function figure({ label, field, value, shown, note, at }: KeyFigure): string {
  const data = value === null ? `<span data-field="${field}">${esc(shown)}</span>` : `<data data-field="${field}" value="${value}">${esc(shown)}</data>`;
  return `<div><dt>${esc(label)}</dt><dd>${data}${note ? `<span class="note">${esc(note)}${at ? ` ${time(at)}` : ''}</span>` : ''}</dd></div>`;
}

function jsonLd(stats: PublishedStats | undefined, cfg: Origins): string {
  const demo = stats?.data_source === 'demo';
  const dataset = {
    '@context': 'https://schema.org',
    '@type': 'Dataset',
    name: `${SERVICE_NAME}: liquidity-reward payouts of one market-making account${demo ? ' (demo data)' : ''}`,
    description: demo
      ? `${DEMO_NOTICE} Read-only statistics in the shape of one market-making account's: nightly gross reward payouts, today's accrual estimate, totals, a capital snapshot and trailing-window returns with trading costs. ${disclaimer(true)}`
      : `Aggregate, read-only statistics of one real production account that earns liquidity rewards by quoting on a prediction market: nightly gross reward payouts, today's accrual estimate, totals, a capital snapshot and trailing-window returns with trading costs. ${disclaimer(false)}`,
    url: cfg.siteUrl,
    isAccessibleForFree: true,
    license: FIGURES_LICENSE.url,
    creator: { '@type': 'Organization', name: SERVICE_NAME, url: cfg.siteUrl },
    keywords: ['liquidity rewards', 'market making', 'prediction market', 'payouts', 'USD'],
    variableMeasured: ['nightly gross reward payout (USD)', 'accrued reward today (USD, estimate)', 'capital at stake (USD)', 'trading costs (USD)', 'gross and net yield over the window (%)'],
    ...(stats?.updated_at ? { dateModified: stats.updated_at } : {}),
    ...(stats?.since_date && stats.last_night_date ? { temporalCoverage: `${stats.since_date}/${stats.last_night_date}` } : {}),
    distribution: [
      { '@type': 'DataDownload', encodingFormat: 'application/json', contentUrl: `${cfg.siteUrl}${SITE_PATHS.SITE_STATS}` },
      { '@type': 'DataDownload', encodingFormat: 'application/json', contentUrl: `${cfg.siteUrl}${SITE_PATHS.SITE_HEALTH}` },
    ],
  };
  // "<" escaped so no value can close the script element.
  return JSON.stringify(dataset).replace(/</g, '\\u003c');
}

function statsSections(s: PublishedStats): string {
  const r = s.returns;
  const c = s.capital;
  const rows = s.daily.map((d) => `<tr><td>${esc(d.date)}</td><td class="num">${esc(money(d.usd))}</td></tr>`).join('');
  return `
<section aria-labelledby="h-figures"><h2 id="h-figures">Key figures</h2>
<dl class="figures">
${keyFigures(s).map(figure).join('\n')}
</dl>
<p>Last night's payout <strong>${esc(money(s.last_night_usd))}</strong>${s.last_night_date ? ` settled on ${day(s.last_night_date)}` : ''}. ${esc(RULES_FOR_PEOPLE.accrual_is_estimate)}</p>
</section>

<section aria-labelledby="h-nights"><h2 id="h-nights">The last ${s.daily.length} nights</h2>
${nightsChart(s.daily)}
<table id="nights-table"><caption>Gross reward payout per night (UTC payout date)</caption>
<thead><tr><th scope="col">Date</th><th scope="col" class="num">Payout</th></tr></thead><tbody>${rows}</tbody></table>
</section>

<section aria-labelledby="h-returns"><h2 id="h-returns">Returns over ${r.window_days} days${r.from_date && r.to_date ? ` (${day(r.from_date)} to ${day(r.to_date)})` : ''}</h2>
<table><tbody>
<tr><th scope="row">Rewards</th><td class="num"><data data-field="returns.rewards_usd" value="${r.rewards_usd ?? ''}">${esc(money(r.rewards_usd))}</data></td></tr>
<tr><th scope="row">Trading costs (unwinding inventory)</th><td class="num"><data data-field="returns.trading_costs_usd" value="${r.trading_costs_usd ?? ''}">${esc(money(r.trading_costs_usd))}</data></td></tr>
<tr><th scope="row">Net (rewards minus costs)</th><td class="num"><data data-field="returns.net_usd" value="${r.net_usd ?? ''}">${esc(money(r.net_usd))}</data></td></tr>
<tr><th scope="row">Rewards per dollar of cost</th><td class="num">${r.rewards_vs_costs ?? 'n/a'}</td></tr>
<tr><th scope="row">Gross yield over the window</th><td class="num">${esc(percent(r.gross_yield_pct))}</td></tr>
<tr><th scope="row">Net yield over the window</th><td class="num">${esc(percent(r.net_yield_pct))}</td></tr>
</tbody></table>
<p>${esc(RULES_FOR_PEOPLE.no_annualising(r.window_days))}</p>
</section>

<section aria-labelledby="h-capital"><h2 id="h-capital">Capital</h2>
${c ? `<table><tbody>
<tr><th scope="row">Cash</th><td class="num">${esc(money(c.cash_usd))}</td></tr>
<tr><th scope="row">Inventory (filled positions)</th><td class="num">${esc(money(c.inventory_usd))}</td></tr>
<tr><th scope="row">At stake (cash plus inventory)</th><td class="num">${esc(money(c.at_stake_usd))}</td></tr>
<tr><th scope="row">Positions</th><td class="num">${esc(count(c.positions))}</td></tr>
</tbody></table><p>Snapshot as of ${time(c.as_of)}.</p>` : '<p>No capital snapshot has been recorded yet.</p>'}
</section>`;
}

export interface PageInput {
  stats: PublishedStats | undefined;
  health: PublishedHealth;
  /** The whole track record, for the running-total chart; undefined when it could not be read. */
  history: HistoryRecord | undefined;
  /** The transparency log, for what the witnesses cosigned; undefined when it could not be read. */
  log: LogRecord | undefined;
}

/** What the page says of the log, for the HTML and the Markdown alike. */
export function logAccount({ stats, history, log }: PageInput, cfg: Origins): ReturnType<typeof logSentences> {
  return logSentences(history && logSummary(history, log), stats?.data_source === 'demo', cfg);
}

/** One part of a sentence (contract/texts/witnessing.ts) as HTML. */
export function partHtml(part: Part): string {
  if (typeof part === 'string') return esc(part);
  if ('time' in part) return time(part.time);
  return 'code' in part ? `<code>${esc(part.code)}</code>` : `<a href="${esc(part.path)}">${esc(part.text)}</a>`;
}

function verifySection(input: PageInput, cfg: Origins): string {
  const { facts, further } = logAccount(input, cfg);
  return `<section aria-labelledby="h-verify"><h2 id="h-verify">Verify these figures</h2>
<ul id="log-summary">
${facts.map((parts) => `<li>${parts.map(partHtml).join('')}</li>`).join('\n')}
</ul>
${further.map((parts) => `<p>${parts.map(partHtml).join('')}</p>`).join('\n')}
</section>`;
}

/** The latest independent audit, or that none is published yet; absent while the figures cannot be read. */
function auditSection(stats: PublishedStats): string {
  const sentences = auditSentences(stats.audit ?? null, stats.audits_unfinished ?? 0, stats.data_source === 'demo');
  return `<section aria-labelledby="h-audit" id="audit"><h2 id="h-audit">Independent audit</h2>
${sentences.map((parts) => `<p>${parts.map(partHtml).join('')}</p>`).join('\n')}
</section>`;
}

function historySection(history: HistoryRecord): string {
  const ends = monthEnds(history.nights);
  const rows = ends.map((n) => `<tr><td>${esc(n.date)}</td><td class="num">${esc(money(n.total_usd))}</td></tr>`).join('');
  return `
<section aria-labelledby="h-history"><h2 id="h-history">The whole record${history.since_date ? ` since ${day(history.since_date)}` : ''}</h2>
${cumulativeChart(history.nights)}
<details><summary>Running total at the end of each month (table)</summary>
<table id="history-table"><caption>Running gross payout total at the last settled night of each month</caption>
<thead><tr><th scope="col">Night</th><th scope="col" class="num">Running total</th></tr></thead><tbody>${rows}</tbody></table>
</details>
<p>Every night, with that day's trading cost and capital base: <a href="${SITE_PATHS.SITE_HISTORY_CSV}">CSV</a>, <a href="${SITE_PATHS.SITE_HISTORY}">JSON</a>, or the <a href="${SITE_PATHS.FEED}">Atom feed</a> of the latest nights. ${esc(RULES_FOR_PEOPLE.gross_not_profit)}</p>
</section>`;
}

/** Open Graph and Twitter card tags: the share image shows the key figures and the running total. */
function shareTags(stats: PublishedStats | undefined, cfg: Origins, description: string): string {
  const title = `${SERVICE_NAME}${stats?.data_source === 'demo' ? ' (demo data)' : ''}`;
  const image = `${cfg.siteUrl}${SITE_PATHS.OG_IMAGE}`;
  const alt = stats?.last_night_date
    ? `Last night ${money(stats.last_night_usd)} gross reward payout; ${money(stats.total_usd)} since ${stats.since_date}${stats.data_source === 'demo' ? '; demo data' : ''}`
    : `${SERVICE_NAME}: no payouts yet`;
  return [
    ['og:type', 'website'], ['og:site_name', SERVICE_NAME], ['og:title', title], ['og:description', description], ['og:url', `${cfg.siteUrl}${SITE_PATHS.HOME}`],
    ['og:image', image], ['og:image:type', 'image/png'], ['og:image:width', String(SHARE_IMAGE_SIZE.width)], ['og:image:height', String(SHARE_IMAGE_SIZE.height)], ['og:image:alt', alt],
  ].map(([property, content]) => `<meta property="${property}" content="${esc(content)}">`).concat(
    [['twitter:card', 'summary_large_image'], ['twitter:title', title], ['twitter:description', description], ['twitter:image', image], ['twitter:image:alt', alt]]
      .map(([name, content]) => `<meta name="${name}" content="${esc(content)}">`),
  ).join('\n');
}

const PAGE_DESCRIPTION = "Nightly gross reward payouts, today's accrual estimate, totals, capital and returns of one real liquidity-reward market-making account. Read-only, unaudited, not financial advice.";

export function renderHtml(input: PageInput, cfg: Origins): string {
  const { stats, health, history } = input;
  const demo = stats?.data_source === 'demo';
  const docs = DISCOVERY_DOCUMENTS.map((d) => `<li><a href="${esc(d.path)}">${esc(d.path)}</a>: ${esc(d.title)}</li>`).join('\n');
  const endpoints = ENDPOINTS.map((d) => `<li>${d.postOnly ? `<code>${esc(d.path)}</code>` : `<a href="${esc(d.path)}">${esc(d.path)}</a>`}: ${esc(d.title)}</li>`).join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(SERVICE_NAME)}: public liquidity-reward statistics</title>
<meta name="description" content="${esc(PAGE_DESCRIPTION)}">
${shareTags(stats, cfg, PAGE_DESCRIPTION)}
<link rel="alternate" type="text/markdown" href="${esc(cfg.siteUrl)}${SITE_PATHS.INDEX_MD}">
<link rel="service-desc" type="application/json" href="${esc(cfg.siteUrl)}${SITE_PATHS.OPENAPI}">
<link rel="service-desc" type="application/json" href="${esc(cfg.siteUrl)}${SITE_PATHS.OPENAPI_KEYLESS}">
<link rel="describedby" type="text/plain" href="${esc(cfg.siteUrl)}${SITE_PATHS.LLMS_TXT}">
<link rel="alternate" type="application/atom+xml" title="${esc(SERVICE_NAME)}: nightly payouts" href="${esc(cfg.siteUrl)}${SITE_PATHS.FEED}">
<style>${CSS}</style>
<script type="application/ld+json">${jsonLd(stats, cfg)}</script>
</head>
<body>
<main>
<header>
<h1>${esc(SERVICE_NAME)}</h1>
<p class="lede">${esc(lede(demo))}</p>
${demo ? `<p class="demo-banner" id="demo-banner" role="note">${esc(DEMO_NOTICE)}</p>` : ''}
</header>
${stats ? statsSections(stats) : '<section><h2>Figures unavailable</h2><p role="alert">The statistics could not be read right now (the database behind the API host did not answer). This page will show them again once it does; see the freshness report below.</p></section>'}
${history ? historySection(history) : ''}

<section aria-labelledby="h-freshness"><h2 id="h-freshness">Freshness</h2>
<ul>
<li>Figures updated at: ${time(stats?.updated_at, 'updated_at')}</li>
<li>Health: <strong data-field="health.status">${esc(health.status)}</strong> (checked ${time(health.checked_at)})${health.data ? `; latest payout ${esc(orNone(health.data.last_payout_date))} (${health.data.fresh ? 'fresh' : 'stale'}), latest accrual ${time(health.data.last_accrual_at)} (${health.data.accrual_fresh ? 'fresh' : 'stale'})` : ''}${health.writer ? `; writer ${health.writer.alive ? 'alive' : 'not alive'}` : ''}.</li>
${replicaLag(health) ? `<li data-field="health.data.replica_lag_seconds">${esc(replicaLag(health))}</li>\n` : ''}<li>${esc(RULES.polling)}</li>
</ul>
</section>

<section aria-labelledby="h-about"><h2 id="h-about">What these figures are</h2>
<ul>
<li>${esc(disclaimer(demo))}</li>
<li>${esc(RULES_FOR_PEOPLE.gross_not_profit)}</li>
<li>${esc(RULES.dates)}</li>
<li>Read-only: nothing here trades, moves funds or acts for a caller.</li>
<li>${esc(PRIVACY)}</li>
</ul>
<p id="attribution">${esc(stats?.attribution.cite ?? citeSentence(cfg))}</p>
</section>

${stats ? `${auditSection(stats)}\n\n` : ''}${verifySection(input, cfg)}

<section aria-labelledby="h-agents"><h2 id="h-agents">For programs and agents</h2>
<p>Use the JSON endpoints rather than this page's HTML. No key is needed on this site; the API host <code>${esc(cfg.apiUrl)}${API_PATHS.STATS}</code> takes the public key published in <a href="${SITE_PATHS.AUTH_MD}">auth.md</a>. Please send a descriptive User-Agent.</p>
<ul>
${endpoints}
</ul>
<h3>Discovery documents</h3>
<ul>
${docs}
</ul>
</section>
<footer>${esc(SERVICE_NAME)} · <a href="${SITE_PATHS.INDEX_MD}">Markdown version</a> · <a href="${SITE_PATHS.API_DOCS}">API reference</a></footer>
</main>
<script>${WEBMCP_SCRIPT}</script>
</body>
</html>
`;
}
