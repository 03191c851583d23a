// The whole stack's memory as `npm start` runs it on the default settings: every process it runs, npm's
// own included, read from /proc/<pid>/smaps_rollup. PSS (proportional set size) counts a page shared by
// several processes once in all, split among them, so the sum is what the stack takes from the
// machine; RSS counts shared pages in every process that maps them, so its sum overstates.
// https://docs.kernel.org/filesystems/proc.html (smaps_rollup, Pss)
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ROOT_DIR } from '../config/checkout.ts';
import { freePort, procStat } from '../stack/processes.ts';
import { freeNodePorts } from '../stack/ephemeral.ts';

export interface ProcessMemory { pid: number; name: string; pss_mb: number; rss_mb: number }
export interface Footprint { processes: ProcessMemory[]; pss_mb: number; rss_mb: number }

const MB = 1_000_000;

/** `pid` and every process below it, found through each process's parent in /proc. */
function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const ppid = procStat(Number(entry))?.ppid;
    if (ppid !== undefined) children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
  }
  const tree: number[] = [];
  const visit = (p: number) => { tree.push(p); for (const child of children.get(p) ?? []) visit(child); };
  visit(pid);
  return tree;
}

/** What a process is, in a few words: its program and the script or role it runs. */
function processName(pid: number): string {
  const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  const program = path.basename(argv[0] ?? '?');
  if (program === 'node' || program === 'npm') {
    const script = argv.slice(1).find((a) => !a.startsWith('-'));
    return `${program} ${script ? path.relative(ROOT_DIR, script) || script : ''}`.trim();
  }
  return argv.join(' ').replace(/\s+/g, ' ').slice(0, 60);
}

/** The memory of `pid`'s whole process tree now. */
export function footprint(pid: number): Footprint {
  const processes: ProcessMemory[] = [];
  for (const p of processTree(pid)) {
    try {
      const rollup = readFileSync(`/proc/${p}/smaps_rollup`, 'utf8');
      const kib = (field: string) => Number(rollup.match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'))?.[1] ?? 0);
      processes.push({ pid: p, name: processName(p), pss_mb: (kib('Pss') * 1024) / MB, rss_mb: (kib('Rss') * 1024) / MB });
    } catch { /* gone meanwhile, or a kernel thread without mappings */ }
  }
  const sum = (key: 'pss_mb' | 'rss_mb') => processes.reduce((s, p) => s + p[key], 0);
  return { processes, pss_mb: sum('pss_mb'), rss_mb: sum('rss_mb') };
}

export interface NpmStart {
  /** npm's own process: the root of the tree `npm start` runs. */
  npm: ChildProcess;
  siteUrl: string;
  apiUrl: string;
  anonKey: string;
  stop(): Promise<void>;
}

/**
 * `npm start` as a user runs it, on the default settings, except for free ports and a data directory
 * and .env of its own (ENV_FILE), so it runs beside a developer's own stack. Resolves once it says it
 * is running.
 */
export async function startNpm(log: (line: string) => void = () => {}): Promise<NpmStart> {
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-npm-start-'));
  // Run as root, Postgres and nginx run as users of their own, who must reach the data directory.
  chmodSync(dir, 0o755);
  const ports: Record<string, string> = { ...await freeNodePorts(), POSTGRES_PORT: String(await freePort()) };
  const envFile = path.join(dir, '.env');
  writeFileSync(envFile, `DATA_DIR=${path.join(dir, 'data')}\n${Object.entries(ports).map(([k, v]) => `${k}=${v}`).join('\n')}\n`);
  const npm = spawn('npm', ['start', '--silent'], { cwd: ROOT_DIR, env: { ...process.env, ENV_FILE: envFile }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const ready = new Promise<void>((resolve, reject) => {
    const take = (chunk: Buffer) => {
      output += chunk.toString();
      for (const line of chunk.toString().split('\n')) if (line.trim()) log(line);
      if (output.includes('is running (Ctrl-C stops it)')) resolve();
    };
    npm.stdout!.on('data', take);
    npm.stderr!.on('data', take);
    npm.on('exit', (code) => reject(new Error(`npm start exited (${code}) before it was running:\n${output.slice(-2000)}`)));
  });
  await ready;
  const anonKey = readFileSync(envFile, 'utf8').match(/^ANON_KEY=(.+)$/m)![1]!;
  return {
    npm,
    siteUrl: `http://127.0.0.1:${ports.SITE_PORT}`,
    apiUrl: `http://127.0.0.1:${ports.API_PORT}`,
    anonKey,
    async stop() {
      // npm does not pass SIGTERM on; the start script stops everything it runs on its own SIGTERM.
      const start = processTree(npm.pid!).find((p) => processName(p).endsWith('stack/start.ts'));
      const exited = new Promise((resolve) => npm.once('exit', resolve));
      if (start) process.kill(start, 'SIGTERM');
      await Promise.race([exited, sleep(60_000)]);
      if (npm.exitCode === null) npm.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * `total` requests spread over the kinds users send, a few at a time: the cached records on both hosts,
 * the history, and MCP tool calls.
 */
export async function mixedRequests(stack: NpmStart, total: number, concurrency = 16): Promise<void> {
  const key = { apikey: stack.anonKey };
  const mcp = (name: string) => ({
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } }),
  });
  const kinds: [string, RequestInit][] = [
    [`${stack.siteUrl}/api/stats`, {}],
    [`${stack.apiUrl}/rest/v1/rpc/landing_stats`, { headers: key }],
    [`${stack.siteUrl}/api/history`, {}],
    [`${stack.apiUrl}/rest/v1/rpc/landing_history`, { headers: key }],
    [`${stack.siteUrl}/mcp`, mcp('get_stats')],
    [`${stack.siteUrl}/mcp`, mcp('get_history')],
    [`${stack.siteUrl}/`, {}],
  ];
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    for (let i = next++; i < total; i = next++) {
      const [url, init] = kinds[i % kinds.length]!;
      const res = await fetch(url, init);
      if (res.status !== 200) throw new Error(`${init.method ?? 'GET'} ${url} answered HTTP ${res.status}`);
      await res.arrayBuffer();
    }
  }));
}

/** The targets: the idle stack within a 1 GB machine's share, and no more than this much growth under load. */
export const FOOTPRINT_TARGET = { idlePssMb: 300, growth: 0.1, idleSeconds: 60, requests: 100_000 };

export interface FootprintReport { idle: Footprint; loaded: Footprint; requests: number; growth: number }

/** `npm start`, idle for a minute, then under `FOOTPRINT_TARGET.requests` mixed requests: the stack's memory at each. */
export async function measureFootprint(progress: (line: string) => void): Promise<FootprintReport> {
  const stack = await startNpm();
  try {
    progress(`  npm start is running; idle for ${FOOTPRINT_TARGET.idleSeconds} s …`);
    await sleep(FOOTPRINT_TARGET.idleSeconds * 1000);
    const idle = footprint(stack.npm.pid!);
    progress(`  ${FOOTPRINT_TARGET.requests.toLocaleString()} mixed requests …`);
    await mixedRequests(stack, FOOTPRINT_TARGET.requests);
    const loaded = footprint(stack.npm.pid!);
    return { idle, loaded, requests: FOOTPRINT_TARGET.requests, growth: loaded.pss_mb / idle.pss_mb - 1 };
  } finally {
    await stack.stop();
  }
}

/** The footprint section: prints each process's PSS and RSS and the sums, idle and after load; returns the targets missed. */
export async function footprintSection(): Promise<{ report: FootprintReport; missed: string[] }> {
  console.log(`Memory of the whole stack as \`npm start\` runs it (every process, npm's own included; MB = 10^6 bytes): ${FOOTPRINT_TARGET.idleSeconds} s after start, then after ${FOOTPRINT_TARGET.requests.toLocaleString()} mixed requests (cached records on both hosts, history, MCP, the page).`);
  const report = await measureFootprint((line) => console.log(line));
  const { idle, loaded } = report;
  console.log('| process | idle PSS MB | idle RSS MB | loaded PSS MB | loaded RSS MB |');
  console.log('|---|---|---|---|---|');
  const after = new Map(loaded.processes.map((p) => [p.pid, p]));
  for (const p of idle.processes) {
    const l = after.get(p.pid);
    console.log(`| ${p.name} (${p.pid}) | ${p.pss_mb.toFixed(1)} | ${p.rss_mb.toFixed(1)} | ${l?.pss_mb.toFixed(1) ?? 'gone'} | ${l?.rss_mb.toFixed(1) ?? 'gone'} |`);
  }
  for (const l of loaded.processes) if (!idle.processes.some((p) => p.pid === l.pid)) console.log(`| ${l.name} (${l.pid}, new) | | | ${l.pss_mb.toFixed(1)} | ${l.rss_mb.toFixed(1)} |`);
  console.log(`| **sum** | **${idle.pss_mb.toFixed(1)}** | ${idle.rss_mb.toFixed(1)} | **${loaded.pss_mb.toFixed(1)}** | ${loaded.rss_mb.toFixed(1)} |`);
  const missed: string[] = [];
  if (idle.pss_mb > FOOTPRINT_TARGET.idlePssMb) missed.push(`idle stack ${idle.pss_mb.toFixed(1)} MB PSS (target ≤ ${FOOTPRINT_TARGET.idlePssMb} MB)`);
  if (report.growth > FOOTPRINT_TARGET.growth) missed.push(`stack PSS grew ${(report.growth * 100).toFixed(1)} % under ${FOOTPRINT_TARGET.requests.toLocaleString()} requests (target ≤ ${FOOTPRINT_TARGET.growth * 100} %)`);
  console.log(`Idle ${idle.pss_mb.toFixed(1)} MB PSS (target ≤ ${FOOTPRINT_TARGET.idlePssMb}); after load ${loaded.pss_mb.toFixed(1)} MB (${(report.growth * 100).toFixed(1)} %, target ≤ ${FOOTPRINT_TARGET.growth * 100} %).\n`);
  return { report, missed };
}
