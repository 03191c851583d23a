// Imports run one way, between the rooms of the house: each top-level folder of product code is a
// room, and ROOMS (tests/support/rooms.ts) says what each may import. The imports are the TypeScript
// compiler's own account of why each file is in the program (--explainFiles), so type-only imports,
// re-exports and dynamic import() count like any other; an import between two rooms that no line
// allows fails, and so does a room no line names, and any circle of imports; and no module is longer
// than one person reads in one sitting.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../config/checkout.ts';
import { ROOMS, TEST_FOLDERS_BESIDE_ROOMS } from './support/rooms.ts';

/** What one person reads in one sitting. */
const MAX_MODULE_LINES = 300;

const roomOf = (file: string): string => file.split('/')[0]!;

/** The top-level folders that hold TypeScript git knows of (tracked, or new and not ignored), tests apart: each must be a room. */
function productRooms(): string[] {
  const known = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.ts'], { cwd: ROOT_DIR, encoding: 'utf8' }).split('\n').filter((f) => f.includes('/'));
  return [...new Set(known.map(roomOf))].filter((room) => room !== 'tests').sort();
}

/** What is wrong with one import, or undefined when it runs the right way. */
function violation(from: string, to: string): string | undefined {
  const room = ROOMS[roomOf(from)];
  if (!room) return `${from}: no line of ROOMS says what ${roomOf(from)}/ may import; add one to tests/support/rooms.ts`;
  if (roomOf(to) !== roomOf(from) && !room.imports.includes(roomOf(to))) return `${from} imports ${to}`;
  return undefined;
}

function productFiles(): string[] {
  return Object.keys(ROOMS).flatMap((dir) => readdirSync(path.join(ROOT_DIR, dir), { recursive: true, encoding: 'utf8' }).map((f) => `${dir}/${f}`))
    .filter((f) => f.endsWith('.ts') && !f.split('/').includes('node_modules'))
    .sort();
}

/** Every import among the project's files, [importer, imported], and the files the compiler read. */
function compilerImports(): { edges: [string, string][]; files: Set<string> } {
  const text = execFileSync(path.join(ROOT_DIR, 'node_modules', '.bin', 'tsc'), ['--noEmit', '-p', 'tsconfig.json', '--explainFiles', '--listFilesOnly'], { cwd: ROOT_DIR, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const edges: [string, string][] = [];
  const files = new Set<string>();
  let current: string | undefined;
  for (const line of text.split('\n')) {
    if (line && !line.startsWith(' ')) {
      current = line.trim();
      files.add(current);
      continue;
    }
    const via = /^\s+Imported via (['"]).+?\1 from file '([^']+)'/.exec(line);
    if (via && current && !current.includes('node_modules/')) edges.push([via[2]!, current]);
  }
  return { edges, files };
}

/** The circles among `edges`: each as the files on it, found by a depth-first search's back edges. */
function circles(edges: [string, string][]): string[][] {
  const next = new Map<string, string[]>();
  for (const [from, to] of edges) next.set(from, [...(next.get(from) ?? []), to]);
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    stack.push(file);
    for (const to of next.get(file) ?? []) {
      if (state.get(to) === 'open') found.push(stack.slice(stack.indexOf(to)));
      else if (!state.has(to)) visit(to);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of [...next.keys()].sort()) if (!state.has(file)) visit(file);
  return found;
}

describe('the layering of imports', () => {
  const { edges, files } = compilerImports();
  const product = productFiles();
  const productEdges = edges.filter(([from, to]) => product.includes(from) && product.includes(to));

  it('names every room of the house, and reads every product file and the imports among them', () => {
    expect(productRooms()).toEqual(Object.keys(ROOMS).sort());
    expect(product.filter((f) => !files.has(f))).toEqual([]);
    // The compiler's account was understood: a known import is among those read.
    expect(edges).toContainEqual(['edge/serve.ts', 'edge/app.ts']);
    expect(edges).toContainEqual(['edge/routes/page.ts', 'edge/page/html.ts']);
    expect(productEdges.length).toBeGreaterThan(100);
  });

  it('mirrors the rooms in the tests: each folder of tests/ is a room\'s, or holds what the tests share', () => {
    const folders = readdirSync(path.join(ROOT_DIR, 'tests'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
    expect(folders.filter((f) => !(f in ROOMS) && !TEST_FOLDERS_BESIDE_ROOMS.includes(f))).toEqual([]);
  });

  it('keeps every hand-written module, tests and tools included, to one sitting: at most 300 lines', () => {
    const modules = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.ts', '*.go', '*.sh', '*.js', '*.mjs'], { cwd: ROOT_DIR, encoding: 'utf8' }).split('\n').filter(Boolean);
    expect(modules.length).toBeGreaterThan(300);
    const long = modules.map((file) => ({ file, lines: readFileSync(path.join(ROOT_DIR, file), 'utf8').split('\n').length - 1 })).filter(({ lines }) => lines > MAX_MODULE_LINES);
    expect(long).toEqual([]);
  });

  it('finds no import against the layering', () => {
    expect(productEdges.map(([from, to]) => violation(from, to)).filter(Boolean)).toEqual([]);
  });

  it('finds no circle of imports', () => {
    expect(circles(productEdges)).toEqual([]);
  });

  it('lets a room import only rooms listed before it, so the rooms themselves form no circle', () => {
    const order = Object.keys(ROOMS);
    expect(Object.entries(ROOMS).flatMap(([room, { imports }]) => imports.filter((to) => !(to in ROOMS) || order.indexOf(to) >= order.indexOf(room)).map((to) => `${room} -> ${to}`))).toEqual([]);
  });

  it('would refuse each kind of import the layering forbids', () => {
    expect(violation('contract/texts/rules.ts', 'edge/config.ts')).toBeDefined();
    expect(violation('config/config.ts', 'contract/paths.ts')).toBeDefined();
    expect(violation('site/render/render.ts', 'config/config.ts')).toBeDefined();
    expect(violation('site/render/render.ts', 'edge/mcp.ts')).toBeDefined();
    expect(violation('edge/app.ts', 'site/render/locations.ts')).toBeDefined();
    expect(violation('stack/nginx.ts', 'edge/warm.ts')).toBeDefined();
    expect(violation('writer/cli.ts', 'stack/processes.ts')).toBeDefined();
    expect(violation('audit/owner.ts', 'writer/log-signer.ts')).toBeDefined();
    expect(violation('audit/check.ts', 'verify/site.ts')).toBeDefined();
    expect(violation('verify/cli.ts', 'contract/tlog/note.ts')).toBeDefined();
    expect(violation('log-reader/notes.ts', 'verify/options.ts')).toBeDefined();
    expect(violation('witness/server.ts', 'writer/witnessing.ts')).toBeDefined();
    expect(violation('newroom/x.ts', 'config/config.ts')).toMatch(/no line/);
    expect(violation('stack/start.ts', 'writer/writer.ts')).toBeUndefined();
    expect(violation('edge/routes/page.ts', 'edge/page/html.ts')).toBeUndefined();
    expect(circles([['a', 'b'], ['b', 'c'], ['c', 'a']])).toEqual([['a', 'b', 'c']]);
    expect(circles([['a', 'b'], ['b', 'c'], ['a', 'c']])).toEqual([]);
  });
});
