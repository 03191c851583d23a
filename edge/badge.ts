// A small shields-style badge ("last night | $40.64"): flat, two parts, text measured with a fixed
// per-character width (the look of https://shields.io badges, without their font tables). It says
// "demo" while the data is demo, and it is an accessible image: role="img", a title and aria-label.
import { esc } from './page/escape.ts';
import type { PublishedStats } from '../contract/records.ts';
import { money } from '../contract/texts/format.ts';

export const SVG_TYPE = 'image/svg+xml; charset=utf-8';
const CHAR_WIDTH = 7;
const PADDING = 10;
// White text on these keeps WCAG AA contrast (4.5:1 and above).
const LABEL_COLOUR = '#4a4a4a';
const VALUE_COLOUR = '#1a6b22';
const DEMO_COLOUR = '#8a4b00';
const NONE_COLOUR = '#4a4a4a';

export function badgeSvg(stats: PublishedStats | undefined): string {
  const demo = stats?.data_source === 'demo';
  const label = demo ? 'last night (demo)' : 'last night';
  const value = stats?.last_night_usd === null || stats?.last_night_usd === undefined ? 'no data' : money(stats.last_night_usd);
  const colour = stats?.last_night_usd === null || stats?.last_night_usd === undefined ? NONE_COLOUR : demo ? DEMO_COLOUR : VALUE_COLOUR;
  const labelWidth = label.length * CHAR_WIDTH + PADDING * 2;
  const valueWidth = value.length * CHAR_WIDTH + PADDING * 2;
  const width = labelWidth + valueWidth;
  const title = `${label}: ${value}${stats?.last_night_date ? ` gross reward payout, night of ${stats.last_night_date}` : ''}`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="20" viewBox="0 0 ${width} 20" role="img" aria-label="${esc(title)}">
<title>${esc(title)}</title>
<rect width="${labelWidth}" height="20" fill="${LABEL_COLOUR}"/>
<rect x="${labelWidth}" width="${valueWidth}" height="20" fill="${colour}"/>
<g fill="#fff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11" text-anchor="middle">
<text x="${labelWidth / 2}" y="14">${esc(label)}</text>
<text x="${labelWidth + valueWidth / 2}" y="14">${esc(value)}</text>
</g>
</svg>
`;
}
