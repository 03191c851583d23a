// Signed answers checked from outside with code we did not write: every data answer of both hosts, in
// every encoding, verifies with two RFC 9421 libraries and fails once a body byte or its request
// changes. The site URL is a relaying proxy, so what is signed is what its clients see.
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays } from '../contract/dates.ts';
import { API_PATHS, SITE_PATHS } from '../contract/paths.ts';
import type { TestStack } from './support/stack.ts';
import { rawGet, sha256Digest, verifies, verifyWithHttpMessageSig, type DirectoryKey } from './support/signatures.ts';
import { startVerifiableService, today, type VerifiableService } from './support/verifiable.ts';

let service: VerifiableService;
let stack: TestStack;
let site: string;

beforeAll(async () => {
  service = await startVerifiableService();
  ({ stack, site } = service);
}, 180_000);
afterAll(() => service?.stop());

const directoryKeys = async (): Promise<DirectoryKey[]> => (await (await fetch(site + SITE_PATHS.SIG_DIRECTORY)).json()).keys;

describe('signed answers', () => {
  const answers = (): { url: string; headers: Record<string, string> }[] => [
    { url: stack.cfg.apiUrl + API_PATHS.STATS, headers: { apikey: stack.cfg.ANON_KEY } },
    { url: stack.cfg.apiUrl + API_PATHS.HISTORY, headers: { apikey: stack.cfg.ANON_KEY } },
    { url: stack.cfg.apiUrl + API_PATHS.LOG, headers: { apikey: stack.cfg.ANON_KEY } },
    { url: site + SITE_PATHS.SITE_STATS, headers: {} },
    { url: site + SITE_PATHS.SITE_HISTORY, headers: {} },
    { url: site + SITE_PATHS.SITE_HISTORY_CSV, headers: {} },
    { url: `${site}${SITE_PATHS.SITE_HISTORY}?from=${addDays(today, -20)}&to=${addDays(today, -10)}`, headers: {} },
    { url: `${site}${SITE_PATHS.SITE_HISTORY_CSV}?to=${addDays(today, -100)}`, headers: {} },
  ];
  const brotli = existsSync('/usr/lib/nginx/modules/ngx_http_brotli_filter_module.so');

  it('every data answer, in every encoding, verifies with http-message-sig and http-message-signatures, covering what it must', async () => {
    const keys = await directoryKeys();
    for (const { url, headers } of answers()) {
      for (const encoding of ['identity', 'gzip', ...(brotli ? ['br'] : [])]) {
        const answer = await rawGet(url, { ...headers, 'accept-encoding': encoding });
        expect(answer.status, url).toBe(200);
        expect(answer.headers['content-encoding'], `${url} ${encoding}`).toBe(encoding === 'identity' ? undefined : encoding);
        expect(await verifies(answer, keys), `${url} ${encoding}`).toBe(true);
        const params = await verifyWithHttpMessageSig(answer, keys);
        expect(params).toMatchObject({ alg: 'ed25519', tag: 'public-stats', keyid: keys[0]!.kid });
        expect(params.expires).toBeUndefined();
        const input = answer.headers['signature-input']!;
        expect(input).toContain('("@status" "content-type" "content-digest" "@authority";req "@path";req');
        expect(input.includes('"@query";req')).toBe(url.includes('?'));
        // The gateway keeps the signed answer: asked again, it is the same signature.
        const again = await rawGet(url, { ...headers, 'accept-encoding': encoding });
        expect(again.headers.signature).toBe(answer.headers.signature);
      }
    }
  }, 60_000);

  it('fails once one byte of a body changes, or the request it answered was another', async () => {
    const keys = await directoryKeys();
    for (const { url, headers } of answers()) {
      const answer = await rawGet(url, { ...headers, 'accept-encoding': 'gzip' });
      const body = Buffer.from(answer.body);
      const middle = body.length >> 1;
      body[middle] = body[middle]! ^ 1;
      // The digest no longer matches; and a digest made to match the new body breaks the signature.
      expect(await verifies({ ...answer, body }, keys)).toBe(false);
      expect(await verifies({ ...answer, body, headers: { ...answer.headers, 'content-digest': sha256Digest(body) } }, keys)).toBe(false);
      expect(await verifies({ ...answer, url: url.replace('127.0.0.1', 'localhost') }, keys)).toBe(false);
      expect(await verifies({ ...answer, status: 203 }, keys)).toBe(false);
    }
  }, 60_000);
});
