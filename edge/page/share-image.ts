// The share card behind og:image (1200×630, the size Open Graph consumers crop to): the key figures
// and the running-total line, as an SVG with fixed colours and the DejaVu Sans font the PNG
// renderer is given. It says "demo" while the data is demo.
import { runningTotalPath } from './chart.ts';
import { esc } from './escape.ts';
import type { HistoryRecord, PublishedStats } from '../../contract/records.ts';
import { money } from '../../contract/texts/format.ts';
import { SERVICE_NAME } from '../../contract/texts/rules.ts';

export const SHARE_IMAGE_SIZE = { width: 1200, height: 630 } as const;
export const SHARE_IMAGE_FONT = 'DejaVu Sans';

export function shareImageSvg(stats: PublishedStats | undefined, history: HistoryRecord | undefined): string {
  const { width, height } = SHARE_IMAGE_SIZE;
  const demo = stats?.data_source === 'demo';
  const nights = history?.nights ?? [];
  const figures: [string, string][] = stats?.last_night_date
    ? [
      [`Last night (${stats.last_night_date})`, money(stats.last_night_usd)],
      [`Gross since ${stats.since_date}`, money(stats.total_usd)],
      ['Best night', money(stats.best_day_usd)],
    ]
    : [['Payouts', 'none yet']];
  const columns = figures.map(([label, value], i) => `<g transform="translate(${60 + i * 370},210)">
<text class="label" y="0">${esc(label)}</text><text class="value" y="62">${esc(value)}</text></g>`).join('\n');
  const chart = nights.length
    ? `<rect x="60" y="330" width="${width - 120}" height="220" rx="12" class="panel"/>
<path d="${runningTotalPath(nights, { left: 90, top: 350, width: width - 180, height: 180 })}" class="line"/>
<text class="note" x="90" y="580">Running gross payout total, ${esc(nights[0]!.date)} to ${esc(nights.at(-1)!.date)} (${nights.length} nights)</text>`
    : '';
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">
<style>
text{font-family:'${SHARE_IMAGE_FONT}';fill:#16202a}
.title{font-size:54px;font-weight:bold}.sub{font-size:26px;fill:#44515e}.label{font-size:24px;fill:#44515e}
.value{font-size:56px;font-weight:bold}.note{font-size:20px;fill:#44515e}.demo{font-size:30px;font-weight:bold;fill:#3d2800}
.panel{fill:#f4f6f8}.line{fill:none;stroke:#1d5a86;stroke-width:5;stroke-linejoin:round}
</style>
<rect width="${width}" height="${height}" fill="#ffffff"/>
<rect width="${width}" height="12" fill="#1d5a86"/>
<text class="title" x="60" y="95">${esc(SERVICE_NAME)}</text>
<text class="sub" x="60" y="140">Nightly liquidity-reward payouts of one account · gross, not profit</text>
${demo ? `<rect x="${width - 360}" y="50" width="300" height="56" rx="8" fill="#fff1c7" stroke="#8a5a00" stroke-width="3"/><text class="demo" x="${width - 210}" y="89" text-anchor="middle">DEMO DATA</text>` : ''}
${columns}
${chart}
<text class="note" x="60" y="615">${esc(stats?.updated_at ? `Updated ${stats.updated_at}` : 'No data yet')}</text>
</svg>
`;
}
