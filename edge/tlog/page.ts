// The /log/ page a person reads: the same account of the log as the landing page gives, then its
// technical detail, or, before the first checkpoint, why there is none yet.
import { logPrefix, SITE_PATHS } from '../../contract/paths.ts';
import type { HistoryRecord } from '../../contract/records.ts';
import { auditsListed } from '../../contract/texts/audit.ts';
import { logInUse, SERVICE_NAME, verification } from '../../contract/texts/rules.ts';
import { allGaps, GAPS_ANCHOR, logSentences, logSummary } from '../../contract/texts/witnessing.ts';
import type { EdgeConfig } from '../config.ts';
import { esc } from '../page/escape.ts';
import { partHtml } from '../page/html.ts';
import type { PublishedLog } from './published.ts';

/** The /log/ page: the same account of the log as the landing page gives, then its technical detail. */
export function logPage(log: PublishedLog, history: HistoryRecord | undefined, cfg: Pick<EdgeConfig, 'siteUrl' | 'logOrigin'>): string {
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

/** The /log/ page before the log's first checkpoint: why there is none yet. */
export function emptyLogPage(cfg: Pick<EdgeConfig, 'siteUrl' | 'logOrigin'>): string {
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
