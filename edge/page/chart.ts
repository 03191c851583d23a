// The nightly payouts as an inline SVG bar chart: no script, no external assets, one <rect> per
// night with a <title> for pointer users; the page puts a table of the same nights beside it for
// screen readers and text browsers. The axis labels are HTML beside the SVG, not text inside it: the
// SVG stretches to the width of the page, and text inside it would shrink with it (to a few pixels
// on a phone), where HTML text keeps the page's size at every width.
import { money } from '../../contract/texts/format.ts';
import { esc } from './escape.ts';

/** The drawing's own units; the page stretches it to its box (preserveAspectRatio="none"). */
const WIDTH = 640;
const HEIGHT = 200;
const PAD = { top: 6, right: 4, bottom: 1, left: 4 };

/** The axis and the top grid line both charts share, inside the SVG. */
function frame(): string {
  const baseline = HEIGHT - PAD.bottom;
  return `<line class="axis" x1="${PAD.left}" y1="${baseline}" x2="${WIDTH - PAD.right}" y2="${baseline}"/>
<line class="grid" x1="${PAD.left}" y1="${PAD.top}" x2="${WIDTH - PAD.right}" y2="${PAD.top}"/>`;
}

/** The SVG with its labels as HTML: the top value and $0 beside it, the first and last dates under it
 * (hidden from assistive technology, which reads the SVG's title and description and the table). */
function plot(svg: string, max: number, first: string, last: string): string {
  return `<div class="plot">
<div class="y" aria-hidden="true"><span>${esc(money(max))}</span><span>$0</span></div>
${svg}
<div class="x" aria-hidden="true"><span>${esc(first)}</span><span>${esc(last)}</span></div>
</div>`;
}

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
  return plot(`<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" preserveAspectRatio="none" role="img" aria-labelledby="chart-title chart-desc" xmlns="http://www.w3.org/2000/svg">
<title id="chart-title">Gross reward payout per night, ${esc(first)} to ${esc(last)}</title>
<desc id="chart-desc">${daily.length} bars, one per settled night, oldest on the left; the highest is ${esc(money(max))}. The table below lists the same figures.</desc>
${frame()}
${bars.join('\n')}
</svg>`, max, first, last);
}

/** At most this many points on the line: ten years of nights still draw in a few kilobytes. */
const MAX_POINTS = 400;

/** Every k-th night and the last, so the line keeps its shape and ends on the latest total. */
export function thinned<T>(items: T[], max = MAX_POINTS): T[] {
  if (items.length <= max) return items;
  const step = Math.ceil(items.length / max);
  const kept = items.filter((_, i) => i % step === 0);
  if (kept.at(-1) !== items.at(-1)) kept.push(items.at(-1)!);
  return kept;
}

export interface Box { left: number; top: number; width: number; height: number }

/** The SVG path of the running total in `box` (the total grows, so the last point is the top). */
export function runningTotalPath(nights: { total_usd: number }[], box: Box): string {
  const points = thinned(nights);
  const max = points.at(-1)!.total_usd || 1;
  const x = (i: number) => box.left + (points.length === 1 ? box.width : (i / (points.length - 1)) * box.width);
  const y = (usd: number) => box.top + box.height - (usd / max) * box.height;
  return points.map((p, i) => `${i === 0 ? 'M' : 'L'}${x(i).toFixed(1)},${y(p.total_usd).toFixed(1)}`).join('');
}

/** The running gross total over the whole history as a line. */
export function cumulativeChart(nights: { date: string; total_usd: number }[]): string {
  if (nights.length === 0) return '<p>No payouts have settled yet, so there is no running total to chart.</p>';
  const max = nights.at(-1)!.total_usd;
  const line = runningTotalPath(nights, { left: PAD.left, top: PAD.top, width: WIDTH - PAD.left - PAD.right, height: HEIGHT - PAD.top - PAD.bottom });
  const first = nights[0]!.date;
  const last = nights.at(-1)!.date;
  return plot(`<svg class="chart cumulative" viewBox="0 0 ${WIDTH} ${HEIGHT}" preserveAspectRatio="none" role="img" aria-labelledby="cumulative-title cumulative-desc" xmlns="http://www.w3.org/2000/svg">
<title id="cumulative-title">Running gross payout total, ${esc(first)} to ${esc(last)}</title>
<desc id="cumulative-desc">A line rising from $0 to ${esc(money(max))} over ${nights.length} settled nights. The table below gives the total at the end of each month.</desc>
${frame()}
<path class="line" d="${line}" fill="none"/>
</svg>`, max, first, last);
}

/** The running total at the last night of each month, oldest first: the chart's table fallback. */
export function monthEnds<T extends { date: string }>(nights: T[]): T[] {
  return nights.filter((night, i) => i === nights.length - 1 || nights[i + 1]!.date.slice(0, 7) !== night.date.slice(0, 7));
}
