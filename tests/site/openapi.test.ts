// The OpenAPI descriptions, one per host (openapi.json for the API host, openapi-keyless.json for
// the site host): valid OpenAPI 3.1 (official schema + Redocly lint), true to the published
// operations, authentication and terms, the source the live responses are validated against, and
// usable by a generic client (openapi-fetch) with no base URL or key set by hand.
import { Validator } from '@seriousme/openapi-schema-validator';
import createClient from 'openapi-fetch';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SITE_PATHS } from '../../contract/paths.ts';
import { query } from '../support/db.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { getJson, get, redoclyLint, responseSchemaName, schemaValidator, type OpenApi } from '../support/discovery.ts';

const STATS = '/rest/v1/rpc/landing_stats';
const HEALTH = '/rest/v1/rpc/landing_health';
const HISTORY = '/rest/v1/rpc/landing_history';
const LOG = '/rest/v1/rpc/landing_log';

let openapi: OpenApi;
let keyless: OpenApi;
beforeAll(async () => {
  const api = await getJson(`${inject('stack').siteUrl}${SITE_PATHS.OPENAPI}`);
  const site = await getJson(`${inject('stack').siteUrl}${SITE_PATHS.OPENAPI_KEYLESS}`);
  expect([api.res.status, site.res.status]).toEqual([200, 200]);
  openapi = api.body;
  keyless = site.body;
});

const operationsOf = (doc: OpenApi) => Object.entries(doc.paths).flatMap(([p, item]) =>
  Object.keys(item).filter((k) => ['get', 'post', 'put', 'delete', 'patch'].includes(k)).map((m) => `${m.toUpperCase()} ${p}`)).sort();

describe('the OpenAPI descriptions as documents', () => {
  it('both validate against the official OpenAPI 3.1 schema', async () => {
    for (const doc of [openapi, keyless]) {
      const validator = new Validator();
      const result = await validator.validate(structuredClone(doc));
      expect(result.errors ?? []).toEqual([]);
      expect(result.valid).toBe(true);
      expect(validator.version).toBe('3.1');
    }
  });

  it('the validator is not a rubber stamp: it rejects a broken copy', async () => {
    const broken: any = structuredClone(openapi);
    delete broken.info;
    broken.paths[STATS].get.responses = 'none';
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  it('both pass Redocly lint (recommended rules) with no errors and no warnings', async () => {
    for (const doc of [openapi, keyless]) {
      const { errors, warnings } = await redoclyLint(doc);
      expect(errors).toEqual([]);
      expect(warnings).toEqual([]);
    }
  }, 60_000);

  it('every component schema compiles in ajv strict mode (JSON Schema 2020-12)', () => {
    const check = schemaValidator(openapi);
    for (const name of Object.keys(openapi.components.schemas)) expect(() => check(name, {})).not.toThrow();
    // …and they reject what they should: missing fields, a wrong type, an unknown nested field.
    expect(check('StatsRecord', {}).length).toBeGreaterThan(0);
    expect(check('DailyPayout', { date: '2026-01-01', usd: '1.00' })).not.toEqual([]);
    expect(check('Capital', { cash_usd: 1, inventory_usd: 1, positions: 1, at_stake_usd: 2, as_of: '2026-01-01T00:00:00Z', wallet: 'x' })).not.toEqual([]);
    expect(check('HealthRecord', { status: 'fine', checked_at: '2026-01-01T00:00:00Z', data: null, writer: null })).not.toEqual([]);
  });

  it('each states version 1.0.0, its own host as the one server, and only that host\'s operations', () => {
    const { apiUrl, siteUrl } = inject('stack');
    for (const doc of [openapi, keyless]) {
      expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
      expect(doc.info.version).toBe('1.0.0');
      // Generators take the top-level server; a path-level one would be ignored by them.
      for (const item of Object.values(doc.paths)) expect(item.servers).toBeUndefined();
    }
    expect(openapi.servers).toEqual([expect.objectContaining({ url: apiUrl })]);
    expect(operationsOf(openapi)).toEqual([`GET ${STATS}`, `POST ${STATS}`, `GET ${HISTORY}`, `POST ${HISTORY}`, `GET ${LOG}`, `POST ${LOG}`, `GET ${HEALTH}`].sort());
    expect(keyless.servers).toEqual([expect.objectContaining({ url: siteUrl })]);
    expect(operationsOf(keyless)).toEqual(['GET /api/stats', 'GET /api/history', 'GET /api/history.csv', 'GET /api/health', 'GET /log/checkpoint', 'GET /log/audits'].sort());
    expect(openapi.paths[STATS]!.post.requestBody.content['application/json'].example).toEqual({});
  });

  it('describes both ways of sending the key and carries the current key', () => {
    const { anonKey } = inject('stack');
    const schemes = openapi.components.securitySchemes;
    expect(schemes).toMatchObject({
      apikey: { type: 'apiKey', in: 'header', name: 'apikey' },
      bearer: { type: 'http', scheme: 'bearer' },
    });
    for (const p of [STATS, HISTORY, HEALTH]) {
      for (const op of Object.values(openapi.paths[p]!).filter((v) => v.responses)) {
        expect(op.security).toEqual(expect.arrayContaining([{ apikey: [] }, { bearer: [] }]));
      }
    }
    for (const p of ['/api/stats', '/api/health']) expect(keyless.paths[p]!.get.security).toEqual([]);
    expect(keyless.components.securitySchemes).toBeUndefined();
    expect(openapi['x-public-anon-key']).toBe(anonKey);
    expect(openapi.info.description).toContain(anonKey);
  });

  it('documents every field of both records with its type and format', () => {
    const s = openapi.components.schemas;
    const props = (name: string) => Object.keys(s[name].properties).sort();
    expect(props('StatsRecord')).toEqual(['accrued_today_markets', 'accrued_today_usd', 'audit', 'audits_unfinished', 'best_day_usd', 'capital', 'daily', 'data_source',
      'last_night_date', 'last_night_usd', 'log_checkpoint', 'markets_quoted_24h', 'returns', 'since_date', 'total_usd', 'updated_at', 'worst_day_usd']);
    expect(props('Audit')).toEqual(['auditor', 'checkpoint_size', 'chosen', 'date', 'nights_checked', 'nights_matched', 'published_at', 'result']);
    expect(s.StatsRecord.properties.audit.anyOf).toEqual([{ $ref: '#/components/schemas/Audit' }, { type: 'null' }]);
    expect(s.Audit.required).toEqual(['date', 'auditor', 'chosen', 'result', 'nights_checked', 'nights_matched', 'checkpoint_size', 'published_at']);
    expect(s.Audit.properties.chosen.enum).toEqual(['drawn', 'named']);
    expect(s.Audit.properties.result.enum).toEqual(['pass', 'fail']);
    expect(s.StatsRecord.required).toContain('audits_unfinished');
    expect(s.Audit.properties.published_at.format).toBe('date-time');
    expect(s.LogRecord.properties.audits.items).toEqual({ $ref: '#/components/schemas/PublishedAudit' });
    expect(keyless.components.schemas.AuditsRecord.properties.audits.items).toEqual({ $ref: '#/components/schemas/PublishedAudit' });
    expect(props('PublishedAudit')).toEqual(['listed', 'note', 'published_at']);
    expect(s.PublishedAudit.properties.listed.type).toBe('boolean');
    expect(props('Capital')).toEqual(['as_of', 'at_stake_usd', 'cash_usd', 'inventory_usd', 'positions']);
    expect(props('Returns')).toEqual(['from_date', 'gross_yield_pct', 'net_usd', 'net_yield_pct', 'rewards_usd', 'rewards_vs_costs',
      'to_date', 'trading_costs_usd', 'window_days']);
    expect(props('HealthRecord')).toEqual(['checked_at', 'data', 'log', 'status', 'writer']);
    expect(props('LogCheckpoint')).toEqual(['origin', 'root', 'size']);
    expect(props('HealthData')).toEqual(['accrual_age_minutes', 'accrual_fresh', 'fresh', 'last_accrual_at', 'last_payout_date', 'payout_age_days', 'replica_lag_seconds', 'replica_streaming', 'tls']);
    expect(s.HealthData.properties.replica_lag_seconds.type).toEqual(['integer', 'null']);
    expect(s.HealthData.properties.replica_streaming.type).toEqual(['boolean', 'null']);
    expect(props('WriterLiveness')).toEqual(['alive', 'last_heartbeat_at', 'name']);
    expect(s.StatsRecord.properties.updated_at.format).toBe('date-time');
    expect(s.DailyPayout.properties.date.format).toBe('date');
    expect(s.Capital.properties.positions.type).toBe('integer');
    expect(s.HealthRecord.properties.status.enum).toEqual(['ok', 'degraded', 'down']);
    // Every field says what it means.
    for (const name of ['StatsRecord', 'Capital', 'Returns', 'HealthData', 'WriterLiveness', 'DailyPayout', 'Audit', 'PublishedAudit']) {
      for (const [field, schema] of Object.entries<any>(s[name].properties)) {
        expect(schema.description ?? s[schema.$ref?.split('/').pop()]?.description, `${name}.${field}`).toBeTruthy();
      }
    }
    expect(s.Error.required).toEqual(['message']);
  });
});

/** Every key of a response object is declared by the schema, so drift in the SQL shows up here. */
function undeclared(openapi: OpenApi, name: string, record: Record<string, unknown>): string[] {
  return Object.keys(record).filter((k) => !(k in openapi.components.schemas[name].properties));
}

async function liveChecks(apiUrl: string, anonKey: string, label: string) {
  const check = schemaValidator(openapi);
  const auth = { apikey: anonKey };
  const calls: [string, string, RequestInit][] = [
    ['get', STATS, { headers: auth }],
    ['post', STATS, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{}' }],
    ['get', HEALTH, { headers: { authorization: `Bearer ${anonKey}` } }],
  ];
  const bodies: Record<string, any> = {};
  for (const [method, p, init] of calls) {
    const res = await get(apiUrl + p, init);
    expect(res.status, `${label}: ${method} ${p}`).toBe(200);
    const body = await res.json();
    const schema = responseSchemaName(openapi, p, method, '200');
    expect(check(schema, body), `${label}: ${method} ${p}`).toEqual([]);
    expect(undeclared(openapi, schema, body), `${label}: undeclared fields`).toEqual([]);
    bodies[`${method} ${p}`] = body;
  }
  // The 401 matches the documented error schema and challenge.
  const denied = await get(apiUrl + STATS, { headers: { apikey: 'not-the-key' } });
  expect(denied.status).toBe(401);
  expect(check(responseSchemaName(openapi, STATS, 'get', '401'), await denied.json())).toEqual([]);
  expect(denied.headers.get('www-authenticate')).toMatch(/^Bearer .*resource_metadata="/);
  return bodies;
}

/** The keyless site endpoints, when the edge server serves them ; reports what it skipped. */
async function siteChecks(siteUrl: string, label: string): Promise<string[]> {
  const openapi = keyless;
  const check = schemaValidator(openapi);
  const skipped: string[] = [];
  for (const p of ['/api/stats', '/api/health']) {
    const res = await get(siteUrl + p);
    if (res.status === 404 || res.status === 502 || res.status === 503) {
      skipped.push(`${label}: GET ${p} answered ${res.status} (edge server not serving it)`);
      continue;
    }
    expect(res.status, `${label}: GET ${p}`).toBe(200);
    const body = await res.json();
    expect(check(responseSchemaName(openapi, p, 'get', '200'), body), `${label}: GET ${p}`).toEqual([]);
  }
  if (skipped.length) console.warn(`Not validated:\n  ${skipped.join('\n  ')}`);
  return skipped;
}

/**
 * Calls every operation of both descriptions through a generic client (openapi-fetch), with the base
 * URL and key each carries, and checks each answer against its description. `logSigned`: the stack's
 * database holds a signed log; without one, the log's checkpoint is a documented 404.
 */
async function callEveryOperation(docs: OpenApi[], logSigned: boolean): Promise<string[]> {
  const called: string[] = [];
  for (const doc of docs) {
    const check = schemaValidator(doc);
    // The key a client needs is the one the description publishes; the keyless one needs none.
    const headers: Record<string, string> = doc['x-public-anon-key'] ? { apikey: doc['x-public-anon-key'] as string } : {};
    const client = createClient<any>({ baseUrl: doc.servers![0]!.url, headers });
    for (const operation of operationsOf(doc)) {
      const [method, p] = operation.split(' ') as ['GET' | 'POST', string];
      const media = Object.keys(doc.paths[p]![method.toLowerCase()].responses['200'].content ?? doc.components.responses.Stats.content)[0]!;
      const parseAs = media === 'application/json' ? 'json' : 'text';
      const result = method === 'GET' ? await client.GET(p, { parseAs }) : await client.POST(p, { body: {}, parseAs });
      called.push(`${operation} -> ${result.response.status}${result.response.redirected ? ` (redirected to ${new URL(result.response.url).pathname})` : ''}`);
      if (p === SITE_PATHS.LOG_CHECKPOINT && !logSigned) {
        expect(result.response.status, operation).toBe(404);
        expect(doc.paths[p]!.get.responses['404'], operation).toBeDefined();
        continue;
      }
      expect(result.response.status, operation).toBe(200);
      expect(result.response.headers.get('content-type'), operation).toContain(media);
      if (parseAs === 'json') expect(check(responseSchemaName(doc, p, method.toLowerCase(), '200'), result.data), operation).toEqual([]);
    }
  }
  return called;
}

describe('a generic client (openapi-fetch) on each description, as published', () => {
  it('calls every operation of both hosts with the base URL and key the descriptions carry', async () => {
    const signed = (await query<{ n: number }>(inject('stack').adminUrl, 'select count(*)::int as n from stats.log_checkpoint'))[0]!.n > 0;
    await callEveryOperation([openapi, keyless], signed);
  });
});

describe('live responses validate against the descriptions', () => {
  it('empty database: nulls, empty daily, degraded health', async () => {
    const { apiUrl, anonKey, siteUrl } = inject('stack');
    const bodies = await liveChecks(apiUrl, anonKey, 'empty');
    expect(bodies[`get ${STATS}`].daily).toEqual([]);
    expect(bodies[`get ${STATS}`].capital).toBeNull();
    expect(bodies[`get ${HEALTH}`].status).toBe('degraded');
    await siteChecks(siteUrl, 'empty');
  });

  describe('demo data, and the database unreachable', () => {
    let stack: TestStack;
    beforeAll(async () => { stack = await startTestStack({ seedDemo: true }); }, 120_000);
    afterAll(async () => { await stack?.destroy(); });

    it('demo data, as a fresh `npm start` serves them: every operation of every description answers 200', async () => {
      const docs = await Promise.all([SITE_PATHS.OPENAPI, SITE_PATHS.OPENAPI_KEYLESS].map(async (path) => (await getJson(stack.cfg.siteUrl + path)).body as OpenApi));
      const called = await callEveryOperation(docs, true);
      console.info(`Every operation on demo data:\n  ${called.join('\n  ')}`);
      expect(called.length).toBe(docs.reduce((n, doc) => n + operationsOf(doc).length, 0));
    });

    it('demo data: every field filled and valid', async () => {
      const bodies = await liveChecks(stack.cfg.apiUrl, stack.cfg.ANON_KEY, 'demo');
      const stats = bodies[`get ${STATS}`];
      expect(stats.daily.length).toBeGreaterThan(0);
      expect(stats.capital).not.toBeNull();
      expect(stats.data_source).toBe('demo');
      expect(bodies[`post ${STATS}`]).toEqual(stats);
      await siteChecks(stack.cfg.siteUrl, 'demo');
    });

    it('PostgREST stopped: health "down" with null data and writer, still valid', async () => {
      await stack.stopPostgrest();
      try {
        const res = await get(stack.cfg.apiUrl + HEALTH, { headers: { apikey: stack.cfg.ANON_KEY } });
        expect(res.status).toBe(200);
        const body = await res.json();
        expect(body).toMatchObject({ status: 'down', data: null, writer: null });
        expect(schemaValidator(openapi)(responseSchemaName(openapi, HEALTH, 'get', '200'), body)).toEqual([]);
      } finally {
        await stack.startPostgrest();
      }
    });
  });
});
