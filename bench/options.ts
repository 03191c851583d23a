// The benchmark's command line: `npm run bench -- [--footprint] [--json FILE] [--docs]`, read strictly,
// since a mistyped option must not start minutes of measuring; and how long each path is measured.
import { readCommandLine } from '../config/command-line.ts';

export const DURATION_S = Number(process.env.BENCH_SECONDS || 8);
export const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const USAGE = `Usage: npm run bench -- [--footprint] [--json FILE] [--docs]
  (no option)   every public path against its reference, the cached paths' tails, the edge's and the
                whole stack's memory, and the SQL functions' timings, on loopback; each path for
                BENCH_ROUNDS rounds (default 3) of BENCH_SECONDS seconds (default 8) of wrk
  --footprint   the whole stack's memory alone
  --json FILE   also write the report as JSON, to compare runs
  --docs        also rewrite the table of docs/scale-out.md from this run
  --help        print this help and measure nothing`;
const options = readCommandLine(USAGE, { options: { json: { type: 'string' }, docs: { type: 'boolean' }, footprint: { type: 'boolean' } }, allowPositionals: false }).values;
/** `npm run bench -- --json FILE` also writes the report as JSON, to compare runs. */
export const JSON_FILE = options.json;
/** `npm run bench -- --docs` also rewrites the table of docs/scale-out.md from this run. */
export const WRITE_DOCS = options.docs ?? false;
/** `npm run bench -- --footprint` measures the stack's memory alone. */
export const FOOTPRINT_ONLY = options.footprint ?? false;
