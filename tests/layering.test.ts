// Imports run one way. The contract imports nothing of the project's; the edge and the site import
// the contract and their own files; scripts/lib imports nothing outside itself; every other part of
// scripts/ imports the contract, scripts/lib and itself, and the commands directly under scripts/
// put the parts together but import no other command. The imports are the TypeScript compiler's own
// account of why each file is in the program (--explainFiles), so type-only imports, re-exports and
// dynamic import() count like any other.
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../scripts/lib/config.ts';

const PRODUCT = ['contract', 'edge', 'site', 'scripts'];

/** What a part may import, by the part a file belongs to. */
const MAY_IMPORT: Record<string, string[]> = {
  'contract/': ['contract/'],
  'edge/': ['edge/', 'contract/'],
  'site/': ['site/', 'contract/'],
  'scripts/lib/': ['scripts/lib/'],
  'scripts/writer/': ['scripts/writer/', 'scripts/lib/', 'contract/'],
  'scripts/stack/': ['scripts/stack/', 'scripts/lib/', 'contract/'],
  'scripts/deploy/': ['scripts/deploy/', 'scripts/lib/', 'contract/'],
  'scripts/witness/': ['scripts/witness/', 'scripts/lib/', 'contract/'],
  // The verifier is written from the standards, not from the service's code: it imports only itself.
  'scripts/verify/': ['scripts/verify/'],
  // The audit opens the writer's commitments (its vault and configuration) and checks them against a
  // site's log with the verifier's own code.
  'scripts/audit/': ['scripts/audit/', 'scripts/verify/', 'scripts/writer/', 'scripts/lib/', 'contract/'],
  // A benchmark runs a private stack, as the tests do.
  'scripts/bench/': ['scripts/bench/', 'scripts/stack/', 'scripts/lib/', 'contract/'],
  // The docs describe every part: they read each part's defaults (the backup command's among them)
  // and picture the page on a private stack, as the tests do.
  'scripts/docs/': ['scripts/docs/', 'scripts/', 'scripts/stack/', 'scripts/writer/', 'scripts/lib/', 'edge/', 'site/', 'contract/'],
  // The commands: `npm start` runs the stack and the writer; `npm run witness` a witness.
  'scripts/': ['scripts/lib/', 'scripts/stack/', 'scripts/writer/', 'scripts/witness/', 'contract/'],
};

/** The part a file belongs to: its top folder, or under scripts/ its folder there (the commands lie directly in scripts/). */
function partOf(file: string): string {
  const [top, second, third] = file.split('/');
  return top === 'scripts' && third !== undefined ? `scripts/${second}/` : `${top}/`;
}

/** What is wrong with one import, or undefined when it runs the right way. */
function violation(from: string, to: string): string | undefined {
  const part = partOf(from);
  const allowed = MAY_IMPORT[part];
  if (!allowed) return `${from}: no rule says what ${part} may import; add one to this test`;
  if (!allowed.some((prefix) => (prefix === 'scripts/' ? partOf(to) === prefix : to.startsWith(prefix)))) return `${from} imports ${to}`;
  return undefined;
}

function productFiles(): string[] {
  return PRODUCT.flatMap((dir) => readdirSync(path.join(ROOT_DIR, dir), { recursive: true, encoding: 'utf8' }).map((f) => `${dir}/${f}`))
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

describe('the layering of imports', () => {
  const { edges, files } = compilerImports();
  const product = productFiles();

  it('reads every product file and the imports among them', () => {
    expect(product.filter((f) => !files.has(f))).toEqual([]);
    // The compiler's account was understood: a known import is among those read.
    expect(edges).toContainEqual(['edge/serve.ts', 'edge/app.ts']);
    expect(edges).toContainEqual(['edge/routes/page.ts', 'edge/page/html.ts']);
    expect(edges.filter(([from]) => product.includes(from)).length).toBeGreaterThan(100);
  });

  it('finds no import against the layering', () => {
    const wrong = edges.filter(([from]) => product.includes(from)).map(([from, to]) => violation(from, to)).filter(Boolean);
    expect(wrong).toEqual([]);
  });

  it('would refuse each kind of import the layering forbids', () => {
    expect(violation('contract/texts/rules.ts', 'edge/config.ts')).toBeDefined();
    expect(violation('site/render/render.ts', 'scripts/lib/config.ts')).toBeDefined();
    expect(violation('site/render/render.ts', 'edge/mcp.ts')).toBeDefined();
    expect(violation('edge/app.ts', 'site/render/locations.ts')).toBeDefined();
    expect(violation('scripts/lib/nginx.ts', 'contract/paths.ts')).toBeDefined();
    expect(violation('scripts/stack/stack.ts', 'scripts/writer/demo.ts')).toBeDefined();
    expect(violation('scripts/stack/stack.ts', 'edge/warm.ts')).toBeDefined();
    expect(violation('scripts/db-diff.ts', 'scripts/backup.ts')).toBeDefined();
    expect(violation('scripts/newpart/x.ts', 'scripts/lib/config.ts')).toMatch(/no rule/);
    expect(violation('scripts/start.ts', 'scripts/stack/stack.ts')).toBeUndefined();
    expect(violation('edge/routes/page.ts', 'edge/page/html.ts')).toBeUndefined();
  });
});
