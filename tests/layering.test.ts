// Imports run one way, between the rooms of the house: each top-level folder of product code is a
// room, and ROOMS below says what each may import. The imports are the TypeScript compiler's own
// account of why each file is in the program (--explainFiles), so type-only imports, re-exports and
// dynamic import() count like any other; an import between two rooms that no line allows fails, and
// so does a room no line names, and any circle of imports.
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../config/config.ts';

/** Every room, what it holds, and the rooms it may import (itself always). */
export const ROOMS: Record<string, { holds: string; imports: string[] }> = {
  // The ground floor: shared formats, and what every program on the owner's machine reads.
  contract: { holds: 'the formats every part shares: records, paths, texts, the log\'s and the audit\'s formats', imports: [] },
  config: { holds: 'the configuration, read from the environment over .env over the embedded defaults', imports: [] },
  'db-client': { holds: 'the connector to Postgres, with libpq\'s multi-host and session rules', imports: [] },
  // The verifier's reading of a transparency log, written from the standards: Node's modules only.
  'log-reader': { holds: 'a follower\'s reading of the log from the standards alone: notes, tiles, proofs, state, policies, witness listings', imports: [] },
  // The programs: none imports another.
  edge: { holds: 'the edge server: every answer of both hosts, MCP and A2A, signed', imports: ['contract'] },
  site: { holds: 'the site\'s documents and nginx templates, rendered for a deployment', imports: ['contract'] },
  writer: { holds: 'the writer: fetches the account\'s figures, stores them, signs the log, asks witnesses', imports: ['contract', 'config', 'db-client'] },
  witness: { holds: 'a transparency-log witness that others run', imports: ['contract'] },
  verify: { holds: 'the verifier followers run: a site\'s answers, nights and audits against its log', imports: ['log-reader'] },
  audit: { holds: 'the audit tool: the owner\'s disclosures and the auditor\'s check against the chain', imports: ['contract', 'config', 'db-client', 'log-reader'] },
  // The machinery above the programs: it starts and supervises them (the writer runs inside `npm start`).
  stack: { holds: 'the machinery that runs the service: Postgres and pg_auto_failover, PostgREST, nginx, TLS, processes, keys, backups, the systemd unit', imports: ['contract', 'config', 'db-client', 'writer'] },
  bench: { holds: 'the benchmark: private stacks measured side by side with their static twins', imports: ['contract', 'config', 'stack'] },
  // Build and documentation helpers: they read every part, and nothing imports them.
  scripts: { holds: 'build, deployment and documentation helpers', imports: ['contract', 'config', 'db-client', 'stack', 'writer', 'edge', 'site'] },
};

/** The top-level folders that hold product code: each must be a room. */
function productRooms(): string[] {
  return readdirSync(ROOT_DIR).filter((name) => !name.startsWith('.') && !['node_modules', 'tests', 'docs', 'sql', 'supabase'].includes(name)
    && statSync(path.join(ROOT_DIR, name)).isDirectory()).sort();
}

const roomOf = (file: string): string => file.split('/')[0]!;

/** What is wrong with one import, or undefined when it runs the right way. */
function violation(from: string, to: string): string | undefined {
  const room = ROOMS[roomOf(from)];
  if (!room) return `${from}: no line of ROOMS says what ${roomOf(from)}/ may import; add one to this test`;
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

  it('finds no import against the layering', () => {
    expect(productEdges.map(([from, to]) => violation(from, to)).filter(Boolean)).toEqual([]);
  });

  it('finds no circle of imports', () => {
    expect(circles(productEdges)).toEqual([]);
  });

  it('lets no room import one above it, so the rooms themselves form no circle', () => {
    const roomEdges = Object.entries(ROOMS).flatMap(([room, { imports }]) => imports.map((to): [string, string] => [room, to]));
    expect(circles(roomEdges)).toEqual([]);
  });

  it('would refuse each kind of import the layering forbids', () => {
    expect(violation('contract/texts/rules.ts', 'edge/config.ts')).toBeDefined();
    expect(violation('config/config.ts', 'contract/paths.ts')).toBeDefined();
    expect(violation('site/render/render.ts', 'config/config.ts')).toBeDefined();
    expect(violation('site/render/render.ts', 'edge/mcp.ts')).toBeDefined();
    expect(violation('edge/app.ts', 'site/render/locations.ts')).toBeDefined();
    expect(violation('stack/nginx.ts', 'edge/warm.ts')).toBeDefined();
    expect(violation('writer/cli.ts', 'stack/processes.ts')).toBeDefined();
    expect(violation('audit/owner.ts', 'writer/config.ts')).toBeDefined();
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
