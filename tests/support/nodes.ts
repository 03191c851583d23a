// Two nodes of one service (each its own nginx, edge and PostgREST, behind the same public URLs)
// must answer every cached record alike: the same bytes in every coding, the same validators, and
// signatures that verify for the public URL a client asked (each node signs with its own `created`).
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import { API_PATHS, SITE_PATHS } from '../../contract/paths.ts';
import { findBrotliModules } from '../../stack/nginx-config.ts';
import type { Config } from '../../config/config.ts';
import { rawGet, verifies, type DirectoryKey, type RawAnswer } from './signatures.ts';

/** Every cached record of both hosts. */
export const CACHED_PATHS: { host: 'api' | 'site'; path: string }[] = [
  { host: 'api', path: API_PATHS.STATS },
  { host: 'api', path: API_PATHS.HISTORY },
  { host: 'api', path: API_PATHS.LOG },
  { host: 'site', path: SITE_PATHS.SITE_STATS },
  { host: 'site', path: SITE_PATHS.SITE_HISTORY },
  { host: 'site', path: SITE_PATHS.SITE_HISTORY_CSV },
];

/** Brotli is sent where nginx has its modules (CI and `npm start` as root install them). */
export const CODINGS = ['identity', 'gzip', ...(findBrotliModules().length ? ['br'] : [])];

/** Headers a node may not choose for itself: they describe the bytes, which every node must share. */
const SHARED_HEADERS = ['content-type', 'content-encoding', 'content-digest', 'etag', 'last-modified', 'cache-control', 'vary'];

const local = (cfg: Config, host: 'api' | 'site') => `http://${cfg.bindHost}:${host === 'api' ? cfg.apiPort : cfg.sitePort}`;

/** The answer of one node to one cached path and coding, read raw. */
function ask(cfg: Config, host: 'api' | 'site', path: string, coding: string): Promise<RawAnswer> {
  return rawGet(local(cfg, host) + path, { 'accept-encoding': coding, ...(host === 'api' ? { apikey: cfg.ANON_KEY } : {}) });
}

const same = (a: RawAnswer, b: RawAnswer) => a.status === b.status && a.body.equals(b.body) && SHARED_HEADERS.every((h) => a.headers[h] === b.headers[h]);

/**
 * Asks both nodes for every cached path in every coding and expects the same answer, and a 304 from
 * the second for the first one's ETag. Each gateway keeps its own microcache for a few seconds and
 * serves a stale entry while it refreshes it, so right after a write either node may still answer
 * with the record from before: a pair that disagrees is asked again until `settleMs` has passed.
 */
export async function expectSameAnswers(a: Config, b: Config, publicUrls: { site: string; api: string }, settleMs = 15_000): Promise<number> {
  const keys = (await (await fetch(local(a, 'site') + SITE_PATHS.SIG_DIRECTORY)).json()).keys as DirectoryKey[];
  let compared = 0;
  for (const { host, path } of CACHED_PATHS) {
    for (const coding of CODINGS) {
      const attempt = async () => {
        const [fromA, fromB] = await Promise.all([ask(a, host, path, coding), ask(b, host, path, coding)]);
        // A validator from one node is honoured by the other.
        const revalidated = await rawGet(local(b, host) + path, {
          'accept-encoding': coding, 'if-none-match': fromA.headers.etag ?? '', ...(host === 'api' ? { apikey: b.ANON_KEY } : {}),
        });
        return { fromA, fromB, revalidated };
      };
      const deadline = Date.now() + settleMs;
      let { fromA, fromB, revalidated } = await attempt();
      while (!(same(fromA, fromB) && revalidated.status === 304) && Date.now() < deadline) {
        await sleep(500);
        ({ fromA, fromB, revalidated } = await attempt());
      }
      const what = `${host} ${path} ${coding}`;
      expect(fromA.status, what).toBe(200);
      expect(fromA.headers['content-encoding'], what).toBe(coding === 'identity' ? undefined : coding);
      expect(fromB.body.equals(fromA.body), `${what}: the bodies differ`).toBe(true);
      for (const header of SHARED_HEADERS) expect(fromB.headers[header], `${what}: ${header}`).toBe(fromA.headers[header]);
      expect(fromA.headers.etag, what).toBeTruthy();
      expect(revalidated.status, `${what}: If-None-Match with the other node's ETag`).toBe(304);
      // Each node signed its own answer; both verify for the public URL the client asked.
      for (const answer of [fromA, fromB]) {
        expect(await verifies({ ...answer, url: publicUrls[host] + path }, keys), `${what}: signature`).toBe(true);
      }
      compared++;
    }
  }
  return compared;
}
