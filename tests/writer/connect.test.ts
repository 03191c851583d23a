// The writer's connector: libpq's multi-host URLs read as libpq reads them, and, against the shared
// stack's real Postgres, the choice of server (a dead one skipped, a read-only one refused under
// target_session_attrs=read-write but not under primary) and the timeouts every session gets.
// Choosing the primary over a real standby is in recovery.test.ts.
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../stack/processes.ts';
import { connectDatabase, parseDatabaseUrl } from '../../db-client/pg-connect.ts';
import { COMMAND_TIMEOUTS, openWriterDb } from '../../writer/db.ts';
import { LOCK_TIMEOUTS } from '../../writer/lock.ts';
import { query } from '../support/db.ts';

describe('parsing a connection URL', () => {
  it('hands a one-host URL to node-postgres exactly as given', () => {
    for (const url of ['postgres://w:p%40ss@127.0.0.1:5432/postgres?sslmode=disable', 'postgresql://w@db.example/stats', 'postgres:///postgres?host=/run/postgresql']) {
      expect(parseDatabaseUrl(url)).toEqual({ candidates: [{ label: expect.any(String), url }], targetSessionAttrs: 'any' });
    }
  });

  it('reads a list of hosts, each with its own port or the default, and keeps the other parameters for each', () => {
    const { candidates, targetSessionAttrs } = parseDatabaseUrl('postgres://stats_writer:p%40ss@127.0.0.1:5501,db2.example/postgres?sslmode=disable&target_session_attrs=read-write&connect_timeout=3');
    expect(targetSessionAttrs).toBe('read-write');
    expect(candidates).toEqual([
      { label: '127.0.0.1:5501', url: 'postgres://stats_writer:p%40ss@/postgres?sslmode=disable&connect_timeout=3&host=127.0.0.1&port=5501' },
      { label: 'db2.example:default', url: 'postgres://stats_writer:p%40ss@/postgres?sslmode=disable&connect_timeout=3&host=db2.example' },
    ]);
  });

  it('reads IPv6 addresses in brackets', () => {
    const { candidates } = parseDatabaseUrl('postgres://w@[::1]:5501,[fe80::2]/db');
    expect(candidates.map((c) => c.label)).toEqual(['[::1]:5501', '[fe80::2]:default']);
    expect(candidates[0]!.url).toBe('postgres://w@/db?host=%3A%3A1&port=5501');
  });

  it('takes a port list: one port for every host, or one per host', () => {
    expect(parseDatabaseUrl('postgres://w@a,b/db?port=5501').candidates.map((c) => c.label)).toEqual(['a:5501', 'b:5501']);
    expect(parseDatabaseUrl('postgres://w@a,b/db?port=5501,5502').candidates.map((c) => c.label)).toEqual(['a:5501', 'b:5502']);
    expect(parseDatabaseUrl('postgres://w@/db?host=a,b&port=5501,5502').candidates.map((c) => c.label)).toEqual(['a:5501', 'b:5502']);
    expect(() => parseDatabaseUrl('postgres://w@a,b,c/db?port=5501,5502')).toThrow('2 ports for 3 hosts');
    expect(() => parseDatabaseUrl('postgres://w@a:55x1,b/db')).toThrow('"55x1" is not a port number');
    expect(() => parseDatabaseUrl('postgres://w@a,,b/db')).toThrow('an empty host in a list of hosts');
  });

  it('checks one host too when target_session_attrs asks for it', () => {
    const { candidates, targetSessionAttrs } = parseDatabaseUrl('postgres://w@a:5501/db?target_session_attrs=primary');
    expect(targetSessionAttrs).toBe('primary');
    expect(candidates).toEqual([{ label: 'a:5501', url: 'postgres://w@/db?host=a&port=5501' }]);
  });

  it('refuses target_session_attrs values it does not support, saying why', () => {
    expect(() => parseDatabaseUrl('postgres://w@a,b/db?target_session_attrs=standby')).toThrow(/target_session_attrs=standby is not supported \(it asks for a server the writer cannot write on\)/);
    expect(() => parseDatabaseUrl('postgres://w@a,b/db?target_session_attrs=readwrite')).toThrow(/target_session_attrs=readwrite is not supported \(it is not a value libpq knows\)/);
  });

  it('takes a standby\'s targets for a client that only reads (PostgREST\'s URL under failover), and still no unknown value', () => {
    for (const target of ['read-only', 'standby', 'prefer-standby'] as const) {
      expect(parseDatabaseUrl(`postgres://w@a,b/db?connect_timeout=2&target_session_attrs=${target}`, { reading: true }).targetSessionAttrs).toBe(target);
    }
    expect(() => parseDatabaseUrl('postgres://w@a,b/db?target_session_attrs=readwrite', { reading: true })).toThrow(/it is not a value libpq knows/);
  });
});

describe('connecting through a list of hosts (real Postgres)', () => {
  const { writerUrl, adminUrl } = inject('stack');
  const real = new URL(writerUrl);
  let deadPort: number;
  const READ_ONLY_ROLE = 'connect_test_read_only';
  /** writerUrl with another host list (and parameters). */
  const withHosts = (hosts: string, params = '', user = `${real.username}:${real.password}`) => `postgres://${user}@${hosts}${real.pathname}${params}`;
  const serverPort = async (client: pg.Client) => (await client.query<{ port: number }>('select inet_server_port() as port')).rows[0]!.port;

  beforeAll(async () => {
    deadPort = await freePort();
    // A server whose sessions are read-only, as libpq sees one: default_transaction_read_only on.
    await query(adminUrl, `drop role if exists ${READ_ONLY_ROLE}; create role ${READ_ONLY_ROLE} login password 'ro';
      alter role ${READ_ONLY_ROLE} set default_transaction_read_only = on`);
  });
  afterAll(async () => {
    await query(adminUrl, `drop role if exists ${READ_ONLY_ROLE}`);
  });

  it('skips a host that does not answer and takes the next, with the given timeouts set', async () => {
    const client = await connectDatabase(withHosts(`127.0.0.1:${deadPort},${real.host}`, '?target_session_attrs=read-write'), { applicationName: 'connect-test', timeouts: LOCK_TIMEOUTS });
    try {
      expect(await serverPort(client)).toBe(Number(real.port));
      const { rows } = await client.query(`select current_setting('statement_timeout') as statement, current_setting('idle_in_transaction_session_timeout') as idle_in_transaction,
        current_setting('idle_session_timeout') as idle_session, current_setting('application_name') as app`);
      expect(rows[0]).toEqual({ statement: '10s', idle_in_transaction: '10s', idle_session: '10s', app: 'connect-test' });
    } finally {
      await client.end();
    }
  });

  it('names every host and why when none gives a session', async () => {
    const attempt = connectDatabase(withHosts(`127.0.0.1:${deadPort},localhost:${deadPort}`), { applicationName: 'connect-test', timeouts: LOCK_TIMEOUTS });
    await expect(attempt).rejects.toThrow(new RegExp(`^no server of the database URL gave a session \\(127\\.0\\.0\\.1:${deadPort}: .*ECONNREFUSED.*; localhost:${deadPort}: .*ECONNREFUSED.*\\)$`));
  });

  it('under read-write refuses a server whose sessions are read-only; primary and any take it', async () => {
    const hosts = `127.0.0.1:${deadPort},${real.host}`;
    const opts = { applicationName: 'connect-test', timeouts: LOCK_TIMEOUTS };
    await expect(connectDatabase(withHosts(hosts, '?target_session_attrs=read-write', `${READ_ONLY_ROLE}:ro`), opts))
      .rejects.toThrow(`${real.host}: its sessions are read-only (default_transaction_read_only is on)`);
    for (const target of ['primary', 'any']) {
      const client = await connectDatabase(withHosts(hosts, `?target_session_attrs=${target}`, `${READ_ONLY_ROLE}:ro`), opts);
      try {
        expect((await client.query('select current_user as u')).rows[0]).toEqual({ u: READ_ONLY_ROLE });
      } finally {
        await client.end();
      }
    }
  });

  it('for a client that only reads, prefer-standby takes a standby if one answers, else any server; standby only a standby', async () => {
    const hosts = `127.0.0.1:${deadPort},${real.host}`;
    const opts = { applicationName: 'connect-test', timeouts: LOCK_TIMEOUTS, reading: true };
    const client = await connectDatabase(withHosts(hosts, '?target_session_attrs=prefer-standby'), opts);
    try {
      expect(await serverPort(client)).toBe(Number(real.port));
    } finally {
      await client.end();
    }
    await expect(connectDatabase(withHosts(hosts, '?target_session_attrs=standby'), opts)).rejects.toThrow(`${real.host}: it is not a standby (not in recovery)`);
    await expect(connectDatabase(withHosts(hosts, '?target_session_attrs=prefer-standby'), { ...opts, reading: false })).rejects.toThrow(/prefer-standby is not supported/);
  });

  it('gives the pool of the commands that take no lock the same choice of server, with their own timeouts', async () => {
    const db = openWriterDb(withHosts(`127.0.0.1:${deadPort},${real.host}`, '?target_session_attrs=read-write'));
    try {
      const { rows } = await sql<{ port: number; statement: string; idle_in_transaction: string }>`select inet_server_port() as port,
        (select setting from pg_settings where name = 'statement_timeout') as statement,
        (select setting from pg_settings where name = 'idle_in_transaction_session_timeout') as idle_in_transaction`.execute(db);
      expect(rows[0]).toEqual({ port: Number(real.port), statement: String(COMMAND_TIMEOUTS.statementMs), idle_in_transaction: String(COMMAND_TIMEOUTS.idleInTransactionMs) });
    } finally {
      await db.destroy();
    }
  });
});
