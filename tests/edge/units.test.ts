// The edge's small pure pieces: content negotiation, ETag comparison, the chart, what an A2A message
// asks for, and tlog-tiles paths and tiles. No stack needed beyond what the run starts anyway.
import { describe, expect, it } from 'vitest';
import { acceptQuality, etagMatches, prefersHtml, prefersMarkdown, strongEtag } from '../../edge/http.ts';
import { nightsChart } from '../../edge/page/chart.ts';
import { askedSkill } from '../../edge/a2a.ts';
import { buildTree } from '../../contract/tlog/merkle.ts';
import { parseTilePath, tileBytes, tileIndexPath } from '../../edge/tlog/tiles.ts';
import type { Part } from '@a2a-js/sdk';

describe('content negotiation', () => {
  it('picks Markdown only when the client names it and likes it at least as much as HTML', () => {
    expect(prefersMarkdown('text/markdown')).toBe(true);
    expect(prefersMarkdown('text/markdown, text/html')).toBe(true);
    expect(prefersMarkdown('text/html;q=0.9, text/markdown')).toBe(true);
    expect(prefersMarkdown('text/html, text/markdown;q=0.5')).toBe(false);
    expect(prefersMarkdown('text/markdown;q=0')).toBe(false);
    expect(prefersMarkdown('*/*')).toBe(false);
    expect(prefersMarkdown(undefined)).toBe(false);
    expect(prefersMarkdown('text/*')).toBe(false);
  });

  it('treats a client that names text/html as a browser, curl and API clients not', () => {
    expect(prefersHtml('text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8')).toBe(true);
    expect(prefersHtml('*/*')).toBe(false);
    expect(prefersHtml('application/json')).toBe(false);
    expect(prefersHtml('application/json, text/html;q=0.5')).toBe(false);
  });

  it('uses the most specific matching range for the q-value', () => {
    expect(acceptQuality('text/*;q=0.3, text/html;q=0.7, */*;q=0.1', 'text/html')).toEqual({ q: 0.7, explicit: true });
    expect(acceptQuality('text/*;q=0.3, */*;q=0.1', 'text/markdown')).toEqual({ q: 0.3, explicit: false });
    expect(acceptQuality('image/png', 'text/html')).toEqual({ q: 0, explicit: false });
  });
});

describe('ETags', () => {
  it('are strong, quoted, derived from the bytes, and compared weakly for If-None-Match', async () => {
    const a = await strongEtag('{"a":1}\n');
    expect(a).toMatch(/^"[A-Za-z0-9_-]{24}"$/);
    expect(await strongEtag('{"a":1}\n')).toBe(a);
    expect(await strongEtag('{"a":2}\n')).not.toBe(a);
    expect(etagMatches(a, a)).toBe(true);
    expect(etagMatches(`"x", W/${a}`, a)).toBe(true);
    expect(etagMatches('*', a)).toBe(true);
    expect(etagMatches('"x"', a)).toBe(false);
    expect(etagMatches(null, a)).toBe(false);
  });
});

describe('the nights chart', () => {
  it('draws one bar per night, scaled to the highest, and says so when there are none', () => {
    const svg = nightsChart([{ date: '2026-01-01', usd: 10 }, { date: '2026-01-02', usd: 20 }, { date: '2026-01-03', usd: 0 }]);
    const bars = [...svg.matchAll(/<rect class="bar" data-date="([^"]+)" data-usd="([^"]+)"[^>]* height="([\d.]+)"/g)];
    expect(bars.map((b) => b[1])).toEqual(['2026-01-01', '2026-01-02', '2026-01-03']);
    const heights = bars.map((b) => Number(b[3]));
    expect(heights[1]).toBeCloseTo(heights[0]! * 2, 0);
    expect(heights[2]).toBe(0);
    expect(svg).toContain('role="img"');
    expect(nightsChart([])).toMatch(/No payouts/);
  });

  it('escapes what it prints', () => {
    expect(nightsChart([{ date: '<script>', usd: 1 }])).not.toContain('<script>');
  });
});

describe('A2A: what the message asks for', () => {
  const text = (value: string): Part => ({ content: { $case: 'text', value }, mediaType: 'text/plain', filename: '', metadata: undefined });
  const data = (value: unknown): Part => ({ content: { $case: 'data', value }, mediaType: 'application/json', filename: '', metadata: undefined });
  it('chooses health for questions about health or freshness, stats otherwise', () => {
    expect(askedSkill([text('health')])).toBe('health');
    expect(askedSkill([text('Is the data fresh?')])).toBe('health');
    expect(askedSkill([text('is the writer alive')])).toBe('health');
    expect(askedSkill([data({ skill: 'health' })])).toBe('health');
    expect(askedSkill([text('latest stats')])).toBe('stats');
    expect(askedSkill([text("what was last night's payout?")])).toBe('stats');
    expect(askedSkill([data({ skill: 'stats' })])).toBe('stats');
    expect(askedSkill([text('the full history, please')])).toBe('history');
    expect(askedSkill([text('Show the whole track record')])).toBe('history');
    expect(askedSkill([data({ skill: 'history' })])).toBe('history');
    expect(askedSkill([])).toBe('stats');
  });
});

describe('tlog-tiles paths and tiles, against the examples of https://c2sp.org/tlog-tiles', () => {
  it('encodes an index in x-prefixed three-digit groups and reads back only the canonical path', () => {
    expect(tileIndexPath(1234067)).toBe('x001/x234/067');
    expect(parseTilePath('tile/0/x001/x234/067')).toEqual({ level: 0, index: 1234067, width: undefined });
    expect(parseTilePath('tile/entries/005.p/17')).toEqual({ level: 'entries', index: 5, width: 17 });
    for (const bad of ['tile/0/x000/005', 'tile/0/5', 'tile/00/005', 'tile/64/000', 'tile/0/000.p/0', 'tile/0/000.p/256', 'tile/0/000.p/017', 'tile/0/001/002']) {
      expect(parseTilePath(bad), bad).toBeUndefined();
    }
  });

  it('a tree of 70,000 entries is 273 full level-0 tiles and a partial one of width 112, one full level-1 tile and a partial one of width 17, and a partial level-2 tile of width 1', async () => {
    const entries = Array.from({ length: 70_000 }, (_, i) => new TextEncoder().encode(String(i)));
    const tree = await buildTree(entries);
    const has = (level: number, index: number, width?: number) => tileBytes(tree, entries, { level, index, width }) !== undefined;
    expect(has(0, 272)).toBe(true);
    expect(has(0, 273)).toBe(false);
    expect(has(0, 273, 112)).toBe(true);
    expect(has(0, 273, 113)).toBe(false);
    expect(has(1, 0)).toBe(true);
    expect(has(1, 1, 17)).toBe(true);
    expect(has(1, 1, 18)).toBe(false);
    expect(has(2, 0, 1)).toBe(true);
    expect(has(2, 0, 2)).toBe(false);
    // A level-1 hash is the tree hash of the full level-0 tile below it; entry bundles hold the entries.
    expect(tileBytes(tree, entries, { level: 1, index: 0 })!.subarray(0, 32)).toEqual(await tree.hash(0, 256));
    expect(tileBytes(tree, entries, { level: 'entries', index: 0, width: 2 })).toEqual(Uint8Array.of(0, 1, 48, 0, 1, 49));
  });
});
