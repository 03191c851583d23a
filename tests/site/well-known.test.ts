// Every discovery document's HTTP on the running hosts (media type, HEAD, CORS, validators, caching),
// and the .well-known API catalog (RFC 9727/9264), MCP server card, agent-skills index (v0.2.0 draft)
// and signatures directory (RFC 7638/8037), against the standards and the facts the service states.
import { createHash } from 'node:crypto';
import { calculateJwkThumbprint } from 'jose';
import { verifySignature, webcrypto } from 'http-message-sig';
import { describe, expect, inject, it } from 'vitest';
import { API_HOST_DOCUMENTS, STATIC_DOCUMENTS } from '../../contract/documents.ts';
import { essence, get, getJson } from '../support/discovery.ts';
import { api, isAbsoluteUrl, site } from '../support/hosts.ts';

describe('every document: media type, GET and HEAD, CORS, validators, caching', () => {
  for (const doc of [...STATIC_DOCUMENTS, ...API_HOST_DOCUMENTS]) {
    const onApiHost = (API_HOST_DOCUMENTS as readonly object[]).includes(doc);
    it(`${onApiHost ? 'API host' : 'site host'} ${doc.path}`, async () => {
      const url = (onApiHost ? api() : site()) + doc.path;
      const res = await get(url);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(doc.mediaType);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('cache-control')).toBe(doc.cacheControl);
      for (const [name, value] of Object.entries(doc.headers ?? {})) expect(res.headers.get(name), name).toBe(value);
      const etag = res.headers.get('etag');
      expect(etag).toMatch(/^(W\/)?".+"$/);
      expect(Date.parse(res.headers.get('last-modified') ?? '')).not.toBeNaN();
      const body = await res.text();
      expect(body.length).toBeGreaterThan(0);
      expect(body).not.toMatch(/\{\{[A-Z_]+\}\}/);

      const head = await get(url, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.headers.get('content-type')).toBe(doc.mediaType);
      expect(head.headers.get('etag')).toBe(etag);
      expect(await head.text()).toBe('');

      const revalidated = await get(url, { headers: { 'if-none-match': etag! } });
      expect(revalidated.status).toBe(304);

      // A browser's preflight for a GET with a non-safelisted header.
      const preflight = await get(url, {
        method: 'OPTIONS',
        headers: { origin: 'https://agent.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'if-none-match' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
      expect(preflight.headers.get('access-control-allow-methods')).toContain('GET');
    });
  }

  it('unknown /.well-known paths are real, uncached 404s, not HTML', async () => {
    for (const p of ['/.well-known/nothing-here', '/.well-known/agent-skills/nope/SKILL.md', '/.well-known/mcp/other.json', '/.well-known/oauth-protected-resource/x']) {
      const res = await get(site() + p);
      expect(res.status, p).toBe(404);
      expect(essence(res.headers.get('content-type')), p).not.toBe('text/html');
      expect(res.headers.get('cache-control'), p).toBe('no-store');
      expect(res.headers.get('access-control-allow-origin'), p).toBe('*');
    }
  });
});

describe('API catalog (RFC 9727, RFC 9264 §4.2)', () => {
  it('is a linkset whose relations are arrays of link targets, listing the APIs with their metadata', async () => {
    const { res, body } = await getJson(`${site()}/.well-known/api-catalog`);
    expect(essence(res.headers.get('content-type'))).toBe('application/linkset+json');
    expect(res.headers.get('content-type')).toContain('profile="https://www.rfc-editor.org/info/rfc9727"');
    expect(Object.keys(body)).toEqual(['linkset']);
    expect(Array.isArray(body.linkset)).toBe(true);
    for (const context of body.linkset) {
      expect(isAbsoluteUrl(context.anchor)).toBe(true);
      for (const [rel, targets] of Object.entries<any>(context)) {
        if (rel === 'anchor') continue;
        expect(Array.isArray(targets), rel).toBe(true);
        for (const target of targets) expect(typeof target.href, rel).toBe('string');
      }
    }
    const api = body.linkset.find((c: any) => c['service-desc']);
    expect(api['service-desc'][0].href).toBe(`${site()}/openapi.json`);
    expect(api['service-doc'][0].href).toBe(`${site()}/api-docs`);
    expect(api.status[0].href).toBe(`${site()}/api/health`);
    const hrefs = body.linkset.flatMap((c: any) => Object.values(c).flat().map((t: any) => t.href));
    for (const endpoint of [`${inject('stack').apiUrl}/rest/v1/rpc/landing_stats`, `${inject('stack').apiUrl}/rest/v1/rpc/landing_health`, `${site()}/api/stats`]) {
      expect(hrefs).toContain(endpoint);
    }
    const anchors = body.linkset.map((c: any) => c.anchor);
    expect(anchors).toEqual(expect.arrayContaining([`${site()}/mcp`, `${site()}/a2a`]));
  });

  it('names itself with rel="api-catalog" in a Link header on HEAD and GET', async () => {
    for (const method of ['HEAD', 'GET']) {
      const res = await get(`${site()}/.well-known/api-catalog`, { method });
      const link = res.headers.get('link') ?? '';
      const match = /<([^>]+)>\s*;\s*rel="?api-catalog"?/.exec(link);
      expect(match, method).not.toBeNull();
      expect(new URL(match![1]!, `${site()}/.well-known/api-catalog`).href).toBe(`${site()}/.well-known/api-catalog`);
    }
  });
});

// The server card is a draft: the current proposal's members
// (https://github.com/modelcontextprotocol/modelcontextprotocol/blob/main/seps/2127-mcp-server-cards.md) and the
// earlier one's (https://github.com/modelcontextprotocol/modelcontextprotocol/issues/1649) that scanners still read.
describe('MCP server card (SEP-2127 core + SEP-1649 members)', () => {
  it('names the alpha streamable-http endpoint at {base_url}/mcp and its tools', async () => {
    const { res, body } = await getJson(`${site()}/.well-known/mcp/server-card.json`);
    expect(essence(res.headers.get('content-type'))).toBe('application/json');
    expect(body.$schema).toBe('https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json');
    expect(body.name).toMatch(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/);
    expect(body.name.length).toBeGreaterThanOrEqual(3);
    expect(typeof body.version).toBe('string');
    expect(body.version).not.toMatch(/[\^~*<>=|]/);
    expect(body.description.length).toBeGreaterThanOrEqual(1);
    expect(body.description.length).toBeLessThanOrEqual(100);
    expect(body.remotes).toEqual([{ type: 'streamable-http', url: `${site()}/mcp` }]);
    expect(body.serverInfo).toMatchObject({ name: expect.any(String), version: body.version });
    expect(body.transport).toEqual({ type: 'streamable-http', endpoint: `${site()}/mcp` });
    expect(body.capabilities).toHaveProperty('tools');
    expect(body.authentication).toEqual({ required: false });
    expect(body.tools.map((t: any) => t.name).sort()).toEqual(['get_health', 'get_history', 'get_stats']);
    expect(`${body.title} ${body.description}`.toLowerCase()).toContain('alpha');
  });

  it('states exactly what the live endpoint says about itself (serverInfo, capabilities, instructions, tools, resources)', async () => {
    const { body: card } = await getJson(`${site()}/.well-known/mcp/server-card.json`);
    const rpc = async (method: string, params: object) => {
      const res = await get(`${site()}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': card.protocolVersion },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      });
      expect(res.status, method).toBe(200);
      const text = await res.text();
      // A JSON body, or one SSE event carrying it.
      return JSON.parse(text.startsWith('{') ? text : /^data: (.+)$/m.exec(text)![1]!).result;
    };
    const init = await rpc('initialize', { protocolVersion: card.protocolVersion, capabilities: {}, clientInfo: { name: 'discovery-tests', version: '1.0.0' } });
    expect(init.protocolVersion).toBe(card.protocolVersion);
    expect(init.serverInfo).toEqual(card.serverInfo);
    expect(init.capabilities).toEqual(card.capabilities);
    expect(init.instructions).toBe(card.instructions);
    expect((await rpc('tools/list', {})).tools).toEqual(card.tools);
    expect((await rpc('resources/list', {})).resources).toEqual(card.resources);
  });
});

describe('agent skills index (Agent Skills Discovery v0.2.0)', () => {
  it('lists skill-md entries whose digests are the sha256 of the served bytes', async () => {
    const { res, body } = await getJson(`${site()}/.well-known/agent-skills/index.json`);
    expect(essence(res.headers.get('content-type'))).toBe('application/json');
    expect(body.$schema).toBe('https://schemas.agentskills.io/discovery/0.2.0/schema.json');
    expect(body.skills.length).toBeGreaterThan(0);
    for (const skill of body.skills) {
      expect(skill.name).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(skill.name.length).toBeLessThanOrEqual(64);
      expect(skill.type).toBe('skill-md');
      expect(skill.description.length).toBeLessThanOrEqual(1024);
      expect(skill.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
      const url = new URL(skill.url, `${site()}/.well-known/agent-skills/index.json`).href;
      expect(url).toBe(`${site()}/.well-known/agent-skills/${skill.name}/SKILL.md`);
      const file = await get(url);
      expect(file.status).toBe(200);
      expect(essence(file.headers.get('content-type'))).toBe('text/markdown');
      const bytes = Buffer.from(await file.arrayBuffer());
      expect(`sha256:${createHash('sha256').update(bytes).digest('hex')}`).toBe(skill.digest);
      const frontMatter = /^---\n([\s\S]*?)\n---\n/.exec(bytes.toString('utf8'))?.[1] ?? '';
      expect(frontMatter).toMatch(new RegExp(`^name: ${skill.name}$`, 'm'));
      expect(/^description: (.+)$/m.exec(frontMatter)?.[1]).toBe(skill.description);
    }
  });
});

describe('HTTP message signatures directory', () => {
  it('is an Ed25519 JWKS of public keys whose kid is the RFC 7638 thumbprint', async () => {
    const { res, body } = await getJson(`${site()}/.well-known/http-message-signatures-directory`);
    expect(res.headers.get('content-type')).toBe('application/http-message-signatures-directory+json');
    expect(body.keys.length).toBeGreaterThan(0);
    for (const key of body.keys) {
      expect(key).toMatchObject({ kty: 'OKP', crv: 'Ed25519' });
      expect(key.d).toBeUndefined();
      expect(Object.keys(key).filter((k) => !['kty', 'crv', 'x', 'kid', 'use', 'nbf', 'exp'].includes(k))).toEqual([]);
      expect(Buffer.from(key.x, 'base64url')).toHaveLength(32);
      expect(key.kid).toBe(await calculateJwkThumbprint({ kty: key.kty, crv: key.crv, x: key.x }, 'sha256'));
    }
  });

  it('answers signed (Signature, Signature-Input with tag="http-message-signatures-directory", created, expires), verifiable with http-message-sig', async () => {
    const url = `${site()}/.well-known/http-message-signatures-directory`;
    const res = await get(url);
    const body = await res.json();
    const input = res.headers.get('signature-input') ?? '';
    expect(input).toMatch(/tag="http-message-signatures-directory"/);
    expect(input).toMatch(/;created=\d+/);
    expect(input).toMatch(/;expires=\d+/);
    expect(input).toMatch(/\("@authority";req\)/);
    const key = await crypto.subtle.importKey('jwk', { kty: body.keys[0].kty, crv: body.keys[0].crv, x: body.keys[0].x }, { name: 'Ed25519' }, true, ['verify']);
    const fields = [...res.headers].map(([name, value]) => ({ name, value }));
    const check = async (requestUrl: string) => (await verifySignature({ kind: 'response', status: res.status, fields, request: new Request(requestUrl) }, {
      policy: { algorithms: ['ed25519'], requiredComponents: [], requiredParameters: ['created', 'expires', 'keyid', 'tag'], now: Math.floor(Date.now() / 1000) },
      resolveVerifier: () => webcrypto.verifier(key),
    })).parameters;
    const params = await check(url);
    expect(params).toMatchObject({ tag: 'http-message-signatures-directory', keyid: body.keys[0].kid });
    expect(params.created! * 1000).toBeLessThanOrEqual(Date.now());
    expect(params.expires! * 1000).toBeGreaterThan(Date.now());
    expect(params.expires! - params.created!).toBeLessThanOrEqual(24 * 3600);
    // The signature covers the host it was asked under: the same answer fails for another host.
    await expect(check(url.replace('127.0.0.1', 'localhost'))).rejects.toThrow(/verif/i);
  });

  it('the thumbprint computation matches the RFC 8037 test vector', async () => {
    // RFC 8037 Appendix A.3, as an independent check on the function the test relies on.
    expect(await calculateJwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' }, 'sha256'))
      .toBe('kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k');
  });
});
