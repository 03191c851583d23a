// `npm run docs:config`: the table of every environment variable in the configuration reference (CONFIGURATION_PAGE).
// There is one source and no second list: what each variable does is the comment right above it in
// .env.example (a section is its `# --- Title` line and the comment under it), and its default is the
// value the code applies when the environment leaves it unset (the config modules' tables, the edge's
// own configuration). tests/docs.test.ts makes the table again and compares; tests/stack/config.test.ts
// holds .env.example to the variables the code reads and to these defaults.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { edgeConfigFromEnv } from '../../edge/config.ts';
import { DEFAULT_POLICY_UPDATED } from '../../site/render/render.ts';
import { BACKUP_DEFAULTS } from '../../stack/backup.ts';
import { ROOT_DIR } from '../../config/checkout.ts';
import { readCommandLine } from '../../config/command-line.ts';
import { configFromEnv } from '../../config/config.ts';
import { STACK_DEFAULTS } from '../../config/settings.ts';
import { WRITER_DEFAULTS } from '../../config/writer.ts';

export const ENV_EXAMPLE = path.join(ROOT_DIR, '.env.example');
export const CONFIGURATION_PAGE = path.join(ROOT_DIR, 'docs', 'reference', 'configuration.md');
export const TABLE_START = '<!-- configuration table: written by `npm run docs:config` from .env.example and the code\'s defaults -->';
export const TABLE_END = '<!-- end of configuration table -->';

/** The value the code uses for each variable the environment leaves unset, as text. */
export function configurationDefaults(): Map<string, string> {
  const stack = configFromEnv({}, []);
  // The edge keeps its defaults to itself: read them through its configuration, given only what it requires.
  const edge = edgeConfigFromEnv({ SITE_URL: 'http://a', API_URL: 'http://a', EDGE_API_UPSTREAM: 'http://a', EDGE_POSTGREST_UPSTREAM: 'http://a', ANON_KEY: 'k', HTTP_SIG_PRIVATE_KEY: 'k' });
  const defaults = {
    ...STACK_DEFAULTS, ...WRITER_DEFAULTS, ...BACKUP_DEFAULTS,
    SITE_URL: stack.siteUrl, API_URL: stack.apiUrl, POLICY_UPDATED: DEFAULT_POLICY_UPDATED,
    EDGE_STATS_TTL_SECONDS: edge.statsTtlMs / 1000, EDGE_HEALTH_TTL_SECONDS: edge.healthTtlMs / 1000,
    EDGE_UPSTREAM_TIMEOUT_SECONDS: edge.upstreamTimeoutMs / 1000, EDGE_WARM_SECONDS: edge.warmPeriodMs / 1000,
  };
  return new Map(Object.entries(defaults).map(([name, value]) => [name, String(value)]));
}

export interface Variable {
  name: string;
  /** The comment right above it, its lines joined. */
  description: string;
  /** The value .env.example shows: set, or commented out as an example; '' when it leaves it empty. */
  shown: string;
}

export interface Section { title: string; intro: string; variables: Variable[] }

/** `NAME=value` set, or `# NAME=value` shown as an example; a value holds no space. */
const VARIABLE = /^(?:#\s*)?([A-Z][A-Z0-9_]*)=(\S*)$/;
const SECTION = /^# --- (.+)$/;

/** The sections of .env.example with their variables; a variable without a comment of its own is refused. */
export function readEnvExample(text: string): Section[] {
  const sections: Section[] = [];
  let comment: string[] = [];
  // The comment under a section's title, until the first blank line, is the section's.
  let inIntro = false;
  for (const line of text.split('\n')) {
    const section = SECTION.exec(line);
    const variable = VARIABLE.exec(line);
    if (section) {
      sections.push({ title: section[1]!.trim(), intro: '', variables: [] });
      comment = [];
      inIntro = true;
    } else if (variable) {
      const current = sections.at(-1);
      if (!current) throw new Error(`.env.example: ${variable[1]} comes before the first "# --- " section line.`);
      if (comment.length === 0) throw new Error(`.env.example: ${variable[1]} has no comment of its own right above it; give it one.`);
      if (inIntro) throw new Error(`.env.example: leave a blank line between the section "${current.title}" and ${variable[1]}'s comment.`);
      current.variables.push({ name: variable[1]!, description: comment.join(' '), shown: variable[2]! });
      comment = [];
    } else if (line.startsWith('#')) {
      const text = line.replace(/^#\s?/, '').trim();
      if (inIntro) {
        const current = sections.at(-1)!;
        current.intro = current.intro ? `${current.intro} ${text}` : text;
      } else if (sections.length > 0) comment.push(text);
    } else if (line.trim() === '') {
      inIntro = false;
      comment = [];
    }
  }
  return sections;
}

/** A page under docs/ that .env.example names, as a link from the configuration page. */
const docsLink = (page: string) => `[${page}](${path.relative(path.dirname(CONFIGURATION_PAGE), path.join(ROOT_DIR, page))})`;

/**
 * Text for a Markdown table cell. Outside code spans, angle brackets (HTML to GitHub) and asterisks
 * (emphasis) are escaped and the docs pages named become links; pipes are escaped everywhere.
 */
function cell(text: string): string {
  return text.split(/(`[^`]*`)/).map((part, i) => (i % 2 === 1 ? part
    : part.replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\*/g, '\\*').replace(/\bdocs\/[\w/.-]*\w\.md\b/g, docsLink))).join('').replace(/\|/g, '\\|');
}

/** The table: one row a variable, under a row naming its section. */
export function configurationTable(sections: Section[], defaults: Map<string, string>): string {
  const rows = ['| variable | default | what it does |', '|---|---|---|'];
  for (const section of sections) {
    rows.push(`| **${cell(section.title)}** | | ${cell(section.intro)} |`);
    for (const v of section.variables) {
      const fallback = defaults.get(v.name);
      const example = v.shown !== '' && v.shown !== fallback ? ` Example: \`${v.shown}\`.` : '';
      rows.push(`| \`${v.name}\` | ${fallback === undefined ? 'unset' : `\`${fallback}\``} | ${cell(v.description)}${example} |`);
    }
  }
  return rows.join('\n');
}

/** The page with the table between its markers made anew. */
export function withTable(page: string, table: string): string {
  const start = page.indexOf(TABLE_START);
  const end = page.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error(`${path.relative(ROOT_DIR, CONFIGURATION_PAGE)} has lost its markers: ${TABLE_START} … ${TABLE_END}`);
  return `${page.slice(0, start + TABLE_START.length)}\n${table}\n${page.slice(end)}`;
}

/** The configuration page as it should be now. */
export function configurationPage(): string {
  const table = configurationTable(readEnvExample(readFileSync(ENV_EXAMPLE, 'utf8')), configurationDefaults());
  return withTable(readFileSync(CONFIGURATION_PAGE, 'utf8'), table);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const usage = `Usage: npm run docs:config
Rewrites the table of ${path.relative(ROOT_DIR, CONFIGURATION_PAGE)} from .env.example and the code's defaults.
  --help   print this help and write nothing`;
  readCommandLine(usage, { options: {}, allowPositionals: false });
  try {
    const page = configurationPage();
    writeFileSync(CONFIGURATION_PAGE, page);
    console.log(`Wrote the table of ${readEnvExample(readFileSync(ENV_EXAMPLE, 'utf8')).reduce((n, s) => n + s.variables.length, 0)} variables into ${path.relative(ROOT_DIR, CONFIGURATION_PAGE)}.`);
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
}
