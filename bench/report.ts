// What the benchmark writes besides its console report: the table of docs/scale-out.md.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export interface Row {
  name: string;
  rps: number;
  p99_ms: number;
  /** The path this row is compared with (its static twin, or another path) and the ratio to it. */
  reference?: string;
  ratio?: number;
}

const DOCS_FILE = path.join(import.meta.dirname, '..', 'docs', 'scale-out.md');
const DOCS_MARKERS = ['<!-- bench table: written by `npm run bench -- --docs` -->', '<!-- end of bench table -->'] as const;

/** docs/scale-out.md's table of per-node figures, between its markers, rewritten from a run. */
export function writeDocsTable(rows: Row[], method: string) {
  const text = readFileSync(DOCS_FILE, 'utf8');
  const [open, close] = DOCS_MARKERS.map((marker) => text.indexOf(marker));
  if (open! < 0 || close! < open!) throw new Error(`${DOCS_FILE} lacks its bench table markers.`);
  const lines = rows.map((r) => `| ${r.name} | ${r.rps.toLocaleString('en-US')} | ${r.ratio === undefined ? '' : `${r.ratio.toFixed(3)} of ${r.reference}`} | ${r.p99_ms.toFixed(2)} |`);
  const table = [
    `Measured ${new Date().toISOString().slice(0, 10)}: ${method}`,
    '',
    '| path (one 2-vCPU node, wrk and server sharing it) | req/s | ratio | p99 ms |',
    '|---|---|---|---|',
    ...lines,
  ];
  writeFileSync(DOCS_FILE, `${text.slice(0, open! + DOCS_MARKERS[0].length)}\n${table.join('\n')}\n${text.slice(close!)}`);
  console.log(`Rewrote the table of ${path.relative(process.cwd(), DOCS_FILE)}.`);
}
