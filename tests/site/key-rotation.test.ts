// The key the documents publish is the key the API host accepts: after `npm run keys --
// --rotate-anon-key` and a restart, auth.md and openapi.json show the new key, the API host takes
// it, and the old key gets 401. Runs a private stack on its own .env and data directory.
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configFromEnv, type Config } from '../../config/config.ts';
import type { Env } from '../../config/settings.ts';
import { freePort } from '../../stack/processes.ts';
import { startStack, type Stack } from '../../stack/stack.ts';
import { ensureEnvFile } from '../../stack/secrets.ts';
import { get } from '../support/discovery.ts';
import { rawGet, verifyWithHttpMessageSig, verifyWithHttpMessageSignatures, type DirectoryKey } from '../support/signatures.ts';

const STATS = '/rest/v1/rpc/landing_stats';

let dir: string;
let envFile: string;
let ports: Env;
let stack: Stack | undefined;
const logs: string[] = [];

async function start(): Promise<Config> {
  const env: Env = { ...parseEnv(readFileSync(envFile, 'utf8')), ...ports, DATA_DIR: path.join(dir, 'data'), NGINX_WORKERS: '1' };
  const cfg = configFromEnv(env);
  stack = await startStack(cfg, { log: (line) => logs.push(line), seedDemo: false });
  return cfg;
}

async function publishedKeys(cfg: Config) {
  const authMd = await (await get(`${cfg.siteUrl}/auth.md`)).text();
  const openapi = await (await get(`${cfg.siteUrl}/openapi.json`)).json();
  return { authMd, openapi };
}

async function status(cfg: Config, headers: Record<string, string>) {
  return (await get(cfg.apiUrl + STATS, { headers })).status;
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'public-stats-rotation-'));
  chmodSync(dir, 0o755);
  envFile = path.join(dir, '.env');
  await ensureEnvFile(envFile);
  ports = {};
  for (const name of ['API_PORT', 'SITE_PORT', 'EDGE_PORT', 'POSTGREST_PORT', 'POSTGREST_ADMIN_PORT', 'POSTGRES_PORT']) ports[name] = String(await freePort());
});

afterAll(async () => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('key rotation', () => {
  it('publishes the accepted key, and after a rotation and restart only the new one', async () => {
    const first = await start();
    const oldKey = first.ANON_KEY;
    let published = await publishedKeys(first);
    expect(published.openapi['x-public-anon-key']).toBe(oldKey);
    expect(published.openapi.components.securitySchemes.apikey.description).toContain(oldKey);
    expect(published.authMd).toContain(`apikey: ${oldKey}`);
    expect(await status(first, { apikey: published.openapi['x-public-anon-key'] })).toBe(200);

    // The signing key's public half is what the directory publishes.
    const jwks = await (await get(`${first.siteUrl}/.well-known/http-message-signatures-directory`)).json();
    const expectedX = createPublicKey(createPrivateKey({ key: Buffer.from(first.HTTP_SIG_PRIVATE_KEY, 'base64url'), format: 'der', type: 'pkcs8' }))
      .export({ format: 'jwk' }).x;
    expect(jwks.keys.map((k: { x: string }) => k.x)).toEqual([expectedX]);
    expect(JSON.stringify(jwks)).not.toContain(first.HTTP_SIG_PRIVATE_KEY);

    await stack!.stop();
    stack = undefined;
    expect(await ensureEnvFile(envFile, { anonKey: true })).toEqual(expect.arrayContaining(['JWT_SECRET', 'ANON_KEY']));
    const second = await start();
    const newKey = second.ANON_KEY;
    expect(newKey).not.toBe(oldKey);

    published = await publishedKeys(second);
    expect(published.openapi['x-public-anon-key']).toBe(newKey);
    expect(published.openapi.info.description).toContain(newKey);
    expect(JSON.stringify(published.openapi)).not.toContain(oldKey);
    expect(published.authMd).toContain(`apikey: ${newKey}`);
    expect(published.authMd).not.toContain(oldKey);

    expect(await status(second, { apikey: newKey })).toBe(200);
    expect(await status(second, { authorization: `Bearer ${newKey}` })).toBe(200);
    expect(await status(second, { apikey: oldKey })).toBe(401);
    expect(await status(second, { authorization: `Bearer ${oldKey}` })).toBe(401);
    // The keyless endpoint keeps working: the edge reads through the API host with the new key.
    const keyless = await get(`${second.siteUrl}/api/stats`);
    expect(keyless.status).toBe(200);
    expect(await keyless.json()).toHaveProperty('daily');
  }, 180_000);

  it('after a signing-key rotation, answers signed before still verify against the directory, and the log keeps its identity', async () => {
    await stack?.stop();
    stack = undefined;
    const first = await start();
    const oldAnswer = await rawGet(`${first.siteUrl}/api/stats`, { 'accept-encoding': 'identity' });
    const [oldKey] = (await (await get(`${first.siteUrl}/.well-known/http-message-signatures-directory`)).json()).keys as DirectoryKey[];
    const logKeyLine = async (siteUrl: string) => (await (await get(`${siteUrl}/llms.txt`)).text()).split('\n').find((l) => l.includes('note verifier key'));
    const oldLogKey = await logKeyLine(first.siteUrl);
    expect(oldLogKey).toBeDefined();

    await stack!.stop();
    stack = undefined;
    const rotatedAt = Math.floor(Date.now() / 1000);
    expect(await ensureEnvFile(envFile, { signingKey: true })).toEqual(expect.arrayContaining(['HTTP_SIG_PRIVATE_KEY', 'HTTP_SIG_PUBLIC_KEY', 'HTTP_SIG_RETIRED_PUBLIC_KEYS']));
    const second = await start();
    const keys = (await (await get(`${second.siteUrl}/.well-known/http-message-signatures-directory`)).json()).keys as (DirectoryKey & { exp?: number })[];
    // The new key first, the retired one after it, with the time it was retired.
    expect(keys).toHaveLength(2);
    expect(keys[0]!.x).not.toBe(oldKey!.x);
    expect(keys[0]!.exp).toBeUndefined();
    const { exp, ...retired } = keys[1]!;
    expect(retired).toEqual(oldKey);
    expect(Math.abs(exp! - rotatedAt)).toBeLessThanOrEqual(2);
    const newAnswer = await rawGet(`${second.siteUrl}/api/stats`, { 'accept-encoding': 'identity' });
    expect((await verifyWithHttpMessageSig(newAnswer, keys)).keyid).toBe(keys[0]!.kid);
    // Signed before the key was retired, so it still verifies.
    expect((await verifyWithHttpMessageSig(oldAnswer, keys)).keyid).toBe(oldKey!.kid);
    expect(await verifyWithHttpMessageSignatures(oldAnswer, keys)).toBe(true);
    // The log has its own key: rotating the answers' key leaves its published verifier key as it was.
    expect(await logKeyLine(second.siteUrl)).toBe(oldLogKey);
  }, 180_000);
});
