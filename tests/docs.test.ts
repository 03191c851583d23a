// The README and every page under docs/, read as a reader follows them. Every relative link resolves,
// and every #anchor names a heading of its page as GitHub makes anchors from headings; every
// `npm run` script a page names is one of package.json; every environment variable a page names is
// one the configuration knows; the configuration table is the one `npm run docs:config` makes; every
// command is in the commands' reference; the contributing page opens with the map of the rooms, and
// each room's entry file with its line of the map. The README stays a doorway: at most 150 lines, the two
// commands in its first 40, and the picture of the page.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIGURATION_PAGE, configurationPage } from '../scripts/docs/configuration.ts';
import { ROOT_DIR } from '../config/checkout.ts';
import { envExampleNames, namesReadByCode } from './support/env-example.ts';
import { ROOMS, roomLine, roomsTable } from './support/rooms.ts';

const README = path.join(ROOT_DIR, 'README.md');
const CONFIGURATION_REL = path.relative(ROOT_DIR, CONFIGURATION_PAGE);
const DOCS = path.join(ROOT_DIR, 'docs');
const SCRIPTS = Object.keys((JSON.parse(readFileSync(path.join(ROOT_DIR, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts);

/** Names shaped like environment variables that are not ones: what each is instead. */
const NOT_VARIABLES: Record<string, string> = {
  CAP_NET_BIND_SERVICE: 'a Linux capability',
  COMPOSE_PROFILES: "Docker Compose's own variable",
  MAKER_REBATE: 'a Polymarket activity type',
  TAKER_REBATE: 'a Polymarket activity type',
  REFERRAL_REWARD: 'a Polymarket activity type',
  NEMESIS_SEED: 'a setting of the nemesis test (tests/stack/scale-out/nemesis.test.ts)',
  NEMESIS_SECONDS: 'a setting of the nemesis test (tests/stack/scale-out/nemesis.test.ts)',
  NEMESIS_NODES: 'a setting of the nemesis test (tests/stack/scale-out/nemesis.test.ts)',
};

const rel = (file: string) => path.relative(ROOT_DIR, file);

/** The README and every Markdown page under docs/. */
function pages(): string[] {
  return [README, ...readdirSync(DOCS, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.md')).sort().map((f) => path.join(DOCS, f))];
}

/** The text with fenced blocks and inline code spans blanked out, line for line: what a reader sees as prose. */
function prose(text: string): string {
  let fenced = false;
  return text.split('\n').map((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line.replace(/`[^`]*`/g, '``');
  }).join('\n');
}

/**
 * A heading's anchor as GitHub makes it (github-slugger): the text as rendered (links by their text,
 * no markup), lower case, every character but letters, marks, digits, connectors, spaces and hyphens
 * removed, spaces made hyphens. https://github.com/Flet/github-slugger
 */
function githubSlug(heading: string): string {
  return heading.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/<[^>]+>/g, '').trim().toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** The anchors of a page: one per heading (a repeated one numbered -1, -2, … as GitHub does), and HTML ids. */
function anchors(file: string): Set<string> {
  const text = readFileSync(file, 'utf8');
  const found = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = githubSlug(heading[1]!);
    const n = seen.get(slug) ?? 0;
    found.add(n === 0 ? slug : `${slug}-${n}`);
    seen.set(slug, n + 1);
  }
  for (const m of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) found.add(m[1]!);
  return found;
}

/** Each link target in a page's prose: Markdown links and images, and HTML href and src. */
function links(text: string): string[] {
  const body = prose(text);
  return [...body.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g), ...body.matchAll(/\b(?:href|src)="([^"]+)"/g)].map((m) => m[1]!);
}

/** What is wrong with one link of `file`, or undefined when it leads somewhere. */
function brokenLink(file: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // https:, mailto: …: not a file of this repository
  const [pathPart = '', anchor] = target.split('#');
  const resolved = pathPart === '' ? file : path.resolve(path.dirname(file), decodeURIComponent(pathPart));
  const where = `${rel(file)}: ${target}`;
  if (!resolved.startsWith(`${ROOT_DIR}${path.sep}`) && resolved !== ROOT_DIR) return `${where} leads out of the repository`;
  let isFile;
  try {
    isFile = statSync(resolved).isFile();
  } catch {
    return `${where}: ${rel(resolved)} does not exist`;
  }
  if (anchor === undefined) return undefined;
  if (!isFile || !resolved.endsWith('.md')) return `${where}: an anchor into what is not a Markdown page`;
  return anchors(resolved).has(anchor) ? undefined : `${where}: ${rel(resolved)} has no heading whose anchor is #${anchor}`;
}

/** The `npm run` scripts a page names, anywhere in it. */
function npmScripts(text: string): string[] {
  return [...text.matchAll(/\bnpm run ([a-z][\w:.-]*)/g)].map((m) => m[1]!.replace(/[.:-]+$/, ''));
}

/** Every name the configuration knows, or the project's files name as something else. */
function knownNames(): Set<string> {
  const known = new Set([...envExampleNames(), ...namesReadByCode().keys(), ...Object.keys(NOT_VARIABLES)]);
  // What the compose file and the deployment's scripts set or read (PostgREST's PGRST_*, the replica's entrypoint).
  const deploy = [path.join(ROOT_DIR, 'docker-compose.yml'), ...readdirSync(path.join(ROOT_DIR, 'scripts', 'deploy')).map((f) => path.join(ROOT_DIR, 'scripts', 'deploy', f))];
  for (const file of deploy) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/\$\{?([A-Z][A-Z0-9_]*)|^\s+([A-Z][A-Z0-9_]*):/gm)) known.add((m[1] ?? m[2])!);
  }
  // Constants of the code a page names by name (STACK_DEFAULTS, SLOT_WAL_CAP): code, not variables.
  for (const dir of Object.keys(ROOMS)) {
    for (const f of readdirSync(path.join(ROOT_DIR, dir), { recursive: true, encoding: 'utf8' })) {
      if (!f.endsWith('.ts') || f.split(path.sep).includes('node_modules')) continue;
      for (const m of readFileSync(path.join(ROOT_DIR, dir, f), 'utf8').matchAll(/\bconst\s+([A-Z][A-Z0-9_]+)\s*[=:]/g)) known.add(m[1]!);
    }
  }
  return known;
}

describe('the README and the docs', () => {
  const all = pages();

  it('read every page under docs/, the index and the kept pages among them', () => {
    for (const page of ['docs/README.md', 'docs/scale-out.md', 'docs/witness.md', 'docs/audit.md', CONFIGURATION_REL]) {
      expect(all.map(rel)).toContain(page);
    }
  });

  it('make anchors as GitHub does', () => {
    expect(githubSlug('8. A database that fails over by itself')).toBe('8-a-database-that-fails-over-by-itself');
    expect(githubSlug("Add a witness to the log's policy (for the operator)")).toBe('add-a-witness-to-the-logs-policy-for-the-operator');
    expect(githubSlug('What `check` verifies')).toBe('what-check-verifies');
    expect(githubSlug('Audits: each night bound to the chain transfers that paid it')).toBe('audits-each-night-bound-to-the-chain-transfers-that-paid-it');
    expect(githubSlug('A — B [link](x.md)')).toBe('a--b-link');
  });

  it('link only to files that exist and to anchors their pages have', () => {
    const broken = all.flatMap((file) => links(readFileSync(file, 'utf8')).map((target) => brokenLink(file, target))).filter(Boolean);
    expect(broken).toEqual([]);
    // The checker finds what it checks: the README links into docs/, and an anchor that is not there fails.
    expect(links(readFileSync(README, 'utf8'))).toContain('docs/README.md');
    expect(brokenLink(README, 'docs/scale-out.md#no-such-heading')).toMatch(/has no heading/);
    expect(brokenLink(README, 'docs/no-such-page.md')).toMatch(/does not exist/);
  });

  it('name only npm scripts that package.json has', () => {
    const unknown = all.flatMap((file) => npmScripts(readFileSync(file, 'utf8')).filter((s) => !SCRIPTS.includes(s)).map((s) => `${rel(file)}: npm run ${s}`));
    expect(unknown).toEqual([]);
    expect(npmScripts('run `npm run writer -- check`, then npm run docs:config.')).toEqual(['writer', 'docs:config']);
  });

  it('name only environment variables that the configuration knows', () => {
    const known = knownNames();
    const unknown = all.flatMap((file) => [...new Set(readFileSync(file, 'utf8').match(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g) ?? [])]
      .filter((name) => !known.has(name)).map((name) => `${rel(file)}: ${name}`));
    expect(unknown, 'a variable .env.example lacks (or a name to add to NOT_VARIABLES, saying what it is)').toEqual([]);
  });

  it('show the configuration table as `npm run docs:config` makes it from .env.example and the defaults', () => {
    expect(readFileSync(CONFIGURATION_PAGE, 'utf8'), `run \`npm run docs:config\` and commit ${CONFIGURATION_REL}`).toBe(configurationPage());
    const page = readFileSync(CONFIGURATION_PAGE, 'utf8');
    const missing = [...envExampleNames()].filter((name) => !page.includes(`| \`${name}\` |`));
    expect(missing, 'variables of .env.example without a row').toEqual([]);
  });

  it('describe every command of package.json in the commands reference', () => {
    const commands = readFileSync(path.join(DOCS, 'reference', 'commands.md'), 'utf8');
    const named = new Set([...npmScripts(commands), ...[...commands.matchAll(/\bnpm (start|test)\b/g)].map((m) => m[1]!)]);
    // pre- scripts are npm's hooks of the commands they name.
    expect(SCRIPTS.filter((s) => !s.startsWith('pre') && !named.has(s))).toEqual([]);
  });
});

describe('the map of the rooms', () => {
  it('opens the contributing page: one row a room, as tests/support/rooms.ts says', () => {
    const page = readFileSync(path.join(DOCS, 'contributing.md'), 'utf8');
    const map = /<!-- rooms:[^>]*-->\n([\s\S]*?)\n<!-- \/rooms -->/.exec(page);
    expect(map?.[1]).toBe(roomsTable());
    expect(page.indexOf('<!-- rooms:')).toBeLessThan(page.indexOf('\n## ', page.indexOf('## The rooms') + 1));
  });

  it('opens each room\'s entry file: its first comment says what the room holds and what it may import', () => {
    const words = (text: string) => text.replace(/\s+/g, ' ').trim();
    const wrong = Object.entries(ROOMS).filter(([name, room]) => {
      const lines = readFileSync(path.join(ROOT_DIR, room.entry), 'utf8').split('\n');
      const comment = lines.slice(0, lines.findIndex((l) => !l.startsWith('//'))).map((l) => l.replace(/^\/\/ ?/, '')).join(' ');
      return !words(comment).startsWith(words(roomLine(name)));
    }).map(([name, room]) => `${room.entry} opens without: // ${roomLine(name)}`);
    expect(wrong).toEqual([]);
  });
});

describe('the README', () => {
  const lines = readFileSync(README, 'utf8').split('\n');

  it('is a doorway: at most 150 lines, with the two commands as CI runs them in its first 40', () => {
    expect(lines.at(-1), 'ends with a newline').toBe('');
    expect(lines.length - 1).toBeLessThanOrEqual(150);
    const first = lines.slice(0, 40).join('\n');
    expect(first).toContain('```sh\nnpm start\n```');
    expect(first).toContain('```sh\nnpm test\n```');
    expect(readFileSync(path.join(ROOT_DIR, '.ci', 'run'), 'utf8')).toMatch(/^npm test$/m);
  });

  it('shows the picture of the page, with alt text, made by `npm run docs:screenshot`', () => {
    const image = /!\[([^\]]{20,})\]\(docs\/images\/page\.png\)/.exec(lines.join('\n'));
    expect(image, 'an image of docs/images/page.png with a sentence of alt text').not.toBeNull();
    const png = readFileSync(path.join(DOCS, 'images', 'page.png'));
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect(png.length, 'small enough to commit').toBeLessThan(400 * 1024);
    expect(SCRIPTS).toContain('docs:screenshot');
  });

  it('links every next step into docs/', () => {
    const targets = links(lines.join('\n'));
    for (const page of ['docs/tutorial/live-account.md', 'docs/how-to/https-and-boot.md', 'docs/how-to/call-the-api.md', 'docs/how-to/verify.md',
      'docs/scale-out.md', CONFIGURATION_REL, 'docs/how-to/backup-restore.md', 'docs/how-to/upgrade.md', 'docs/contributing.md']) {
      expect(targets).toContain(page);
    }
  });
});
