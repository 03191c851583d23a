// What the site tells agents of access: protected-resource (RFC 9728) and authorization-server
// (RFC 8414) metadata on both hosts, and auth.md's policy. The expected URLs are written here from
// the spec, not read from the documents under test.
import { describe, expect, inject, it } from 'vitest';
import { essence, get, getJson } from '../support/discovery.ts';
import { api, isAbsoluteUrl, site } from '../support/hosts.ts';

describe('protected-resource metadata (RFC 9728)', () => {
  it('site host: resource is exactly {base_url}; a bearer key in the header; policy and docs linked', async () => {
    const { body } = await getJson(`${site()}/.well-known/oauth-protected-resource`);
    expect(body.resource).toBe(site());
    expect(body.resource).not.toMatch(/\/$/);
    expect(body.bearer_methods_supported).toEqual(['header']);
    expect(body.resource_policy_uri).toBe(`${site()}/auth.md`);
    expect(body.resource_documentation).toBe(`${site()}/api-docs`);
    // Zero-element arrays must be omitted (§2); there is no OAuth flow for agents.
    for (const [key, value] of Object.entries(body)) if (Array.isArray(value)) expect(value.length, key).toBeGreaterThan(0);
    expect(body.authorization_servers).toBeUndefined();
  });

  it('API host: resource is exactly {api_url}, the document its 401 challenge points to', async () => {
    const denied = await get(`${api()}/rest/v1/rpc/landing_stats`);
    expect(denied.status).toBe(401);
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(denied.headers.get('www-authenticate') ?? '')?.[1];
    expect(metadataUrl).toBe(`${api()}/.well-known/oauth-protected-resource`);
    const { res, body } = await getJson(metadataUrl!);
    expect(essence(res.headers.get('content-type'))).toBe('application/json');
    expect(body.resource).toBe(api());
    // As RFC 9728 clients (e.g. the MCP SDK) accept: same origin, a path prefix of the request URL.
    expect(`${api()}/rest/v1/rpc/landing_stats`.startsWith(body.resource)).toBe(true);
    expect(body.bearer_methods_supported).toEqual(['header']);
    expect(body.resource_policy_uri).toBe(`${site()}/auth.md`);
  });
});

describe('authorization-server metadata (RFC 8414), mirroring {api_url}/auth/v1', () => {
  it('has the required members, the password and refresh_token grants, HS256, and no authorization_code', async () => {
    const { res, body } = await getJson(`${site()}/.well-known/oauth-authorization-server`);
    expect(essence(res.headers.get('content-type'))).toBe('application/json');
    const issuer = `${api()}/auth/v1`;
    expect(body.issuer).toBe(issuer);
    expect(body.issuer).not.toMatch(/[?#]/);
    expect(body.token_endpoint).toBe(`${issuer}/token`);
    expect(body.authorization_endpoint).toBe(`${issuer}/authorize`);
    expect(body.jwks_uri).toBe(`${issuer}/.well-known/jwks.json`);
    expect(body.end_session_endpoint).toBe(`${issuer}/logout`);
    expect([...body.grant_types_supported].sort()).toEqual(['password', 'refresh_token']);
    expect(Array.isArray(body.response_types_supported) && body.response_types_supported.length > 0).toBe(true);
    expect(body.response_types_supported).not.toContain('code');
    expect(JSON.stringify(body)).not.toContain('authorization_code');
    expect(body.id_token_signing_alg_values_supported).toEqual(['HS256']);
    expect(body.registration_endpoint).toBeUndefined();
    for (const [key, value] of Object.entries(body)) {
      if (Array.isArray(value)) expect(value.length, key).toBeGreaterThan(0);
      if (key.endsWith('_endpoint') || key.endsWith('_uri')) expect(isAbsoluteUrl(value), key).toBe(true);
    }
  });

  it('is served where its issuer says (RFC 8414 §3.1: the well-known name before the issuer path), the same on both hosts', async () => {
    const { body: siteCopy } = await getJson(`${site()}/.well-known/oauth-authorization-server`);
    const issuer = new URL(siteCopy.issuer as string);
    const where = `${issuer.origin}/.well-known/oauth-authorization-server${issuer.pathname}`;
    const { res, body } = await getJson(where);
    expect(res.status).toBe(200);
    expect(body).toEqual(siteCopy);
    // RFC 8414 §3.3: the issuer in the document equals the one the client derived the URL from.
    expect(body.issuer).toBe(issuer.href.replace(/\/$/, ''));
  });

  it('answers /auth/v1 of the local stack with an honest JSON status, not a 404', async () => {
    for (const p of ['/auth/v1', '/auth/v1/token', '/auth/v1/.well-known/jwks.json']) {
      const res = await get(`${api()}${p}`);
      expect(res.status, p).toBe(501);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect((await res.json()).message).toMatch(/does not run in the local stack/);
    }
  });
});

describe('auth.md (access, limits, terms)', () => {
  it('states the policy in plain words with the current key', async () => {
    const { anonKey } = inject('stack');
    const res = await get(`${site()}/auth.md`);
    expect(essence(res.headers.get('content-type'))).toBe('text/markdown');
    const text = await res.text();
    expect(text.split('\n')[0]).toMatch(/^# .*auth\.md/);
    expect(text).toContain(anonKey);
    expect(text).toContain(`apikey: ${anonKey}`);
    expect(text).toContain(`Authorization: Bearer ${anonKey}`);
    expect(text).toMatch(/No registration/i);
    expect(text).toMatch(/at most once per minute/i);
    expect(text).toMatch(/every 5 minutes is recommended/i);
    expect(text).toMatch(/User-Agent/);
    // The terms of use, the same licence the page's Dataset and OpenAPI state.
    expect(text).toContain('CC BY 4.0 (https://creativecommons.org/licenses/by/4.0/)');
    expect(text).toMatch(/401/);
    expect(text).toMatch(/Re-read this document/i);
    expect(text).toMatch(/human contact/i);
    expect(text).toMatch(/^Last updated: \d{4}-\d{2}-\d{2}\./m);
    expect(text).toMatch(/re-fetch/i);
    expect(text).toMatch(/registration: deliberately absent/i);
    expect(text).toContain(`${api()}/rest/v1/rpc/landing_stats`);
    expect(text).toContain(`${api()}/auth/v1`);
    expect(text).toMatch(/not yet signed/);
  });
});
