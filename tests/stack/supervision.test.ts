// The stack as a service: a killed part comes back while health keeps answering, nothing of a
// killed part lingers, a hung part is answered around within seconds, a start that was killed
// outright is cleaned up by the next one, and a part that keeps failing ends `npm start` non-zero.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../config/checkout.ts';
import { freePort } from '../../stack/processes.ts';
import type { SupervisedPart } from '../../stack/supervisor.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/** Live (not zombie) processes whose process group is `pgid`. */
function groupMembers(pgid: number): number[] {
  return readdirSync('/proc').filter((e) => /^\d+$/.test(e)).map(Number).filter((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const [state, , group] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return state !== 'Z' && Number(group) === pgid;
    } catch {
      return false;
    }
  });
}

async function until<T>(what: string, probe: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  while (Date.now() < deadline) {
    last = await probe().catch(() => undefined as T);
    if (last !== undefined && ok(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not happen within ${timeoutMs} ms (last: ${JSON.stringify(last)})`);
}

/** GET with a client-side deadline; resolves with the status, body and how long it took. */
async function timed(url: string, init: RequestInit = {}): Promise<{ status: number; body: string; ms: number; cors: string | null }> {
  const started = Date.now();
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(15_000) });
  const body = await res.text();
  return { status: res.status, body, ms: Date.now() - started, cors: res.headers.get('access-control-allow-origin') };
}

describe('a supervised stack', () => {
  let stack: TestStack;
  const siteHealth = () => timed(`${stack.cfg.siteUrl}/api/health`);
  const apiHealth = () => timed(`${stack.cfg.apiUrl}/rest/v1/rpc/landing_health`, { headers: { apikey: stack.cfg.ANON_KEY } });
  const status = (r: { body: string }) => (JSON.parse(r.body) as { status: string }).status;

  beforeAll(async () => { stack = await startTestStack({ seedDemo: true }); }, 120_000);
  afterAll(async () => { await stack?.destroy(); });

  const parts = (): [string, () => SupervisedPart][] => [
    ['postgrest', () => stack.postgrest],
    ['edge', () => stack.edge],
    ['nginx', () => stack.nginx],
    ['postgres', () => stack.db.server!],
  ];

  for (const [name, part] of parts()) {
    it(`restarts ${name} after kill -9, leaves none of its processes behind, and health answers throughout`, async () => {
      await until('health up', siteHealth, (r) => r.status === 200 && status(r) !== 'down');
      const pid = part().child!.process.pid!;
      const members = groupMembers(pid);
      expect(members).toContain(pid);
      process.kill(pid, 'SIGKILL');
      // Everything the killed process had started (nginx workers, Postgres backends) goes with it.
      await until(`${name}'s process group gone`, async () => groupMembers(pid).length, (n) => n === 0, 10_000);
      if (name !== 'nginx') {
        // The host serving health is up: it answers 200, "down" or (once the part is back) "ok".
        const during = await siteHealth();
        expect(during.status).toBe(200);
        expect(['down', 'ok', 'degraded']).toContain(status(during));
      }
      await until(`${name} restarted`, async () => part().child?.process.pid, (p) => p !== undefined && p !== pid);
      const back = await until('health up again', siteHealth, (r) => r.status === 200 && status(r) !== 'down', 60_000);
      expect(JSON.parse(back.body).data).not.toBeNull();
      expect(stack.logs.join('\n')).toContain(`${name} exited unexpectedly`);
    }, 90_000);
  }

  it('answers health within 3 s and other routes with a JSON 503 within seconds while the edge hangs', async () => {
    const pid = stack.edge.child!.process.pid!;
    process.kill(pid, 'SIGSTOP');
    try {
      const health = await siteHealth();
      expect(health.status).toBe(200);
      expect(status(health)).toBe('down');
      expect(health.ms).toBeLessThan(3000);
      for (const [url, init] of [
        [`${stack.cfg.siteUrl}/`, {}],
        [`${stack.cfg.siteUrl}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' }],
      ] as [string, RequestInit][]) {
        const res = await timed(url, init);
        expect(res.status, url).toBe(503);
        expect(res.ms, url).toBeLessThan(7000);
        expect(JSON.parse(res.body).message).toMatch(/not answering/);
        expect(res.cors).toBe('*');
      }
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    await until('health up after the edge resumes', siteHealth, (r) => status(r) !== 'down');
  }, 60_000);

  it('answers health on both hosts within 3 s while PostgREST hangs', async () => {
    const pid = stack.postgrest.child!.process.pid!;
    process.kill(pid, 'SIGSTOP');
    try {
      for (const probe of [apiHealth, siteHealth]) {
        const res = await probe();
        expect(res.status).toBe(200);
        expect(status(res)).toBe('down');
        expect(res.ms).toBeLessThan(3000);
      }
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    await until('health up after PostgREST resumes', siteHealth, (r) => status(r) !== 'down');
  }, 60_000);
});

describe('an edge with a worker per core', () => {
  let stack: TestStack;
  beforeAll(async () => { stack = await startTestStack({ seedDemo: true, env: { EDGE_WORKERS: '2' } }); }, 120_000);
  afterAll(async () => { await stack?.destroy(); });

  it('serves as a primary and two workers, and is started again whole when one of them dies', async () => {
    const primary = stack.edge.child!.process.pid!;
    // The primary and its two workers, one process group.
    expect(groupMembers(primary)).toHaveLength(3);
    const mcp = () => timed(`${stack.cfg.siteUrl}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    });
    // nginx spreads its connections over the workers; every answer is whole.
    const answers = await Promise.all(Array.from({ length: 20 }, mcp));
    for (const answer of answers) expect(answer.status).toBe(200);
    const worker = groupMembers(primary).find((pid) => pid !== primary)!;
    process.kill(worker, 'SIGKILL');
    await until('the edge\'s process group gone', async () => groupMembers(primary).length, (n) => n === 0, 10_000);
    await until('the edge restarted', async () => stack.edge.child?.process.pid, (p) => p !== undefined && p !== primary);
    const back = await until('MCP answers again', mcp, (r) => r.status === 200, 60_000);
    expect(JSON.parse(back.body).result.tools.length).toBeGreaterThan(0);
    expect(groupMembers(stack.edge.child!.process.pid!)).toHaveLength(3);
    expect(stack.logs.join('\n')).toMatch(/worker \d+ exited \(SIGKILL\); stopping the edge/);
  }, 120_000);
});

describe('npm start as a service', () => {
  let dir: string;
  let env: Record<string, string>;
  const running: ChildProcess[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'service-'));
    chmodSync(dir, 0o755);
    env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? dir, ENV_FILE: path.join(dir, 'env'), DATA_DIR: dir, NGINX_WORKERS: '1', WRITER_SOURCE: 'demo' };
    for (const name of ['API_PORT', 'SITE_PORT', 'EDGE_PORT', 'POSTGREST_PORT', 'POSTGREST_ADMIN_PORT', 'POSTGRES_PORT']) env[name] = String(await freePort());
  });
  afterAll(async () => {
    for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 3000));
    rmSync(dir, { recursive: true, force: true });
  });

  /** Starts `npm start`'s script and resolves once it says it is running; `output()` has all it said. */
  async function start(): Promise<{ child: ChildProcess; output: () => string; exited: Promise<number | null> }> {
    const child = spawn(process.execPath, [path.join(ROOT_DIR, 'stack', 'start.ts')], { cwd: ROOT_DIR, env, stdio: ['ignore', 'pipe', 'pipe'] });
    running.push(child);
    let out = '';
    child.stdout!.on('data', (c: Buffer) => { out += c.toString(); });
    child.stderr!.on('data', (c: Buffer) => { out += c.toString(); });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await until('npm start running', async () => out, (o) => o.includes('is running') || child.exitCode !== null, 120_000);
    expect(out, out).toContain('is running');
    return { child, output: () => out, exited };
  }

  const recorded = () => JSON.parse(readFileSync(path.join(dir, 'processes.json'), 'utf8')) as { name: string; pgid: number }[];

  it('after a start killed outright, the next start stops what it left running and serves', async () => {
    const first = await start();
    const groups = recorded();
    expect(groups.map((g) => g.name).sort()).toEqual(['edge', 'nginx', 'postgres', 'postgrest']);
    first.child.kill('SIGKILL');
    await first.exited;
    // Killed outright, it could stop nothing: its children still serve.
    expect(groups.every((g) => groupMembers(g.pgid).length > 0)).toBe(true);
    const second = await start();
    expect(second.output()).toMatch(/left running by an earlier start/);
    for (const g of groups) expect(groupMembers(g.pgid)).toEqual([]);
    const stats = await fetch(`http://127.0.0.1:${env.SITE_PORT}/api/stats`);
    expect(stats.status).toBe(200);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    for (const g of recorded()) expect(groupMembers(g.pgid)).toEqual([]);
  }, 240_000);

  it('keeps serving, idle, once its output pipes have closed (a parent or terminal gone), and still stops cleanly', async () => {
    const run = await start();
    const pid = run.child.pid!;
    const cpuSeconds = () => {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const [utime, stime] = stat.slice(stat.lastIndexOf(')') + 2).split(' ').slice(11, 13).map(Number);
      return (utime! + stime!) / 100;
    };
    run.child.stdout!.destroy();
    run.child.stderr!.destroy();
    // Something to say: a part dies and is restarted, which is logged to the closed pipe.
    const edge = recorded().find((g) => g.name === 'edge')!;
    process.kill(edge.pgid, 'SIGKILL');
    const before = cpuSeconds();
    await new Promise((r) => setTimeout(r, 4000));
    expect(run.child.exitCode).toBeNull();
    expect(cpuSeconds() - before).toBeLessThan(2);
    expect((await fetch(`http://127.0.0.1:${env.SITE_PORT}/api/health`)).status).toBe(200);
    const groups = recorded();
    run.child.kill('SIGTERM');
    const code = await Promise.race([run.exited, new Promise((r) => setTimeout(() => r('still running'), 30_000))]);
    if (code === 'still running') run.child.kill('SIGKILL');
    expect(code).toBe(0);
    for (const g of groups) expect(groupMembers(g.pgid)).toEqual([]);
  }, 120_000);

  it('gives up on a part that keeps dying, stops the rest and exits non-zero', async () => {
    const run = await start();
    // Every edge that comes up is killed at once: restarts in a row, none lasting a minute.
    const killed = new Set<number>();
    const killer = setInterval(() => {
      const edge = recorded().find((g) => g.name === 'edge');
      if (edge && !killed.has(edge.pgid)) {
        killed.add(edge.pgid);
        try {
          process.kill(edge.pgid, 'SIGKILL');
        } catch {
          // gone already
        }
      }
    }, 50);
    try {
      const code = await Promise.race([run.exited, new Promise((r) => setTimeout(() => r('still running'), 60_000))]);
      expect(code, run.output()).toBe(1);
      expect(run.output()).toMatch(/edge kept failing \(5 restarts in a row\); giving up: stopping/);
      expect(killed.size).toBe(6);
      for (const g of recorded()) expect(groupMembers(g.pgid)).toEqual([]);
    } finally {
      clearInterval(killer);
    }
  }, 120_000);
});
