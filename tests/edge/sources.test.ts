// What the edge's source files may contain and import: no public path typed by hand (every one comes
// from the paths table in contract/paths.ts), and the page's renderers (edge/page/) a leaf that
// imports the contract and each other only, so the edge depends on the page and never the reverse.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { API_PATHS, EDGE_PATHS, SITE_PATHS } from '../../contract/paths.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const PATHS_FILE = 'contract/paths.ts';

function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => path.join(dir, f))
    .sort();
}

/** Keywords after which a slash begins a regular expression, not a division. */
const REGEX_AFTER_WORDS = new Set(['return', 'typeof', 'case', 'in', 'of', 'void', 'throw', 'delete', 'new', 'yield', 'await', 'else', 'do']);

interface Literal {
  text: string;
  line: number;
  /** The code just before the literal. */
  before: string;
  /** A template literal's piece between two substitutions. */
  between?: boolean;
}

/**
 * The text of every string literal and every literal piece of a template literal in TypeScript
 * source, with the code just before it. Comments and regular expression literals are skipped: a
 * slash starts a regex where an operand is expected, that is after anything but a name, a number or
 * a closing bracket, or after a keyword such as return (enough for this code base; the tests below
 * check it on known source and on the paths table itself).
 */
export function stringLiterals(source: string): Literal[] {
  const found: Literal[] = [];
  const lineAt = (at: number) => source.slice(0, at).split('\n').length;
  // Open template literals: the brace depth of their ${ } when code resumes inside them.
  const templates: number[] = [];
  let depth = 0;
  let i = 0;
  /** Whether a slash at `at` is an operand (a regex) rather than a division: not after a value. */
  const startsRegex = (at: number) => {
    const before = source.slice(0, at).trimEnd();
    const word = /[\w$]+$/.exec(before)?.[0];
    if (word) return REGEX_AFTER_WORDS.has(word);
    return !/[)\]]$/.test(before);
  };
  const readTemplatePiece = (start: number) => {
    // From just after ` or }, up to ` or ${.
    let j = start;
    let text = '';
    const piece = (between: boolean) => found.push({ text, line: lineAt(start), before: source.slice(Math.max(0, start - 30), start), between });
    while (j < source.length) {
      const ch = source[j]!;
      if (ch === '\\') { text += source.slice(j, j + 2); j += 2; continue; }
      if (ch === '`') { piece(false); return { end: j + 1, open: false }; }
      if (ch === '$' && source[j + 1] === '{') { piece(source[start - 1] === '}'); return { end: j + 2, open: true }; }
      text += ch;
      j++;
    }
    throw new Error('unterminated template literal');
  };
  while (i < source.length) {
    const ch = source[i]!;
    const next = source[i + 1];
    if (ch === '/' && next === '/') { i = source.indexOf('\n', i); if (i < 0) break; continue; }
    if (ch === '/' && next === '*') { i = source.indexOf('*/', i + 2) + 2; continue; }
    if (ch === '\'' || ch === '"') {
      let j = i + 1;
      let text = '';
      while (source[j] !== ch) {
        if (source[j] === '\\') { text += source.slice(j, j + 2); j += 2; continue; }
        if (j >= source.length || source[j] === '\n') throw new Error(`unterminated string at line ${lineAt(i)}`);
        text += source[j];
        j++;
      }
      found.push({ text, line: lineAt(i), before: source.slice(Math.max(0, i - 30), i) });
      i = j + 1;
      continue;
    }
    if (ch === '`') {
      const { end, open } = readTemplatePiece(i + 1);
      if (open) { templates.push(depth); depth++; }
      i = end;
      continue;
    }
    if (ch === '{') { depth++; i++; continue; }
    if (ch === '}') {
      depth--;
      if (templates.length && templates.at(-1) === depth) {
        templates.pop();
        const { end, open } = readTemplatePiece(i + 1);
        if (open) { templates.push(depth); depth++; }
        i = end;
        continue;
      }
      i++;
      continue;
    }
    if (ch === '/' && startsRegex(i)) {
      // A regular expression literal: to its closing slash, minding classes and escapes.
      let j = i + 1;
      let inClass = false;
      while (j < source.length && (inClass || source[j] !== '/')) {
        if (source[j] === '\\') j++;
        else if (source[j] === '[') inClass = true;
        else if (source[j] === ']') inClass = false;
        j++;
      }
      i = j + 1;
      continue;
    }
    i++;
  }
  return found;
}

const TABLE_PATHS = new Set<string>([...Object.values(SITE_PATHS), ...Object.values(API_PATHS), ...Object.values(EDGE_PATHS)]);

/** A separator handed to a string method. */
const SEPARATOR_ARGUMENT = /\.(split|join|indexOf|lastIndexOf|startsWith|endsWith|includes|replace|replaceAll)\([^()]*$/;
/** A path within prose or markup: after a space, a quote, "(", "=", "," or ">", up to a space, a quote, ")", ",", "<", "?", "#", ";", or a full stop or colon that ends a sentence. */
const PATH_IN_TEXT = /(?:^|[\s'"`(=,>])(\/[\w.~%\-/]+)(?=$|[\s'"`),<?#;]|[.:](?:\s|$))/g;
/** The home page within prose or markup: "/" as an attribute's value or ending a clause ("linked from /."). */
const HOME_IN_TEXT = /(?:^|[\s'"=])\/(?=['"]|[.,;:)](?:\s|$))/;

/**
 * The table's paths a literal states: the whole literal, or a path within its text. A lone "/" that
 * joins two values or is handed to a string method is a separator, not the home page.
 */
function pathsIn({ text, before, between }: Literal): string[] {
  if (text === SITE_PATHS.HOME && (between || SEPARATOR_ARGUMENT.test(before))) return [];
  if (TABLE_PATHS.has(text)) return [text];
  const stated = [...text.matchAll(PATH_IN_TEXT)].map((m) => m[1]!).filter((p) => TABLE_PATHS.has(p));
  return HOME_IN_TEXT.test(text) ? [...stated, SITE_PATHS.HOME] : stated;
}

describe('the literal scanner', () => {
  it('finds strings and template pieces, and skips comments and regular expressions', () => {
    const found = stringLiterals([
      "// a comment with '/api/stats'",
      "const a = '/x' + \"y\"; /* '/z' */ const r = /'[/]'/g; const d = 4 / 2 / 1;",
      "function f(v) { return /\"/.test(v) ? (v) / 2 : [v][0] / 2; }",
      'const t = `one ${a + `two ${b}`} three`;',
    ].join('\n')).map((l) => l.text);
    expect(found).toEqual(['/x', 'y', 'one ', 'two ', '', ' three']);
  });

  it('reads every path the table types as a literal in contract/paths.ts', () => {
    const literals = stringLiterals(readFileSync(path.join(ROOT, PATHS_FILE), 'utf8')).map((l) => l.text);
    // The two asset names are computed: one carries the bundle's version, the other its bytes' digest.
    const typed = [...TABLE_PATHS].filter((p) => p !== SITE_PATHS.REDOC_BUNDLE && p !== SITE_PATHS.API_DOCS_SCRIPT);
    expect(typed.length).toBeGreaterThan(30);
    for (const p of typed) expect(literals, p).toContain(p);
  });

  it('tells a path in prose from a media type, a closing tag or a separator', () => {
    const at = (text: string, before = '') => pathsIn({ text, line: 1, before });
    expect(at('GET /api/health reports the status.')).toEqual(['/api/health']);
    expect(at('<a href="/">home</a>')).toEqual(['/']);
    expect(at('/log/')).toEqual(['/log/']);
    expect(at('text/markdown; charset=utf-8')).toEqual([]);
    expect(at('the documents linked from /.')).toEqual(['/']);
    expect(at('"/>')).toEqual([]);
    expect(at('n/a')).toEqual([]);
    expect(at('tile/<L>/<N>[.p/<W>]')).toEqual([]);
    expect(at('/', 'path.split(')).toEqual([]);
    expect(at('/', ".replace(/_/g, ")).toEqual([]);
    expect(pathsIn({ text: '/', line: 1, before: '', between: true })).toEqual([]);
  });
});

describe('the edge and the contract', () => {
  it('take every public path from the paths table, typing none by hand', () => {
    const files = [...sources('edge'), ...sources('contract').filter((f) => f !== PATHS_FILE)];
    expect(files.length).toBeGreaterThan(30);
    const typed = files.flatMap((file) => stringLiterals(readFileSync(path.join(ROOT, file), 'utf8'))
      .flatMap((literal) => pathsIn(literal).map((p) => `${file}:${literal.line}: ${p}`)));
    expect(typed).toEqual([]);
  });
});

describe("the page's renderers", () => {
  it('import only the contract and each other', () => {
    const files = sources('edge/page');
    expect(files.length).toBeGreaterThan(3);
    const outside = files.flatMap((file) => [...readFileSync(path.join(ROOT, file), 'utf8').matchAll(/^import\s[^;]*?from\s+'([^']+)'/gms)]
      .map((m) => m[1]!)
      .filter((spec) => spec.startsWith('.') && !spec.startsWith('./') && !spec.startsWith('../../contract/'))
      .map((spec) => `${file} imports ${spec}`));
    expect(outside).toEqual([]);
  });
});
