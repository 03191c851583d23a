// Compression on both hosts: every text document and answer is sent gzip- or brotli-encoded to a
// client that accepts it (the static documents from their precompressed copies), byte-identical
// once decoded, with Vary: Accept-Encoding; the two cached hot paths keep one cache entry per
// encoding, so a compressed answer is a cache hit, not a compression per request.
import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, inject, it } from 'vitest';
import { SITE_DOCUMENTS } from '../contract/documents.ts';
import { API_PATHS, SITE_PATHS } from '../contract/paths.ts';
import { findBrotliModules } from '../stack/nginx-config.ts';

// Brotli is sent where nginx has its modules (CI and `npm start` as root install them).
const ENCODINGS = findBrotliModules().length ? ['gzip', 'br'] : ['gzip'];

interface Raw { status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }

/** A request with exactly the headers given (fetch would add and undo Accept-Encoding itself). */
function raw(url: string, headers: Record<string, string> = {}): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const decode = (r: Raw) => r.headers['content-encoding'] === 'gzip' ? gunzipSync(r.body) : r.headers['content-encoding'] === 'br' ? brotliDecompressSync(r.body) : r.body;

describe('compression', () => {
  it('every static text document of the site host comes gzip and brotli encoded, identical once decoded', async () => {
    const { siteUrl } = inject('stack');
    const documents = SITE_DOCUMENTS.filter((d) => d.file && d.path !== SITE_PATHS.SIG_DIRECTORY);
    for (const doc of documents) {
      const identity = await raw(siteUrl + doc.path);
      expect(identity.status, doc.path).toBe(200);
      expect(identity.headers['content-encoding'], doc.path).toBeUndefined();
      for (const encoding of ENCODINGS) {
        const encoded = await raw(siteUrl + doc.path, { 'accept-encoding': encoding });
        expect(encoded.headers['content-encoding'], `${doc.path} ${encoding}`).toBe(encoding);
        expect(String(encoded.headers.vary), doc.path).toMatch(/Accept-Encoding/i);
        expect(decode(encoded).equals(identity.body), `${doc.path} ${encoding}`).toBe(true);
      }
    }
  });

  it('the page, /api/health and the API host\'s health are compressed as they are sent', async () => {
    const { siteUrl, apiUrl, anonKey } = inject('stack');
    for (const [url, headers] of [[`${siteUrl}/`, {}], [`${siteUrl}${SITE_PATHS.SITE_HEALTH}`, {}], [`${apiUrl}${API_PATHS.HEALTH}`, { apikey: anonKey }]] as const) {
      const res = await raw(url, { ...headers, 'accept-encoding': 'gzip' });
      expect(res.status, url).toBe(200);
      // Bodies under 256 bytes are not worth it (health is near that line when data is absent).
      if (decode(res).length >= 256) expect(res.headers['content-encoding'], url).toBe('gzip');
      JSON.parse(url.endsWith('/') ? '{}' : decode(res).toString());
    }
  });

  it('the cached hot paths keep a cache entry per encoding: the second compressed answer comes from it', async () => {
    const { siteUrl, apiUrl, anonKey } = inject('stack');
    for (const [url, headers] of [[`${apiUrl}${API_PATHS.STATS}`, { apikey: anonKey }], [`${siteUrl}${SITE_PATHS.SITE_STATS}`, {}]] as const) {
      const identity = await raw(url, headers);
      expect(identity.status, url).toBe(200);
      const record = JSON.parse(identity.body.toString());
      for (const encoding of ENCODINGS) {
        await raw(url, { ...headers, 'accept-encoding': encoding });
        const second = await raw(url, { ...headers, 'accept-encoding': `${encoding}, identity;q=0.5` });
        expect(second.headers['content-encoding'], `${url} ${encoding}`).toBe(encoding);
        // From that coding's entry: a hit, or (had an earlier test left it expired) its stale copy
        // while the first request's refresh is still under way.
        expect(second.headers['x-cache-status'], `${url} ${encoding}`).toMatch(/^(HIT|UPDATING)$/);
        expect(second.headers.vary, url).toBe('Accept-Encoding');
        expect(JSON.parse(decode(second).toString()).updated_at).toBe(record.updated_at);
        // A compressed variant's validator is the weak form of the record's.
        expect(second.headers.etag).toBe(`W/${String(identity.headers.etag).replace(/^W\//, '')}`);
      }
      // A client refusing gzip (q=0) gets the identity answer.
      const refused = await raw(url, { ...headers, 'accept-encoding': 'gzip;q=0' });
      expect(refused.headers['content-encoding']).toBeUndefined();
      expect(refused.body.equals(identity.body) || JSON.parse(refused.body.toString()).updated_at === record.updated_at).toBe(true);
    }
  });
});
