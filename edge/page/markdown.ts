// The landing page as Markdown, for agents that ask for text/markdown on `/` (and at /index.md):
// the same content as the HTML, minus the chart, plus the links an agent needs next.
import { count, humanTime, money, orNone, percent } from '../../contract/texts/format.ts';
import { citeSentence, DEMO_NOTICE, disclaimer, lede, PRIVACY, RULES, SERVICE_NAME } from '../../contract/texts/rules.ts';
import { keyFigures, noteText, replicaLag } from '../../contract/texts/summaries.ts';
import type { Part } from '../../contract/texts/witnessing.ts';
import { auditSentences } from '../../contract/texts/audit.ts';
import { logAccount, type PageInput } from './html.ts';
import { SITE_PATHS, type Origins } from '../../contract/paths.ts';
import { DISCOVERY_DOCUMENTS, ENDPOINTS } from './links.ts';

export function renderMarkdown(input: PageInput, cfg: Origins): string {
  const { stats: s, health, history } = input;
  const { facts, further } = logAccount(input, cfg);
  const part = (p: Part) => (typeof p === 'string' ? p : 'time' in p ? humanTime(p.time) : 'code' in p ? `\`${p.code}\`` : `[${p.text}](${cfg.siteUrl}${p.path})`);
  const out: string[] = [`# ${SERVICE_NAME}`, ''];
  out.push(lede(s?.data_source === 'demo'), '');
  if (s?.data_source === 'demo') out.push(`> **${DEMO_NOTICE}**`, '');
  if (s) {
    const r = s.returns;
    out.push(
      `Figures updated at: ${orNone(s.updated_at)}`, '',
      '## Key figures', '',
      '| Figure | Value |', '|---|---|',
      ...keyFigures(s).map((f) => `| ${f.label}${f.note ? ` (${noteText(f)})` : ''} | ${f.shown} |`),
      '',
      `## The last ${s.daily.length} nights`, '',
      '| Date | Gross payout |', '|---|---:|',
      ...s.daily.map((d) => `| ${d.date} | ${money(d.usd)} |`),
      '',
      `## Returns over ${r.window_days} days${r.from_date ? ` (${r.from_date} to ${r.to_date})` : ''}`, '',
      `- Rewards: ${money(r.rewards_usd)}`,
      `- Trading costs (unwinding inventory): ${money(r.trading_costs_usd)}`,
      `- Net: ${money(r.net_usd)}`,
      `- Rewards per dollar of cost: ${r.rewards_vs_costs ?? 'n/a'}`,
      `- Gross yield: ${percent(r.gross_yield_pct)}; net yield: ${percent(r.net_yield_pct)} (over the window only, not annualised)`,
      '',
      '## Capital', '',
      s.capital
        ? `Cash ${money(s.capital.cash_usd)}, inventory ${money(s.capital.inventory_usd)}, at stake ${money(s.capital.at_stake_usd)}, ${count(s.capital.positions)} positions, as of ${s.capital.as_of}.`
        : 'No capital snapshot has been recorded yet.',
      '',
    );
  } else {
    out.push('## Figures unavailable', '', 'The statistics could not be read right now; see the freshness report below.', '');
  }
  const lastNight = history?.nights.at(-1);
  if (history && lastNight) {
    out.push(
      `## The whole record since ${history.since_date}`, '',
      `${history.nights.length} settled nights; running gross total ${money(lastNight.total_usd)} through ${lastNight.date}. Every night with its trading cost and capital base: [CSV](${cfg.siteUrl}${SITE_PATHS.SITE_HISTORY_CSV}), [JSON](${cfg.siteUrl}${SITE_PATHS.SITE_HISTORY}); the latest nights as an [Atom feed](${cfg.siteUrl}${SITE_PATHS.FEED}).`,
      '',
    );
  }
  out.push(
    '## Freshness', '',
    `- Health: ${health.status} (checked ${health.checked_at})${health.writer ? `; writer ${health.writer.alive ? 'alive' : 'not alive'}` : ''}`,
    ...(replicaLag(health) ? [`- ${replicaLag(health)}`] : []),
    `- ${RULES.polling}`,
    '',
    '## What these figures are', '',
    `- ${disclaimer(s?.data_source === 'demo')}`,
    `- ${RULES.gross_not_profit}`,
    `- ${RULES.accrual_is_estimate}`,
    `- ${RULES.no_annualising}`,
    `- ${RULES.dates}`,
    `- ${RULES.sums_foot}`,
    `- ${PRIVACY}`,
    '',
    s?.attribution.cite ?? citeSentence(cfg),
    '',
    ...(s ? ['## Independent audit', '', ...auditSentences(s.audit ?? null, s.audits_unfinished ?? 0, s.data_source === 'demo').flatMap((parts) => [parts.map(part).join(''), ''])] : []),
    '## Verify these figures', '',
    ...facts.map((parts) => `- ${parts.map(part).join('')}`), '',
    ...further.flatMap((parts) => [parts.map(part).join(''), '']),
    '## For programs and agents', '',
    ...ENDPOINTS.map((d) => (d.postOnly ? `- \`${cfg.siteUrl}${d.path}\`: ${d.title}` : `- [${d.path}](${cfg.siteUrl}${d.path}): ${d.title}`)),
    '',
    '### Discovery documents', '',
    ...DISCOVERY_DOCUMENTS.map((d) => `- [${d.path}](${cfg.siteUrl}${d.path}): ${d.title}`),
    '',
  );
  return out.join('\n');
}
