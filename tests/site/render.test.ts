// The renderer on its own (no stack): public URLs come only from the configuration, placeholders are
// all filled, the private signing key never leaves, the policy date is validated, output is
// deterministic, and `npm run build:site` produces the same set for a deployment.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../config/checkout.ts';
import { completeSecrets } from '../../stack/secrets.ts';
import { API_HOST_DOCUMENTS, STATIC_DOCUMENTS } from '../../contract/documents.ts';
import { SITE_PATHS } from '../../contract/paths.ts';
import { mcpServerName, policyUpdatedDate, renderSiteDocuments, type DocumentsConfig } from '../../site/render/render.ts';
import { fillText } from '../../site/render/templates.ts';
import { DEMO_RULE, GROSS_FIELDS, PRIVACY, RULES } from '../../contract/texts/rules.ts';

const SITE = 'https://stats.example.org';
const API = 'https://api.stats.example.org';
/** Identifiers of the standards the documents name; everything else must be one of our two origins. */
const OUTSIDE = ['https://www.rfc-editor.org/info/rfc9727', 'https://creativecommons.org/licenses/by/4.0/', 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json',
  'https://schemas.agentskills.io/discovery/0.2.0/schema.json', 'http://www.sitemaps.org/schemas/sitemap/0.9',
  // the dialect the MCP SDK names in the tools' JSON Schemas
  'http://json-schema.org/draft-07/schema#',
  // the SVG namespace of the favicon
  'http://www.w3.org/2000/svg',
  // the standards the served verifier cites
  'https://c2sp.org/signed-note', 'https://c2sp.org/signed-note#verifier-keys', 'https://c2sp.org/tlog-checkpoint', 'https://c2sp.org/tlog-cosignature', 'https://c2sp.org/tlog-policy', 'https://c2sp.org/tlog-tiles', 'https://www.rfc-editor.org/rfc/rfc6962#section-2.1',
  'https://c2sp.org/tlog-proof', 'https://www.rfc-editor.org/rfc/rfc9162#section-2.1.4',
  'https://www.rfc-editor.org/rfc/rfc7638', 'https://www.rfc-editor.org/rfc/rfc8785', 'https://www.rfc-editor.org/rfc/rfc8941',
  'https://www.rfc-editor.org/rfc/rfc9421', 'https://www.rfc-editor.org/rfc/rfc9530'];

let dir: string;
let cfg: DocumentsConfig;
let secrets: Awaited<ReturnType<typeof completeSecrets>>;

function files(root: string): string[] {
  return readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => statSync(path.join(root, f)).isFile()).sort();
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'site-documents-'));
  secrets = await completeSecrets({});
  cfg = { siteUrl: SITE, apiUrl: API, ANON_KEY: secrets.ANON_KEY, LOG_PUBLIC_KEY: secrets.LOG_PUBLIC_KEY };
  await renderSiteDocuments(cfg, path.join(dir, 'a'), { policyUpdated: '2026-03-04' });
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('renderSiteDocuments', () => {
  it('writes every served document, each skill, and the API host metadata', () => {
    const written = files(path.join(dir, 'a'));
    for (const doc of [...STATIC_DOCUMENTS, ...API_HOST_DOCUMENTS]) expect(written).toContain(doc.file);
    expect(written.filter((f) => f.endsWith('/SKILL.md')).length).toBeGreaterThan(0);
  });

  it('every URL in the text documents is one of the configured origins or a standard identifier', () => {
    // The Redoc bundle is a third party's, copied as it is (its own URLs are its business).
    for (const file of files(path.join(dir, 'a')).filter((f) => f !== SITE_PATHS.REDOC_BUNDLE.slice(1) && !/\.(gz|br)$/.test(f))) {
      const text = readFileSync(path.join(dir, 'a', file), 'utf8');
      expect(text, file).not.toMatch(/\{\{[A-Z_]+\}\}/);
      expect(text, file).not.toMatch(/127\.0\.0\.1|localhost/);
      for (const url of text.match(/https?:\/\/[^\s"'`<>)\]]+/g) ?? []) {
        const clean = url.replace(/[.,;:]+$/, '');
        if (OUTSIDE.includes(clean)) continue;
        expect([SITE, API], `${file}: ${clean}`).toContain(new URL(clean).origin);
      }
    }

  });

  it('states the reporting rules in the words of the one module that holds them, naming every gross field', () => {
    const read = (f: string) => readFileSync(path.join(dir, 'a', f), 'utf8');
    const openapiDescription = (JSON.parse(read('openapi.json')) as { info: { description: string } }).info.description;
    for (const [name, text] of [['auth.md', read('auth.md')], ['llms.txt', read('llms.txt')],
      ['report-public-stats skill', read('.well-known/agent-skills/report-public-stats/SKILL.md')], ['openapi.json', openapiDescription]]) {
      for (const rule of [RULES.gross_not_profit, RULES.accrual_is_estimate, RULES.no_annualising, RULES.sums_foot, DEMO_RULE]) expect(text, name).toContain(rule);
    }
    for (const field of GROSS_FIELDS) expect(RULES.gross_not_profit).toContain(field);
    // What an audit covers, wherever an agent learns how to report the figures.
    for (const [name, text] of [['llms.txt', read('llms.txt')], ['report-public-stats skill', read('.well-known/agent-skills/report-public-stats/SKILL.md')], ['openapi.json', openapiDescription]]) {
      expect(text, name).toContain(RULES.audit_scope);
    }
  });

  it('describes the audits: the stats record\'s audit, and the attestations at /log/audits in the keyless description and llms.txt', () => {
    const read = (f: string) => readFileSync(path.join(dir, 'a', f), 'utf8');
    const keyless = JSON.parse(read('openapi-keyless.json'));
    const operation = keyless.paths[SITE_PATHS.LOG_AUDITS].get;
    expect(operation.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/AuditsRecord' });
    expect(operation.description).toContain('public-stats audit attestation v2');
    expect(keyless.components.schemas.SiteStatsRecord.properties.audit.description).toMatch(/null until one is published/);
    expect(read('llms.txt')).toContain(`[Audit attestations](${SITE}${SITE_PATHS.LOG_AUDITS})`);
    expect(read('.well-known/agent-skills/public-stats-api/SKILL.md')).toContain(`GET ${SITE}${SITE_PATHS.LOG_AUDITS}`);
    const card = JSON.parse(read('.well-known/mcp/server-card.json'));
    expect(card.tools.find((t: { name: string }) => t.name === 'get_stats').description).toMatch(/latest independent audit/);
  });

  it('says what the figures let anyone find out wherever privacy is promised, the README included', () => {
    const read = (f: string) => readFileSync(path.join(dir, 'a', f), 'utf8');
    const openapiDescription = (JSON.parse(read('openapi.json')) as { info: { description: string } }).info.description;
    const readme = readFileSync('README.md', 'utf8').replace(/\s+/g, ' ');
    for (const [name, text] of [['auth.md', read('auth.md')], ['llms.txt', read('llms.txt')], ['README.md', readme],
      ['report-public-stats skill', read('.well-known/agent-skills/report-public-stats/SKILL.md')], ['openapi.json', openapiDescription]]) {
      expect(text, name).toContain(PRIVACY);
    }
  });

  it('publishes the key and the policy date, never the private signing key', () => {
    const all = files(path.join(dir, 'a')).map((f) => readFileSync(path.join(dir, 'a', f), 'utf8')).join('\n');
    expect(all).not.toContain(secrets.HTTP_SIG_PRIVATE_KEY!);
    const authMd = readFileSync(path.join(dir, 'a', 'auth.md'), 'utf8');
    expect(authMd).toContain(cfg.ANON_KEY);
    expect(authMd).toContain('Last updated: 2026-03-04.');
    expect(readFileSync(path.join(dir, 'a', 'sitemap.xml'), 'utf8')).toContain('<lastmod>2026-03-04</lastmod>');
  });

  it('lists each skill with the sha256 of the file it wrote', () => {
    const index = JSON.parse(readFileSync(path.join(dir, 'a', '.well-known/agent-skills/index.json'), 'utf8'));
    for (const skill of index.skills) {
      const bytes = readFileSync(path.join(dir, 'a', new URL(skill.url).pathname));
      expect(skill.digest).toBe(`sha256:${createHash('sha256').update(bytes).digest('hex')}`);
    }
  });

  it('is deterministic: the same configuration renders the same bytes', async () => {
    await renderSiteDocuments(cfg, path.join(dir, 'b'), { policyUpdated: '2026-03-04' });
    const a = files(path.join(dir, 'a'));
    expect(files(path.join(dir, 'b'))).toEqual(a);
    for (const f of a) expect(readFileSync(path.join(dir, 'b', f)).equals(readFileSync(path.join(dir, 'a', f))), f).toBe(true);
  });

  it('writes a gzip and a brotli copy beside each document, equal to it once decompressed', () => {
    const written = files(path.join(dir, 'a'));
    for (const file of written.filter((f) => !/\.(gz|br)$/.test(f))) {
      const body = readFileSync(path.join(dir, 'a', file));
      expect(gunzipSync(readFileSync(path.join(dir, 'a', `${file}.gz`))).equals(body), file).toBe(true);
      expect(brotliDecompressSync(readFileSync(path.join(dir, 'a', `${file}.br`))).equals(body), file).toBe(true);
    }
  });

  it('serves the Redoc bundle from its npm package, with no outside asset left in it', () => {
    const bundle = readFileSync(path.join(dir, 'a', SITE_PATHS.REDOC_BUNDLE.slice(1)), 'utf8');
    expect(bundle.length).toBeGreaterThan(500_000);
    expect(bundle).toContain('Redoc');
    expect(bundle).not.toMatch(/cdn\.redoc\.ly/);
  });
});

describe('inputs', () => {
  it('POLICY_UPDATED must be a real calendar date', () => {
    expect(policyUpdatedDate('2026-01-31')).toBe('2026-01-31');
    expect(policyUpdatedDate(undefined)).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    for (const bad of ['2026-02-30', '2026-1-5', 'yesterday', '2026-01-31T00:00:00Z']) expect(() => policyUpdatedDate(bad), bad).toThrow(/POLICY_UPDATED/);
  });

  it('an unknown placeholder is an error, not a literal in a published document', () => {
    expect(fillText('a {{KNOWN}} b', { KNOWN: 'x' }, 't')).toBe('a x b');
    expect(() => fillText('a {{TYPO}} b', { KNOWN: 'x' }, 'auth.md')).toThrow('auth.md: no value for the placeholder {{TYPO}}');
  });

  // https://github.com/modelcontextprotocol/modelcontextprotocol/blob/main/seps/2127-mcp-server-cards.md (field `name`)
  it('the MCP card name is the reverse-DNS of the site host, a slash, then the server name', () => {
    expect(mcpServerName('https://stats.example.org')).toBe('org.example.stats/public-stats');
    expect(mcpServerName('http://127.0.0.1:8080')).toBe('127.0.0.1/public-stats');
  });
});

describe('npm run build:site', () => {
  it('renders the documents for a deployment from the environment', async () => {
    const secrets = await completeSecrets({});
    const out = path.join(dir, 'deploy');
    const { stdout } = await promisify(execFile)('npm', ['run', '--silent', 'build:site', '--', out], {
      cwd: ROOT_DIR,
      env: { ...process.env, ...secrets, SITE_URL: SITE, API_URL: API, DATA_DIR: path.join(dir, 'deploy-data'), POLICY_UPDATED: '2026-05-06' },
    });
    expect(stdout).toContain(`Rendered the site documents for ${SITE}`);
    const written = files(out);
    for (const doc of STATIC_DOCUMENTS) expect(written).toContain(doc.file);
    expect(readFileSync(path.join(out, 'auth.md'), 'utf8')).toContain(secrets.ANON_KEY);
    expect(readFileSync(path.join(out, 'auth.md'), 'utf8')).toContain('Last updated: 2026-05-06.');
    const prm = JSON.parse(readFileSync(path.join(out, '.well-known/oauth-protected-resource'), 'utf8'));
    expect(prm.resource).toBe(SITE);
  }, 60_000);

  it('fails with a clear message without an output directory', async () => {
    const result = await promisify(execFile)('npm', ['run', '--silent', 'build:site'], { cwd: ROOT_DIR }).catch((e: { code: number; stderr: string }) => e);
    expect((result as { code: number }).code).toBe(2);
    expect((result as { stderr: string }).stderr).toContain('Usage: npm run build:site -- <outDir>');
  });
});
