// Signed answers checked without the network, by code we did not write: the RFC 9421 signature
// with http-message-sig (https://github.com/cloudflare/web-bot-auth) and with
// http-message-signatures (https://github.com/dhensby/node-http-message-signatures), each given the
// request the `;req` components come from (RFC 9421 §2.4), and the RFC 9530 Content-Digest with
// node:crypto. The signature covers the Content-Digest field, not the content, and neither library
// reads a body, so the digest is checked beside them. The key is RFC 9421's own Ed25519 test key
// (Appendix B.1.4).
import { createHash, createPrivateKey, createPublicKey, verify as ed25519Verify } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { calculateJwkThumbprint } from 'jose';
import { component, SignatureErrorCode, verifySignature, webcrypto } from 'http-message-sig';
import { createVerifier, httpbis } from 'http-message-signatures';
import { Ed25519Signer } from 'web-bot-auth/crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createAnswerSigner, type AnswerSignatureHeaders, type AnswerSigner, type SignableAnswer } from '../../edge/response-signature.ts';

// https://www.rfc-editor.org/rfc/rfc9421#appendix-B.1.4
// A published test vector, public by design: the PKCS#8 and SPKI DER of the RFC's PEM blocks.
const RFC_PRIVATE_KEY_DER = 'MC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF';
const RFC_PUBLIC_KEY_DER = 'MCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=';

const privateKey = createPrivateKey({ key: Buffer.from(RFC_PRIVATE_KEY_DER, 'base64'), format: 'der', type: 'pkcs8' });
/** As HTTP_SIG_PRIVATE_KEY holds it: PKCS#8 DER, base64url. */
const privateKeyPkcs8Base64url = privateKey.export({ type: 'pkcs8', format: 'der' }).toString('base64url');
const publicKey = createPublicKey(privateKey);
const publicJwk = publicKey.export({ format: 'jwk' }) as { kty: string; crv: string; x: string };

const CREATED = new Date('2026-03-01T12:00:00Z');
const CREATED_SECONDS = 1772366400;
/** Verifiers are told it is a minute after signing, so no check depends on the test machine's clock. */
const VERIFIED_AT = CREATED_SECONDS + 60;

const SITE = 'stats.example';
const API = 'api.stats.example';
const JSON_TYPE = 'application/json; charset=utf-8';
const CSV_TYPE = 'text/csv; charset=utf-8; header=present';
const statsJson = Buffer.from(`${JSON.stringify({ nights: 16, gross_usd: '1234.56', net_usd: '1180.02', as_of: '2026-02-28' }, null, 2)}\n`);
const historyCsv = Buffer.from(['date,gross_usd,net_usd', ...Array.from({ length: 31 }, (_, i) => `2026-01-${String(i + 1).padStart(2, '0')},${(40 + i / 4).toFixed(2)},${(38 + i / 5).toFixed(2)}`)].join('\r\n') + '\r\n');

/** An answer as a client receives it: the URL it asked, the status, every header, the body bytes as sent. */
interface Received {
  url: string;
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

interface Sample {
  name: string;
  answer: SignableAnswer;
  url: string;
  /** Sent beside the signed headers, not covered by the signature. */
  extraHeaders?: Record<string, string>;
}

const samples: Sample[] = [
  {
    name: 'identity JSON on the site host',
    answer: { status: 200, contentType: JSON_TYPE, body: statsJson, authority: SITE, path: '/api/stats', created: CREATED },
    url: `https://${SITE}/api/stats`,
  },
  {
    name: 'gzip JSON on the API host',
    answer: { status: 200, contentType: JSON_TYPE, body: gzipSync(statsJson), authority: API, path: '/rest/v1/rpc/landing_stats', created: CREATED },
    url: `https://${API}/rest/v1/rpc/landing_stats`,
    extraHeaders: { 'content-encoding': 'gzip', vary: 'Accept-Encoding' },
  },
  {
    name: 'CSV with a query',
    answer: { status: 200, contentType: CSV_TYPE, body: historyCsv, authority: SITE, path: '/api/history.csv', query: '?from=2026-01-01&to=2026-02-01', created: CREATED },
    url: `https://${SITE}/api/history.csv?from=2026-01-01&to=2026-02-01`,
  },
];

let signer: AnswerSigner;
beforeAll(async () => {
  signer = await createAnswerSigner(privateKeyPkcs8Base64url);
});

async function receive(sample: Sample): Promise<Received> {
  const signed = await signer.sign(sample.answer);
  return {
    url: sample.url,
    status: sample.answer.status,
    headers: { 'content-type': sample.answer.contentType, ...sample.extraHeaders, ...signed },
    body: Buffer.from(sample.answer.body),
  };
}

/** RFC 9530: the sha-256 of the bytes received, computed here. */
const digestMatches = (r: Received) => r.headers['content-digest'] === `sha-256=:${createHash('sha256').update(r.body).digest('base64')}:`;

const REQUIRED_PARAMETERS = ['created', 'keyid', 'alg', 'tag'];

/** http-message-sig 0.3: the related request goes in `request` (a fetch Request); throws a SignatureError on failure. */
async function verifyWithHttpMessageSig(r: Received) {
  const ed25519 = await crypto.subtle.importKey('jwk', publicJwk, { name: 'Ed25519' }, false, ['verify']);
  const required = ['@status', 'content-type', 'content-digest', component('@authority', { req: true }), component('@path', { req: true })];
  if (new URL(r.url).search) required.push(component('@query', { req: true }));
  return verifySignature({ kind: 'response', status: r.status, fields: Object.entries(r.headers).map(([name, value]) => ({ name, value })), request: new Request(r.url) }, {
    label: 'answer',
    policy: { algorithms: ['ed25519'], requiredComponents: required, requiredParameters: REQUIRED_PARAMETERS, now: VERIFIED_AT },
    resolveVerifier: (candidate) => {
      if (candidate.parameters.keyid !== signer.keyid) throw new Error(`unknown key ${String(candidate.parameters.keyid)}`);
      return webcrypto.verifier(ed25519);
    },
  });
}

/** http-message-signatures 1.0: the related request is verifyMessage's third argument; true only when the signature verifies. */
function verifyWithHttpMessageSignatures(r: Received): Promise<boolean | null> {
  return httpbis.verifyMessage({
    keyLookup: async (params) => (params.keyid === signer.keyid ? { id: signer.keyid, algs: ['ed25519'], verify: createVerifier(publicKey, 'ed25519') } : null),
    requiredParams: REQUIRED_PARAMETERS,
    // This library matches required components by name only, so "@authority" also accepts "@authority";req.
    requiredFields: ['@status', 'content-type', 'content-digest', '@authority', '@path', ...(new URL(r.url).search ? ['@query'] : [])],
    notAfter: VERIFIED_AT,
  }, { status: r.status, headers: r.headers }, { method: 'GET', url: r.url, headers: {} });
}

/** The signature fails in both libraries for the crypto check itself, not for a missing part. */
async function expectSignatureFails(r: Received) {
  await expect(verifyWithHttpMessageSig(r)).rejects.toMatchObject({ code: SignatureErrorCode.VerificationFailed });
  expect(await verifyWithHttpMessageSignatures(r)).toBe(false);
}

describe('the signing key', () => {
  it('is RFC 9421 B.1.4; keyid is its RFC 7638 thumbprint, the one the key directory lists', async () => {
    expect(publicKey.export({ type: 'spki', format: 'der' }).toString('base64')).toBe(RFC_PUBLIC_KEY_DER);
    expect(signer.keyid).toBe(await calculateJwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: publicJwk.x }, 'sha256'));
    const jwk = privateKey.export({ format: 'jwk' });
    expect(signer.keyid).toBe((await Ed25519Signer.fromJWK(jwk)).keyid);
  });
});

describe('a signed answer', () => {
  for (const sample of samples) {
    describe(sample.name, () => {
      it('carries the Content-Digest of the bytes as sent and exactly the agreed Signature-Input', async () => {
        const r = await receive(sample);
        expect(digestMatches(r)).toBe(true);
        const query = sample.answer.query ? ' "@query";req' : '';
        expect(r.headers['signature-input']).toBe(
          `answer=("@status" "content-type" "content-digest" "@authority";req "@path";req${query});created=${CREATED_SECONDS};keyid="${signer.keyid}";alg="ed25519";tag="public-stats"`,
        );
        expect(r.headers.signature).toMatch(/^answer=:[A-Za-z0-9+/]{86}==:$/);
      });

      it('verifies with http-message-sig and with http-message-signatures', async () => {
        const r = await receive(sample);
        const verified = await verifyWithHttpMessageSig(r);
        expect(verified.parameters).toEqual({ created: CREATED_SECONDS, keyid: signer.keyid, alg: 'ed25519', tag: 'public-stats' });
        expect(verified.components.map((c) => c.name)).toEqual(['@status', 'content-type', 'content-digest', '@authority', '@path', ...(sample.answer.query ? ['@query'] : [])]);
        expect(verified.components.slice(3).every((c) => c.parameters.req === true)).toBe(true);
        expect(await verifyWithHttpMessageSignatures(r)).toBe(true);
      });

      it('signs exactly the RFC 9421 §2.5 signature base written out here (node:crypto verifies)', async () => {
        const r = await receive(sample);
        const url = new URL(r.url);
        const base = [
          `"@status": ${r.status}`,
          `"content-type": ${sample.answer.contentType}`,
          `"content-digest": ${r.headers['content-digest']}`,
          `"@authority";req: ${url.host}`,
          `"@path";req: ${url.pathname}`,
          ...(sample.answer.query ? [`"@query";req: ${sample.answer.query}`] : []),
          `"@signature-params": ${r.headers['signature-input']!.slice('answer='.length)}`,
        ].join('\n');
        const signature = Buffer.from(/^answer=:([^:]+):$/.exec(r.headers.signature!)![1]!, 'base64');
        expect(ed25519Verify(null, Buffer.from(base), publicKey, signature)).toBe(true);
      });

      it('fails when one body byte changes: by its digest, and by its signature once the digest is replaced', async () => {
        const r = await receive(sample);
        const body = Buffer.from(r.body);
        body[body.length >> 1]! ^= 0x01;
        const tampered = { ...r, body };
        expect(digestMatches(tampered)).toBe(false);
        // Neither library reads the body: the signature alone still holds, the digest check is what fails.
        await expect(verifyWithHttpMessageSig(tampered)).resolves.toBeDefined();
        expect(await verifyWithHttpMessageSignatures(tampered)).toBe(true);
        const redigested = { ...tampered, headers: { ...r.headers, 'content-digest': `sha-256=:${createHash('sha256').update(body).digest('base64')}:` } };
        expect(digestMatches(redigested)).toBe(true);
        await expectSignatureFails(redigested);
      });

      it('fails for another status, path or authority', async () => {
        const r = await receive(sample);
        await expectSignatureFails({ ...r, status: 203 });
        const url = new URL(r.url);
        await expectSignatureFails({ ...r, url: `${url.origin}/api/stats2${url.search}` });
        await expectSignatureFails({ ...r, url: `https://other.example${url.pathname}${url.search}` });
        await expectSignatureFails({ ...r, url: `https://${url.host}:8443${url.pathname}${url.search}` });
      });
    });
  }

  it('with a query: fails for another query, or none', async () => {
    const r = await receive(samples[2]!);
    const url = new URL(r.url);
    await expectSignatureFails({ ...r, url: `${url.origin}${url.pathname}?from=2026-01-01&to=2026-03-01` });
    await expectSignatureFails({ ...r, url: `${url.origin}${url.pathname}` });
  });

  it('without a query: refused for a request that had one, by a verifier that requires "@query";req then', async () => {
    // The signature covers no query here, so only the verifier's policy can tell the two requests apart.
    const r = { ...(await receive(samples[0]!)), url: `${samples[0]!.url}?x=1` };
    await expect(verifyWithHttpMessageSig(r)).rejects.toMatchObject({ code: SignatureErrorCode.PolicyViolation, message: expect.stringContaining('@query') });
    await expect(verifyWithHttpMessageSignatures(r)).rejects.toThrow(/Missing required signed fields/);
  });

  it('fails for another key id or media type', async () => {
    const r = await receive(samples[0]!);
    await expectSignatureFails({ ...r, headers: { ...r.headers, 'content-type': 'text/plain' } });
    const otherKeyid = { ...r, headers: { ...r.headers, 'signature-input': r.headers['signature-input']!.replace(signer.keyid, 'another-key') } };
    await expect(verifyWithHttpMessageSig(otherKeyid)).rejects.toMatchObject({ code: SignatureErrorCode.ResolverFailed });
    expect(await verifyWithHttpMessageSignatures(otherKeyid)).toBeNull();
  });
});

describe('signing', () => {
  it('is deterministic for a given created, and created moves the signature', async () => {
    const first: AnswerSignatureHeaders = await signer.sign(samples[2]!.answer);
    expect(await signer.sign(samples[2]!.answer)).toEqual(first);
    expect(await (await createAnswerSigner(privateKeyPkcs8Base64url)).sign(samples[2]!.answer)).toEqual(first);
    const later = await signer.sign({ ...samples[2]!.answer, created: new Date(CREATED.getTime() + 1000) });
    expect(later['content-digest']).toBe(first['content-digest']);
    expect(later['signature-input']).toContain(`created=${CREATED_SECONDS + 1};`);
    expect(later.signature).not.toBe(first.signature);
  });

  it('without created: the time of signing, in whole seconds', async () => {
    const before = Math.floor(Date.now() / 1000);
    const { 'signature-input': input } = await signer.sign({ ...samples[0]!.answer, created: undefined });
    const created = Number(/;created=(\d+);/.exec(input)?.[1]);
    expect(created).toBeGreaterThanOrEqual(before);
    expect(created).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
  });

  it('digests the RFC 9530 example content as the RFC does', async () => {
    // https://www.rfc-editor.org/rfc/rfc9530#appendix-B
    const { 'content-digest': digest } = await signer.sign({ ...samples[0]!.answer, body: new TextEncoder().encode('{"hello": "world"}') });
    expect(digest).toBe('sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:');
  });

  it('signs the authority as given, lowercased, keeping a port that is not the scheme default', async () => {
    for (const [authority, url] of [['Stats.Example:8443', 'https://stats.example:8443/api/stats'], ['stats.example:443', 'http://stats.example:443/api/stats'], ['127.0.0.1:8080', 'http://127.0.0.1:8080/api/stats']] as const) {
      const sample: Sample = { name: authority, answer: { ...samples[0]!.answer, authority }, url };
      const r = await receive(sample);
      await expect(verifyWithHttpMessageSig(r), authority).resolves.toBeDefined();
      expect(await verifyWithHttpMessageSignatures(r), authority).toBe(true);
    }
  });

  it('refuses an authority, path or query it cannot sign as such', async () => {
    const answer = samples[0]!.answer;
    await expect(signer.sign({ ...answer, authority: 'https://stats.example' })).rejects.toThrow(/authority/);
    await expect(signer.sign({ ...answer, authority: 'user@stats.example' })).rejects.toThrow(/authority/);
    await expect(signer.sign({ ...answer, path: 'api/stats' })).rejects.toThrow(/path/);
    await expect(signer.sign({ ...answer, path: '/api/stats?x=1' })).rejects.toThrow(/path/);
    await expect(signer.sign({ ...answer, query: 'from=2026-01-01' })).rejects.toThrow(/query/);
    // An empty query is no query: nothing covers it.
    expect((await signer.sign({ ...answer, query: '' }))['signature-input']).not.toContain('@query');
  });

  it('refuses a key that is not Ed25519 PKCS#8', async () => {
    await expect(createAnswerSigner('not-a-key')).rejects.toThrow(/HTTP_SIG_PRIVATE_KEY/);
  });
});
