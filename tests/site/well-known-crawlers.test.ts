// What the site tells crawlers and language models: robots.txt (RFC 9309), sitemap.xml and llms.txt
// (the llms.txt proposal), on the running site host.
import { describe, expect, it } from 'vitest';
import { essence, get } from '../support/discovery.ts';
import { site } from '../support/hosts.ts';

describe('robots.txt and sitemap.xml', () => {
  it('robots.txt: a wildcard group and a named AI-crawler group, each with the same Content-Signal and Allow: /, and the sitemap', async () => {
    const res = await get(`${site()}/robots.txt`);
    expect(essence(res.headers.get('content-type'))).toBe('text/plain');
    const lines = (await res.text()).split('\n').map((l) => l.replace(/#.*/, '').trim()).filter(Boolean);
    // RFC 9309 groups: consecutive user-agent lines start a group; rules follow.
    const groups: { agents: string[]; rules: string[] }[] = [];
    for (const line of lines) {
      const [field, ...rest] = line.split(':');
      const key = field!.trim().toLowerCase();
      const value = rest.join(':').trim();
      if (key === 'user-agent') {
        const last = groups.at(-1);
        if (last && last.rules.length === 0) last.agents.push(value.toLowerCase());
        else groups.push({ agents: [value.toLowerCase()], rules: [] });
      } else if (key !== 'sitemap') {
        groups.at(-1)!.rules.push(`${key}: ${value}`);
      }
    }
    expect(groups.map((g) => g.agents[0])).toContain('*');
    const aiGroup = groups.find((g) => g.agents.includes('gptbot'));
    expect(aiGroup?.agents).toEqual(expect.arrayContaining(['gptbot', 'chatgpt-user', 'oai-searchbot', 'claudebot', 'claude-web', 'anthropic-ai',
      'google-extended', 'perplexitybot', 'ccbot', 'applebot-extended', 'bytespider', 'cohere-ai', 'amazonbot', 'meta-externalagent', 'facebookbot', 'diffbot']));
    const signals = groups.map((g) => g.rules.find((r) => r.startsWith('content-signal:')));
    expect(signals.every((s) => s !== undefined)).toBe(true);
    expect(new Set(signals).size).toBe(1);
    expect(signals[0]).toMatch(/^content-signal: (search|ai-input|ai-train)=(yes|no)(, (search|ai-input|ai-train)=(yes|no))*$/);
    for (const g of groups) expect(g.rules).toContain('allow: /');
    expect(lines).toContain(`Sitemap: ${site()}/sitemap.xml`);
  });

  it('sitemap.xml: a urlset of the page and the documents', async () => {
    const res = await get(`${site()}/sitemap.xml`);
    expect(essence(res.headers.get('content-type'))).toBe('application/xml');
    const xml = await res.text();
    expect(xml).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\s*<urlset xmlns="http:\/\/www.sitemaps.org\/schemas\/sitemap\/0.9">/);
    const locs = [...xml.matchAll(/<loc>([^<]+)<\/loc>/g)].map((m) => m[1]);
    expect(locs).toEqual(expect.arrayContaining([`${site()}/`, `${site()}/api-docs`, `${site()}/auth.md`, `${site()}/llms.txt`]));
    for (const m of xml.matchAll(/<lastmod>([^<]+)<\/lastmod>/g)) expect(m[1]).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });
});

describe('llms.txt (llmstxt.org structure)', () => {
  it('H1, a blockquote summary, no other headings before the H2 link sections, and an Optional section', async () => {
    const text = await (await get(`${site()}/llms.txt`)).text();
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^# \S/);
    expect(lines.filter((l) => /^# /.test(l))).toHaveLength(1);
    expect(lines.find((l) => l.trim() !== '' && !l.startsWith('# '))).toMatch(/^> \S/);
    const headings = lines.filter((l) => /^#{1,6} /.test(l)).slice(1);
    expect(headings.every((h) => /^## \S/.test(h))).toBe(true);
    expect(headings.at(-1)).toBe('## Optional');
    const firstSection = lines.findIndex((l) => l.startsWith('## '));
    const listItems = lines.slice(firstSection).filter((l) => l.startsWith('- '));
    expect(listItems.length).toBeGreaterThan(5);
    for (const item of listItems) expect(item).toMatch(/^- \[[^\]]+\]\(https?:\/\/[^)\s]+\)(: .+)?$/);
    expect(text).toContain(`${site()}/auth.md`);
    expect(text).toContain(`${site()}/openapi.json`);
  });
});
