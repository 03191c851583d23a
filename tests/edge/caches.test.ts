// How the edge loads and keeps what it reads: the next-load and single-flight caches, the passes that
// keep the gateways warm, and the memo of answers. No stack needed beyond what the run starts anyway.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { NextLoad, SingleFlight } from '../../edge/cache.ts';
import { createAnswerMemo, cutTemplate, fillTemplate, templateChars } from '../../edge/answer-memo.ts';
import type { Figures } from '../../edge/figures.ts';
import { gatewayAt } from '../../edge/gateway.ts';
import { keepWarm, warmOnce } from '../../edge/warm.ts';

describe('NextLoad', () => {
  it('answers each caller with a load that began after it asked, shared by all who asked meanwhile', async () => {
    const started: number[] = [];
    const releases: (() => void)[] = [];
    let fail = false;
    const loads = new NextLoad(async () => {
      const n = started.push(started.length + 1);
      await new Promise<void>((r) => releases.push(r));
      if (fail) throw new Error('upstream down');
      return n;
    });
    const first = loads.get();
    // Asked while load 1 runs: they share load 2, which starts only when load 1 is over.
    const during = [loads.get(), loads.get(), loads.get()];
    expect(started).toEqual([1]);
    releases[0]!();
    expect(await first).toBe(1);
    await new Promise((r) => setTimeout(r, 0));
    expect(started).toEqual([1, 2]);
    // Asked while load 2 runs: load 3.
    const later = loads.get();
    releases[1]!();
    expect(await Promise.all(during)).toEqual([2, 2, 2]);
    await new Promise((r) => setTimeout(r, 0));
    expect(started).toEqual([1, 2, 3]);
    // A failure reaches the callers of that load; the next caller starts another.
    fail = true;
    releases[2]!();
    await expect(later).rejects.toThrow('upstream down');
    fail = false;
    const after = loads.get();
    expect(started).toEqual([1, 2, 3, 4]);
    releases[3]!();
    expect(await after).toBe(4);
  });
});

describe('SingleFlight', () => {
  it('shares one load among concurrent callers, caches it for the TTL, and does not cache failures', async () => {
    let now = 0;
    let loads = 0;
    let fail = false;
    const cache = new SingleFlight(async () => {
      loads += 1;
      await new Promise((r) => setTimeout(r, 10));
      if (fail) throw new Error('upstream down');
      return loads;
    }, 1000, { now: () => now });
    expect(await Promise.all(Array.from({ length: 50 }, () => cache.get()))).toEqual(Array(50).fill(1));
    expect(loads).toBe(1);
    now = 999;
    expect(await cache.get()).toBe(1);
    now = 1000;
    fail = true;
    const failures = await Promise.allSettled([cache.get(), cache.get()]);
    expect(failures.map((f) => f.status)).toEqual(['rejected', 'rejected']);
    expect(loads).toBe(2);
    fail = false;
    expect(await cache.get()).toBe(3);
  });

  it('answers a stale value at once within its window while one load refreshes it, and keeps it when that load fails', async () => {
    let now = 0;
    let loads = 0;
    let fail = false;
    let release: () => void = () => {};
    const cache = new SingleFlight(async () => {
      loads += 1;
      await new Promise<void>((r) => { release = r; });
      if (fail) throw new Error('upstream down');
      return loads;
    }, 1000, { staleMs: 5000, now: () => now });
    const first = cache.get();
    release();
    expect(await first).toBe(1);
    now = 1500;
    // Past the TTL: answered from the old value, with one refresh under way for all of them.
    expect(await Promise.all([cache.get(), cache.get(), cache.get()])).toEqual([1, 1, 1]);
    expect(loads).toBe(2);
    release();
    await new Promise((r) => setTimeout(r, 0));
    expect(await cache.get()).toBe(2);
    now = 3000;
    fail = true;
    expect(await cache.get()).toBe(2);
    release();
    await new Promise((r) => setTimeout(r, 0));
    // The refresh failed: still the old value within the window, and another refresh is tried.
    expect(await cache.get()).toBe(2);
    expect(loads).toBe(4);
    release();
    await new Promise((r) => setTimeout(r, 0));
    // Past the window the caller waits for the load, and sees its failure.
    now = 1500 + 1000 + 5000;
    const waited = cache.get();
    release();
    await expect(waited).rejects.toThrow('upstream down');
  });
});

describe('keeping the gateways warm', () => {
  const PERIOD_MS = 40;
  const passes = (n: number) => new Promise((resolve) => setTimeout(resolve, PERIOD_MS * (n + 1) + PERIOD_MS / 2));
  const listen = (port = 0) => new Promise<Server>((resolve) => {
    const server = createServer((_req, res) => res.end());
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
  const close = (server: Server) => new Promise((resolve) => server.close(resolve));

  it('reports a failure once it has lasted two passes, once while it lasts, and again after a recovery', async () => {
    const gateway = await listen();
    const { port } = gateway.address() as AddressInfo;
    const reports: string[][] = [];
    let asked = 0;
    gateway.on('request', () => asked++);
    const stop = keepWarm([{ gateway: gatewayAt(`http://127.0.0.1:${port}`), path: '/api/stats', headers: { 'accept-encoding': 'gzip' } }], PERIOD_MS, 1000, (failed) => reports.push(failed));
    try {
      await vi.waitFor(() => expect(asked).toBeGreaterThanOrEqual(2), { timeout: 5000 });
      expect(reports).toEqual([]);
      await close(gateway);
      await vi.waitFor(() => expect(reports).toHaveLength(1), { timeout: 5000 });
      expect(reports[0]![0]).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/api/stats \\(gzip\\): `));
      await passes(4);
      expect(reports).toHaveLength(1);
      const back = await listen(port);
      let askedAgain = 0;
      back.on('request', () => askedAgain++);
      await vi.waitFor(() => expect(askedAgain).toBeGreaterThanOrEqual(2), { timeout: 5000 });
      await close(back);
      await vi.waitFor(() => expect(reports).toHaveLength(2), { timeout: 5000 });
    } finally {
      stop();
    }
  });

  it('reaches a gateway on a unix socket, and names the socket when it cannot', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'gateway-socket-'));
    const socket = path.join(dir, 'api.sock');
    const seen: { host?: string; url?: string; encoding?: string }[] = [];
    const gateway = createServer((req, res) => {
      seen.push({ host: req.headers.host, url: req.url, encoding: req.headers['accept-encoding'] });
      res.end();
    });
    await new Promise<void>((resolve) => gateway.listen(socket, resolve));
    try {
      const targets = [{ gateway: gatewayAt(`unix:${socket}`), path: '/rest/v1/rpc/landing_stats', headers: { 'accept-encoding': 'br' } }];
      expect(await warmOnce(targets, 1000)).toEqual([]);
      expect(seen).toEqual([{ host: 'localhost', url: '/rest/v1/rpc/landing_stats', encoding: 'br' }]);
      await close(gateway);
      const [failed, ...more] = await warmOnce(targets, 1000);
      expect(more).toEqual([]);
      expect(failed).toMatch(new RegExp(`^unix:${socket.replace(/[.]/g, '\\.')}/rest/v1/rpc/landing_stats \\(br\\): `));
    } finally {
      if (gateway.listening) await close(gateway);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says nothing of a gateway that fails a single pass', async () => {
    const gateway = await listen();
    const { port } = gateway.address() as AddressInfo;
    const reports: string[][] = [];
    let up = true;
    gateway.removeAllListeners('request');
    // Refuses every other request: each failing pass is followed by one that succeeds.
    gateway.on('request', (_req, res) => {
      res.statusCode = up ? 200 : 503;
      up = !up;
      res.end();
    });
    const stop = keepWarm([{ gateway: gatewayAt(`http://127.0.0.1:${port}`), path: '/api/stats', headers: { 'accept-encoding': 'identity' } }], PERIOD_MS, 1000, (failed) => reports.push(failed));
    try {
      await passes(6);
      expect(reports).toEqual([]);
    } finally {
      stop();
      await close(gateway);
    }
  });
});

describe('the answers kept for requests asked again', () => {
  it('cuts an answer where each of its own values stands exactly once, and puts new ones in place', () => {
    const text = '{"jsonrpc":"2.0","id":7,"result":{"messageId":"m-1","parts":[]}}';
    const template = cutTemplate(text, { id: '"id":7', messageId: '"messageId":"m-1"' })!;
    expect(fillTemplate(template, { id: '"id":"next"', messageId: '"messageId":"m-2"' })).toBe('{"jsonrpc":"2.0","id":"next","result":{"messageId":"m-2","parts":[]}}');
    expect(templateChars(template)).toBe(text.length - '"id":7'.length - '"messageId":"m-1"'.length);
    // A value that stands twice, or not at all, leaves its place unknown: nothing is cut.
    expect(cutTemplate('{"id":7,"data":{"id":7}}', { id: '"id":7' })).toBeUndefined();
    expect(cutTemplate('{"id":8}', { id: '"id":7' })).toBeUndefined();
  });

  it('holds at most 64 answers and 4 Mi characters, the oldest going first, and none made while a figure could not be read', async () => {
    const figure = async () => ({ value: {}, body: '{}', etag: '"same"' });
    const figures = { stats: figure, history: figure, health: figure, log: figure } as unknown as Figures;
    const memo = createAnswerMemo<string>(figures, (answer) => answer.length);
    const keep = async (key: string, answer: string) => {
      const recording = memo.recording(figures);
      await recording.figures.stats();
      recording.keep(key, answer);
    };
    for (let i = 0; i < 65; i++) await keep(`request ${i}`, `answer ${i}`);
    expect(await memo.find('request 0')).toBeUndefined();
    expect(await memo.find('request 1')).toBe('answer 1');
    expect(await memo.find('request 64')).toBe('answer 64');
    // Two answers of 3 Mi characters do not fit together: the first goes, and the small ones kept
    // before it went first.
    const big = (c: string) => c.repeat(3 * 1024 * 1024);
    await keep('big a', big('a'));
    expect(await memo.find('request 64')).toBe('answer 64');
    await keep('big b', big('b'));
    expect(await memo.find('big a')).toBeUndefined();
    expect(await memo.find('request 64')).toBeUndefined();
    expect((await memo.find('big b'))?.length).toBe(3 * 1024 * 1024);
    // An answer larger than the whole memo is not kept.
    await keep('huge', 'h'.repeat(4 * 1024 * 1024 + 1));
    expect(await memo.find('huge')).toBeUndefined();
    expect(await memo.find('big b')).toBeDefined();
    const failing = memo.recording({ ...figures, stats: () => Promise.reject(new Error('down')) });
    await failing.figures.stats().catch(() => undefined);
    failing.keep('after a failure', 'answer');
    expect(await memo.find('after a failure')).toBeUndefined();
  });
});
