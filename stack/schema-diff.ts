// The difference between the migrated database and the declared one, as SQL, computed by migra on
// two scratch databases of one server.
import { randomBytes } from 'node:crypto';
import { run as migra } from '@pgkit/migra';
import pg from 'pg';
import { applyDeclared, migrate } from './migrations.ts';
import type { Log } from './processes.ts';

async function withScratchDatabases<T>(adminUrl: string, fn: (migratedUrl: string, declaredUrl: string) => Promise<T>): Promise<T> {
  const suffix = randomBytes(4).toString('hex');
  const names = [`scratch_migrated_${suffix}`, `scratch_declared_${suffix}`];
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const urlOf = (db: string) => {
    const url = new URL(adminUrl);
    url.pathname = `/${db}`;
    return url.toString();
  };
  try {
    for (const db of names) await admin.query(`create database ${db}`);
    return await fn(urlOf(names[0]!), urlOf(names[1]!));
  } finally {
    for (const db of names) await admin.query(`drop database if exists ${db} with (force)`).catch(() => {});
    await admin.end();
  }
}

// What migra does not compare: column privileges, owners, SECURITY DEFINER and comments of the
// service's own schemas, read from the catalogs as one line per fact.
const CATALOG_FACTS = `
  select format('table %s owner %s acl %s', c.oid::regclass, c.relowner::regrole, c.relacl) as fact
    from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname in ('stats', 'public')
  union all
  select format('column %s.%s acl %s', a.attrelid::regclass, a.attname, a.attacl)
    from pg_attribute a join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
    where n.nspname in ('stats', 'public') and a.attacl is not null
  union all
  select format('function %s owner %s definer %s acl %s comment %s', p.oid::regprocedure, p.proowner::regrole, p.prosecdef, p.proacl,
      obj_description(p.oid, 'pg_proc'))
    from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname in ('stats', 'public')
  union all
  select format('schema %s owner %s acl %s', nspname, nspowner::regrole, nspacl) from pg_namespace where nspname in ('stats', 'public')
  order by 1`;

async function catalogFacts(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ fact: string }>(CATALOG_FACTS)).rows.map((r) => r.fact);
  } finally {
    await client.end();
  }
}

/**
 * SQL that turns a database built from the migration history into the declared one (empty when
 * they agree); the migration runner's own bookkeeping schema is left out. Differences migra cannot
 * express (column privileges, owners, SECURITY DEFINER, comments) follow as comment lines naming
 * the declared fact, to be written by hand.
 */
export async function schemaDifference(adminUrl: string, log: Log): Promise<string> {
  return withScratchDatabases(adminUrl, async (migratedUrl, declaredUrl) => {
    await migrate(migratedUrl, log);
    await applyDeclared(declaredUrl);
    const migration = await migra(migratedUrl, declaredUrl, { unsafe: true, withPrivileges: true, excludeSchema: ['pgmigrations'] });
    const migrated = new Set(await catalogFacts(migratedUrl));
    const declared = await catalogFacts(declaredUrl);
    const missing = declared.filter((fact) => !migrated.has(fact)).map((fact) => `-- declared, not migrated: ${fact}\n`);
    const extra = [...migrated].filter((fact) => !declared.includes(fact)).map((fact) => `-- migrated, not declared: ${fact}\n`);
    return migration.sql + missing.join('') + extra.join('');
  });
}
