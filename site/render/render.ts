// Renders the site host's static documents (the rows of contract/documents.ts) into `outDir` from one
// configuration: the public URLs, the current anon key, the public signing key and the policy's
// last-updated date. A row with a source is its template under site/documents, filled; the others
// are built here, by site/render/build.ts.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import { hostDocument } from './openapi.ts';
import { isCalendarDate } from '../../contract/dates.ts';
import { API_HOST_DOCUMENTS, STATIC_DOCUMENTS } from '../../contract/documents.ts';
import { fillJson, fillText, type Vars } from './templates.ts';
import { API_PATHS, contentDigest, logOrigin, publicUrls, SITE_PATHS, skillPath } from '../../contract/paths.ts';
import { MCP_SERVER_NAME, MCP_SERVER_VERSION } from '../../contract/mcp.ts';
import { mcpCardFacts, type McpCardFacts } from './mcp-card.ts';
import { contractSchemas } from './schemas.ts';
import { citeSentence, DEMO_RULE, FIGURES_LICENSE, PRIVACY, RULES, verification } from '../../contract/texts/rules.ts';
import { noteVerifierKey } from '../../contract/log-key.ts';
import { verifierScript } from './verifier.ts';

const ROOT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export const DOCUMENTS_DIR = path.join(ROOT_DIR, 'site', 'documents');
/** The policy's last-updated date unless POLICY_UPDATED says otherwise; bump it when auth.md changes. */
export const DEFAULT_POLICY_UPDATED = '2026-11-22';
/** Content Signals (contentsignals.org) for every robots.txt group: be found and quoted, not trained on. */
export const CONTENT_SIGNAL = 'search=yes, ai-input=yes, ai-train=no';
/** Agent Skills Discovery v0.2.0 index schema identifier. */
export const SKILLS_SCHEMA = 'https://schemas.agentskills.io/discovery/0.2.0/schema.json';

/** What the documents are rendered from (site/render/settings.ts reads it from the environment). */
export interface DocumentsConfig {
  /** Public origin of the site host, {base_url}. */
  siteUrl: string;
  /** Public origin of the API host, {api_url}. */
  apiUrl: string;
  /** The public anon key, published in auth.md and the skills. */
  ANON_KEY: string;
  /** The public half of the log's own key (base64url): the documents publish the log's verifier key made from it. */
  LOG_PUBLIC_KEY: string;
  /** The real log's origin (LOG_ORIGIN); unset: the site's host and the log's path. */
  logOrigin?: string;
  /** The access policy's last-updated date (POLICY_UPDATED, YYYY-MM-DD); otherwise DEFAULT_POLICY_UPDATED. */
  policyUpdated?: string;
}

export interface RenderOptions {
  /** YYYY-MM-DD; default: the configuration's POLICY_UPDATED, else DEFAULT_POLICY_UPDATED. */
  policyUpdated?: string;
}

export interface SkillEntry {
  name: string;
  type: 'skill-md';
  description: string;
  url: string;
  digest: string;
}

export function policyUpdatedDate(value: string | undefined): string {
  const date = value || DEFAULT_POLICY_UPDATED;
  if (!isCalendarDate(date)) {
    throw new Error(`POLICY_UPDATED must be a calendar date YYYY-MM-DD, got "${date}".`);
  }
  return date;
}

/**
 * MCP server-card `name`: the site's host in reverse-DNS form, a slash, then the server's name, as the
 * draft server-card proposal asks ("reverse-DNS format … exactly one forward slash"):
 * https://github.com/modelcontextprotocol/modelcontextprotocol/blob/main/seps/2127-mcp-server-cards.md
 */
export function mcpServerName(siteUrl: string): string {
  const host = new URL(siteUrl).hostname;
  const isIp = /^[\d.]+$/.test(host) || host.includes(':') || host.startsWith('[');
  const namespace = isIp ? host.replace(/[^a-zA-Z0-9.-]/g, '-') : host.split('.').reverse().join('.');
  return `${namespace}/${MCP_SERVER_NAME}`;
}

export function templateVars(cfg: DocumentsConfig, policyUpdated: string, logVerifierKey: string): Vars {
  const vars: Record<string, string> = { ...publicUrls(cfg) };
  const verify = verification(cfg);
  for (const [name, p] of Object.entries(SITE_PATHS)) vars[`${name}_PATH`] = p;
  for (const [name, p] of Object.entries(API_PATHS)) vars[`API_${name}_PATH`] = p;
  return {
    ...vars,
    ANON_KEY: cfg.ANON_KEY,
    POLICY_UPDATED: policyUpdated,
    CONTENT_SIGNAL,
    MCP_SERVER_NAME: mcpServerName(cfg.siteUrl),
    // The reporting rules, worded once (contract/texts/rules.ts) for every document that states them.
    RULE_GROSS_NOT_PROFIT: RULES.gross_not_profit,
    RULE_ACCRUAL_IS_ESTIMATE: RULES.accrual_is_estimate,
    RULE_NO_ANNUALISING: RULES.no_annualising,
    RULE_DATES: RULES.dates,
    RULE_DISCLAIMER: RULES.disclaimer,
    RULE_POLLING: RULES.polling,
    RULE_SUMS_FOOT: RULES.sums_foot,
    RULE_AUDIT_SCOPE: RULES.audit_scope,
    PRIVACY,
    RULE_CITE: citeSentence(cfg),
    RULE_DEMO: DEMO_RULE,
    VERIFY_SIGNED: verify.signed,
    VERIFY_LOGGED: verify.logged,
    VERIFY_CHECK: verify.check,
    LOG_ORIGIN: logOrigin(cfg, false),
    LOG_VERIFIER_KEY: logVerifierKey,
    LICENSE_NAME: FIGURES_LICENSE.name,
    LICENSE_SPDX: FIGURES_LICENSE.spdx,
    LICENSE_URL: FIGURES_LICENSE.url,
    MCP_SERVER_VERSION,
  };
}

const source = (...parts: string[]) => path.join(DOCUMENTS_DIR, ...parts);
const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
const sha256 = (bytes: string | Buffer) => createHash('sha256').update(bytes).digest('hex');

function jsonTemplate(file: string, vars: Vars): unknown {
  return fillJson(JSON.parse(readFileSync(source(file), 'utf8')), vars, file);
}

/** The OpenAPI document with the record schemas generated from the edge's record contract. */
function withContract(openapi: unknown): unknown {
  const doc = openapi as { components: { schemas: Record<string, unknown> } };
  return { ...doc, components: { ...doc.components, schemas: { ...doc.components.schemas, ...contractSchemas() } } };
}

/** The server card with what the MCP server says of itself: its info, capabilities, instructions, tools and resources. */
function withServerFacts(card: unknown, facts: McpCardFacts): unknown {
  const { serverInfo, ...rest } = facts;
  return { ...(card as object), title: serverInfo.title, version: serverInfo.version, serverInfo, ...rest };
}

/**
 * Redoc's standalone bundle from its npm package. Its one outside asset, the "API docs by Redocly"
 * logo on Redoc's CDN, becomes an empty inline SVG, so the reference loads nothing from elsewhere.
 */
function redocBundle(): string {
  const bundle = readFileSync(createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js'), 'utf8');
  return bundle.replace(/https:\/\/cdn\.redoc\.ly\/redoc\/logo-mini(?:-full)?\.svg/g, 'data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22/%3E');
}

function textTemplate(file: string, vars: Vars): string {
  return fillText(readFileSync(source(file), 'utf8'), vars, file);
}

/** name and description from a SKILL.md's YAML front matter (single-line scalars only). */
export function skillFrontMatter(text: string, origin: string): { name: string; description: string } {
  const block = /^---\n([\s\S]*?)\n---\n/.exec(text);
  if (!block) throw new Error(`${origin}: SKILL.md must open with YAML front matter.`);
  const field = (key: string) => new RegExp(`^${key}:\\s*(.+)$`, 'm').exec(block[1]!)?.[1]?.trim();
  const name = field('name');
  const description = field('description');
  if (!name || !/^[a-z0-9]+(-[a-z0-9]+)*$/.test(name) || name.length > 64) throw new Error(`${origin}: front matter name must be 1-64 characters a-z, 0-9 and single hyphens.`);
  if (!description || description.length > 1024) throw new Error(`${origin}: front matter description must be 1-1024 characters.`);
  return { name, description };
}

export async function renderSiteDocuments(cfg: DocumentsConfig, outDir: string, options: RenderOptions = {}): Promise<void> {
  const policyUpdated = policyUpdatedDate(options.policyUpdated ?? cfg.policyUpdated);
  if (!cfg.LOG_PUBLIC_KEY) throw new Error('LOG_PUBLIC_KEY is not set: run `npm run keys`; the documents publish the log\'s verifier key from it.');
  const logVerifierKey = await noteVerifierKey(logOrigin(cfg, false), Buffer.from(cfg.LOG_PUBLIC_KEY, 'base64url'));
  const vars = templateVars(cfg, policyUpdated, logVerifierKey);
  const urls = publicUrls(cfg);
  const files = new Map<string, string>();
  const fileOf = (documentPath: string) => STATIC_DOCUMENTS.find((d) => d.path === documentPath)!.file;

  // Documents with a template: filled, JSON kept as JSON.
  for (const doc of [...STATIC_DOCUMENTS, ...API_HOST_DOCUMENTS]) {
    if (!doc.source) continue;
    files.set(doc.file, doc.source.endsWith('.json') ? json(jsonTemplate(doc.source, vars)) : textTemplate(doc.source, vars));
  }
  // The script's name is the digest of its source; served otherwise (a placeholder filled), the name would lie.
  if (!SITE_PATHS.API_DOCS_SCRIPT.includes(`.${contentDigest(files.get(fileOf(SITE_PATHS.API_DOCS_SCRIPT))!)}.`)) {
    throw new Error(`${SITE_PATHS.API_DOCS_SCRIPT} is not named by the digest of what is served under it: keep site/documents/api-docs.js free of placeholders.`);
  }

  // Documents built from more than a template.
  const openapi = withContract(jsonTemplate('openapi.json', vars));
  files.set(fileOf(SITE_PATHS.OPENAPI), json(hostDocument(openapi, urls.API_URL, { title: 'Public Stats Service: API host', keyless: false })));
  files.set(fileOf(SITE_PATHS.OPENAPI_KEYLESS), json(hostDocument(openapi, urls.SITE_URL, { title: 'Public Stats Service: keyless site endpoints', keyless: true })));
  files.set(fileOf(SITE_PATHS.REDOC_BUNDLE), redocBundle());
  files.set(fileOf(SITE_PATHS.LOG_VERIFIER), await verifierScript(cfg.siteUrl));
  // RFC 9728 wants `resource` to be the origin the metadata URL came from: each host describes itself.
  files.set(fileOf(SITE_PATHS.PRM), json(jsonTemplate('well-known/oauth-protected-resource.json', { ...vars, RESOURCE: urls.SITE_URL })));
  files.set(API_HOST_DOCUMENTS[0]!.file, json(jsonTemplate('well-known/oauth-protected-resource.json', { ...vars, RESOURCE: urls.API_URL })));
  files.set(fileOf(SITE_PATHS.MCP_CARD), json(withServerFacts(jsonTemplate('well-known/mcp-server-card.json', vars), await mcpCardFacts(cfg.siteUrl))));

  // Skills: each SKILL.md is rendered first, then listed with the digest of exactly those bytes.
  const skills: SkillEntry[] = [];
  for (const dir of readdirSync(source('agent-skills')).sort()) {
    const origin = `agent-skills/${dir}/SKILL.md`;
    const body = textTemplate(origin, vars);
    const { name, description } = skillFrontMatter(body, origin);
    if (name !== dir) throw new Error(`${origin}: front matter name "${name}" must equal its directory name.`);
    files.set(skillPath(name).replace(/^\//, ''), body);
    skills.push({ name, type: 'skill-md', description, url: cfg.siteUrl + skillPath(name), digest: `sha256:${sha256(body)}` });
  }
  files.set(fileOf(SITE_PATHS.SKILLS_INDEX), json({ $schema: SKILLS_SCHEMA, skills }));

  const missing = STATIC_DOCUMENTS.filter((d) => !files.has(d.file)).map((d) => d.path);
  if (missing.length) throw new Error(`No content for ${missing.join(', ')}: give the row a source, or build it here.`);

  for (const [file, body] of files) {
    const target = path.join(outDir, file);
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, body);
    // Compressed copies beside each document, sent by nginx's gzip_static and brotli_static.
    writeFileSync(`${target}.gz`, gzipSync(body, { level: 9 }));
    writeFileSync(`${target}.br`, brotliCompressSync(body, { params: { [zlib.BROTLI_PARAM_QUALITY]: body.length > BROTLI_BEST_MAX_BYTES ? 9 : 11, [zlib.BROTLI_PARAM_SIZE_HINT]: body.length } }));
  }
}

/** Brotli's best quality takes seconds on the 1 MB renderer bundle and saves little over 9 there. */
const BROTLI_BEST_MAX_BYTES = 256 * 1024;
