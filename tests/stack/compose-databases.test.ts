// docker-compose.yml's databases, read: the primary and every URL to it, the "replica" profile's
// streaming replica, the "ha" profile's pg_auto_failover, and migrate's wait. The replica profile's
// entrypoint (scripts/deploy/replica.sh) runs for real in tests/stack/scale-out/replica.test.ts.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../config/checkout.ts';
import { REPLICATION_ROLE } from '../../stack/database.ts';
import { DEFAULT_REPLICA_SLOT, REPLICA_SCRIPT } from '../../stack/replica.ts';
import { compose, services } from '../support/compose.ts';

const HA_SERVICES = ['pg-monitor', 'pg-node1', 'pg-node2'];
const HA_SCRIPT = path.join(ROOT_DIR, 'scripts/deploy/pg-auto-failover.sh');
const HA_DOCKERFILE = path.join(ROOT_DIR, 'scripts/deploy/pg-auto-failover.Dockerfile');
/** Every postgres:// URL in the file, with the service and variable that hold it. */
const databaseUrls = Object.entries(services).flatMap(([name, s]) => Object.entries(s.environment ?? {})
  .filter(([, v]) => /^postgres(ql)?:\/\//.test(String(v))).map(([key, url]) => ({ name, key, url: String(url) })));

describe('docker-compose.yml', () => {
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
});
