// The edge app's routes under /log/, asked through app.request() with no port: tiles and checkpoints
// from a holder whose view is behind, the log's page, and the audit attestations.
import { describe, expect, it } from 'vitest';
import { readAttestation } from '../../contract/audit/attestation.ts';
import { logOrigin, SITE_PATHS } from '../../contract/paths.ts';
import { app, appWith, cfg, fixedUpstream } from '../support/fixed-edge.ts';
import { auditOf, fixedLog, fixedStats, signedAttestation, type AttestationFacts } from '../support/records.ts';

describe('the log, as a holder whose view is behind serves it', () => {
  it('reads the log anew before it says a tile or checkpoint the service has shown is not there, and never lets such a 404 be kept', async () => {
    const full = await fixedLog(cfg.siteUrl, { witnessed: true });
    // What the holder read last: the log one checkpoint ago.
    const behind = { ...full, entries: full.entries.slice(0, -1), checkpoints: full.checkpoints.slice(0, -1), log_checkpoint: { ...full.log_checkpoint!, size: full.entries.length - 1 } };
    let reads = 0;
    const worker = appWith({ ...fixedUpstream, log: async () => (reads++ === 0 ? behind : full) });
    const size = full.entries.length;
    expect((await worker.request(SITE_PATHS.LOG_CHECKPOINT)).status).toBe(200);
    expect(reads).toBe(1);
    const tile = await worker.request(`${SITE_PATHS.LOG_TILES}entries/000.p/${size}`);
    expect(tile.status).toBe(200);
    expect(reads).toBe(2);
    const checkpoint = await worker.request(`${SITE_PATHS.LOG_CHECKPOINTS}${size}`);
    expect(checkpoint.status).toBe(200);
    expect((await checkpoint.text()).split('\n').slice(0, 2)).toEqual([logOrigin(cfg, false), String(size)]);
    // Beyond what the log holds even now: a 404 that no cache may keep.
    const missing = await worker.request(`${SITE_PATHS.LOG_TILES}entries/000.p/${size + 1}`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('cache-control')).toBe('no-store');
    // A tile within its own view needs no read.
    const before = reads;
    expect((await worker.request(`${SITE_PATHS.LOG_TILES}entries/000.p/${size - 1}`)).status).toBe(200);
    expect(reads).toBe(before);
  });
});

describe('the log\'s page', () => {
  it('gives the same account of the log as the landing page, then the log\'s origin and verifier key', async () => {
    const page = await (await app.request(SITE_PATHS.LOG)).text();
    const landing = await (await app.request(SITE_PATHS.HOME)).text();
    const summary = (html: string) => /<ul id="log-summary">([\s\S]*?)<\/ul>/.exec(html)?.[1];
    expect(summary(page)).toBeDefined();
    expect(summary(page)).toBe(summary(landing));
    expect(summary(page)).toContain('not witnessed: nobody else holds these checkpoints');
    const log = await fixedLog(cfg.siteUrl);
    expect(page).toContain(`<code>${logOrigin(cfg, false)}</code>`);
    expect(page).toContain(log.vkey!.split('+')[0]);
  });
});

describe("the log's audit attestations", () => {
  /** An attestation of three nights drawn from the fixed log's checkpoint, two of which matched (the fixed log's night i is its entry i). */
  const facts = async (): Promise<AttestationFacts> => {
    const log = await fixedLog(cfg.siteUrl);
    const { origin, size, root } = log.log_checkpoint!;
    return {
      origin, logKey: log.vkey!, size, root, opening: size, nonce: 'a-nonce-of-the-auditor.0123456789abcdef', date: '2025-03-20', auditor: 'auditor.example',
      nights: [{ date: '2025-03-02', index: 1, pass: true }, { date: '2025-03-07', index: 6, pass: true }, { date: '2025-03-12', index: 11, pass: false }],
    };
  };

  it('answers {"audits": []} before any is published, with a strong validator that If-None-Match meets with a 304', async () => {
    const res = await app.request(SITE_PATHS.LOG_AUDITS);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('cache-control')).toBe('public, max-age=60');
    expect(await res.text()).toBe('{"audits":[]}\n');
    const etag = res.headers.get('etag')!;
    expect(etag).toMatch(/^"[^"]+"$/);
    const again = await app.request(SITE_PATHS.LOG_AUDITS, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(again.headers.get('etag')).toBe(etag);
    expect(await again.text()).toBe('');
    for (const method of ['POST', 'PUT']) expect((await app.request(SITE_PATHS.LOG_AUDITS, { method })).status).toBe(405);
  });

  it('serves every attestation verbatim, oldest first, marked whether the policy lists its auditor, and reads the log anew once the stats name an audit its holder does not hold', async () => {
    const base = await fixedLog(cfg.siteUrl);
    const first = await facts();
    const second: AttestationFacts = { ...first, opening: first.opening + 1, nights: [{ date: '2025-03-04', index: 3, pass: true }], date: '2025-03-21' };
    // The first by a key the policy does not list, served all the same; the second by a listed one.
    const published = [
      { note: await signedAttestation(first), published_at: '2025-03-20T07:00:00Z', listed: false },
      { note: await signedAttestation(second), published_at: '2025-03-21T07:00:00Z', listed: true },
    ];
    let reads = 0;
    const worker = appWith({
      ...fixedUpstream,
      stats: async () => fixedStats('polymarket', auditOf(second, published[1]!.published_at)),
      // Read first before the attestations were published, then after.
      log: async () => (reads++ === 0 ? base : { ...base, audits: published }),
    });
    const before = await worker.request(SITE_PATHS.LOG_AUDITS);
    expect(await before.json()).toEqual({ audits: [] });
    expect(reads).toBe(1);
    const stats = await (await worker.request(SITE_PATHS.SITE_STATS)).json();
    expect(stats.audit).toEqual({
      date: '2025-03-21', auditor: 'auditor.example', chosen: 'drawn', result: 'pass', nights_checked: 1, nights_matched: 1,
      checkpoint_size: base.entries.length, published_at: '2025-03-21T07:00:00Z',
    });
    expect(reads).toBe(2);
    const after = await worker.request(SITE_PATHS.LOG_AUDITS);
    expect(await after.text()).toBe(`${JSON.stringify({ audits: published })}\n`);
    expect(after.headers.get('etag')).not.toBe(before.headers.get('etag'));
    // The note as its auditor signed it: the body, a blank line, the signature line.
    const served = ((await (await worker.request(SITE_PATHS.LOG_AUDITS)).json()) as { audits: { note: string; listed: boolean }[] }).audits;
    expect(served.map((a) => a.listed)).toEqual([false, true]);
    const note = served[0]!.note;
    expect(note).toBe(published[0]!.note);
    expect(note.split('\n').slice(0, 3)).toEqual(['public-stats audit attestation v2', `origin ${logOrigin(cfg, false)}`, `log-key ${first.logKey}`]);
    expect(note.split('\n').slice(8, 12)).toEqual(['night 2025-03-02 1 pass', 'night 2025-03-07 6 pass', 'night 2025-03-12 11 fail', 'result fail']);
    expect(note).toMatch(/\n\n\u2014 auditor\.example [A-Za-z0-9+/]+=*\n$/);
    // A signed attestation as any reader checks it: its signature by the key its body names.
    expect(await readAttestation(note)).toMatchObject({ auditor: 'auditor.example', opening: first.opening, drawn: { k: 3, nonce: first.nonce }, result: 'fail' });
    // Named and held: no further read.
    await worker.request(SITE_PATHS.SITE_STATS);
    expect(reads).toBe(2);
    // The log's page lists them.
    expect(await (await worker.request(SITE_PATHS.LOG)).text()).toContain(`<dt>Audits</dt><dd><a href="${cfg.siteUrl}${SITE_PATHS.LOG_AUDITS}">${cfg.siteUrl}${SITE_PATHS.LOG_AUDITS}</a>: 2 attestations, each signed by its auditor&#39;s key</dd>`);
  });

  it('leads to the demo log\'s attestations while the figures are demo data and no real log was signed', async () => {
    const demoLog = { ...(await fixedLog(cfg.siteUrl)), demo: true };
    const demo = appWith({ ...fixedUpstream, stats: async () => fixedStats('demo'), log: async () => demoLog });
    const res = await demo.request(SITE_PATHS.LOG_AUDITS);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(`${SITE_PATHS.LOG_DEMO}audits`);
    expect(await (await demo.request(`${SITE_PATHS.LOG_DEMO}audits`)).json()).toEqual({ audits: [] });
  });
});
