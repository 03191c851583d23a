// The load generator: wrk runs against one path, and a window that asks for every cached path in turn.
import { execFile, execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

/** Connections of every run: wrk -t2 -c64. */
export const CONNECTIONS = 64;

export interface Path {
  name: string;
  url: string;
  headers?: Record<string, string>;
  /** A Lua script (for a POST body). */
  script?: string;
  /** One connection, one thread: the time one request takes, not a throughput under load. */
  alone?: boolean;
}

export interface Run { rps: number; requests: number; p50: number; p99: number; max: number }

function wrkArgs(p: Path, seconds: number, threads = 2, connections = CONNECTIONS): string[] {
  const [t, c] = p.alone ? [1, 1] : [threads, connections];
  const args = [`-t${t}`, `-c${c}`, `-d${seconds}s`, '--latency', '--timeout', '5s'];
  for (const [k, v] of Object.entries(p.headers ?? {})) args.push('-H', `${k}: ${v}`);
  if (p.script) args.push('-s', p.script);
  return [...args, p.url];
}

function parseWrk(name: string, out: string): Run {
  const ms = (label: string) => {
    const m = out.match(new RegExp(`^\\s*${label}\\s+([\\d.]+)(us|ms|s)`, 'm'));
    if (!m) throw new Error(`wrk output without ${label}:\n${out}`);
    return Number(m[1]) * ({ us: 0.001, ms: 1, s: 1000 } as Record<string, number>)[m[2]!]!;
  };
  const non2xx = out.match(/Non-2xx or 3xx responses: (\d+)/);
  if (non2xx) throw new Error(`${name}: ${non2xx[1]} error responses; the measurement would be meaningless.`);
  return {
    rps: Number(out.match(/Requests\/sec:\s+([\d.]+)/)![1]), requests: Number(out.match(/(\d+) requests in/)![1]),
    p50: ms('50%'), p99: ms('99%'), max: ms('Latency\\s+[\\d.]+(?:us|ms|s)\\s+[\\d.]+(?:us|ms|s)'),
  };
}

export function wrk(p: Path, seconds: number): Run {
  return parseWrk(p.name, execFileSync('wrk', wrkArgs(p, seconds), { encoding: 'utf8', timeout: (seconds + 20) * 1000 }));
}

/**
 * Every path in turn for `seconds`, as one window: one wrk per host (each path is a different request
 * of its Lua script), run side by side with the connections split between them. The window's figures
 * are the worse host's.
 */
export async function everyPathInTurn(paths: Path[], dir: string, seconds: number): Promise<Omit<Run, 'rps'>> {
  const byOrigin = new Map<string, Path[]>();
  for (const p of paths) byOrigin.set(new URL(p.url).origin, [...(byOrigin.get(new URL(p.url).origin) ?? []), p]);
  const runs = await Promise.all([...byOrigin].map(async ([origin, list], i) => {
    const requests = list.map((p) => {
      const url = new URL(p.url);
      const headers = Object.entries(p.headers ?? {}).map(([k, v]) => `[${JSON.stringify(k)}] = ${JSON.stringify(v)}`).join(', ');
      return `  { path = ${JSON.stringify(url.pathname + url.search)}, headers = { ${headers} } },`;
    });
    const script = path.join(dir, `in-turn-${i}.lua`);
    writeFileSync(script, `local list = {\n${requests.join('\n')}\n}\nlocal i = 0\nrequest = function()\n  i = i % #list + 1\n  return wrk.format("GET", list[i].path, list[i].headers)\nend\n`);
    const args = wrkArgs({ name: origin, url: origin, script }, seconds, 1, CONNECTIONS / byOrigin.size);
    const { stdout } = await promisify(execFile)('wrk', args, { encoding: 'utf8', timeout: (seconds + 20) * 1000 });
    return parseWrk(origin, stdout);
  }));
  const worst = (pick: (r: Run) => number) => Math.max(...runs.map(pick));
  return { requests: runs.reduce((n, r) => n + r.requests, 0), p50: worst((r) => r.p50), p99: worst((r) => r.p99), max: worst((r) => r.max) };
}
