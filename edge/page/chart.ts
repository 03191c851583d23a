// The nightly payouts as an inline SVG bar chart: no script, no external assets, one <rect> per
// night with a <title> for pointer users; the page puts a table of the same nights beside it for
// screen readers and text browsers.
import { money } from '../texts.ts';
import { esc } from './escape.ts';

const WIDTH = 640;
const HEIGHT = 220;
const PAD = { top: 16, right: 8, bottom: 28, left: 56 };

export function nightsChart(daily: { date: string; usd: number }[]): string {
  if (daily.length === 0) return '<p>No payouts have settled yet, so there is nothing to chart.</p>';
  const max = Math.max(...daily.map((d) => d.usd), 0) || 1;
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const slot = plotW / daily.length;
  const barW = Math.max(2, slot * 0.72);
  const y = (usd: number) => PAD.top + plotH - (usd / max) * plotH;
  const bars = daily.map((d, i) => {
    const x = PAD.left + i * slot + (slot - barW) / 2;
    const top = y(d.usd);
    return `<rect class="bar" data-date="${esc(d.date)}" data-usd="${d.usd}" x="${x.toFixed(1)}" y="${top.toFixed(1)}" width="${barW.toFixed(1)}" height="${(PAD.top + plotH - top).toFixed(1)}"><title>${esc(d.date)}: ${esc(money(d.usd))}</title></rect>`;
  });
  const first = daily[0]!.date;
  const last = daily[daily.length - 1]!.date;
  const baseline = PAD.top + plotH;
  return `<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="chart-title chart-desc" xmlns="http://www.w3.org/2000/svg">
<title id="chart-title">Gross reward payout per night, ${esc(first)} to ${esc(last)}</title>
<desc id="chart-desc">${daily.length} bars, one per settled night, oldest on the left; the highest is ${esc(money(max))}. The table below lists the same figures.</desc>
<line class="axis" x1="${PAD.left}" y1="${baseline}" x2="${WIDTH - PAD.right}" y2="${baseline}"/>
<line class="grid" x1="${PAD.left}" y1="${PAD.top}" x2="${WIDTH - PAD.right}" y2="${PAD.top}"/>
<text x="${PAD.left - 6}" y="${PAD.top + 4}" text-anchor="end">${esc(money(max))}</text>
<text x="${PAD.left - 6}" y="${baseline + 4}" text-anchor="end">$0</text>
<text x="${PAD.left}" y="${HEIGHT - 8}">${esc(first)}</text>
<text x="${WIDTH - PAD.right}" y="${HEIGHT - 8}" text-anchor="end">${esc(last)}</text>
${bars.join('\n')}
</svg>`;
}
