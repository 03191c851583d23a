// With the public key nothing but the landing_* functions is reachable.
import { SignJWT } from 'jose';
import { describe, expect, inject, it } from 'vitest';
import { withClient } from '../support/db.ts';

const { adminUrl, writerUrl, postgrestUrl, apiUrl, anonKey, jwtSecret } = inject('stack');

describe('database privileges', () => {
  it('let anon execute exactly landing_stats(), landing_history(), landing_log() and landing_health()', async () => {
    const rows = await withClient(adminUrl, async (c) => (await c.query(`
      select p.oid::regprocedure::text as fn from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where n.nspname not in ('pg_catalog', 'information_schema') and has_function_privilege('anon', p.oid, 'execute')
      order by 1`)).rows);
    expect(rows.map((r) => r.fn)).toEqual(['landing_health()', 'landing_history()', 'landing_log()', 'landing_stats()']);
  });

  it('give anon no table, no sequence, no stats schema, no create anywhere', async () => {
    const facts = await withClient(adminUrl, async (c) => (await c.query(`
      select
        (select count(*)::int from information_schema.role_table_grants where grantee = 'anon') as table_grants,
        (select count(*)::int from pg_class k join pg_namespace n on n.oid = k.relnamespace
           where n.nspname not in ('pg_catalog', 'information_schema') and k.relkind in ('r','v','m','S','f','p')
             and (has_table_privilege('anon', k.oid, 'select') or has_table_privilege('anon', k.oid, 'insert'))) as readable_relations,
        has_schema_privilege('anon', 'stats', 'usage') as stats_usage,
        has_schema_privilege('anon', 'public', 'create') as public_create`)).rows[0]);
    expect(facts).toEqual({ table_grants: 0, readable_relations: 0, stats_usage: false, public_create: false });
  });

  it('refuse anon a direct read of the tables or the internal functions', async () => {
    await withClient(adminUrl, async (c) => {
      await c.query('begin; set local role anon');
      await expect(c.query('select * from stats.payout')).rejects.toThrow(/permission denied/);
      await c.query('rollback');
      await c.query('begin; set local role anon');
      await expect(c.query('select stats.stats_at(now())')).rejects.toThrow(/permission denied/);
      await c.query('rollback');
      await c.query('begin; set local role anon');
      const r = await c.query('select public.landing_stats() as s');
      expect(r.rows[0].s).toHaveProperty('daily');
      await c.query('rollback');
    });
  });

  it('let the writer write only its data tables', async () => {
    await withClient(writerUrl, async (c) => {
      await c.query('begin');
      await c.query(`insert into stats.heartbeat (at) values (now())`);
      await c.query('rollback');
      await expect(c.query(`insert into stats.payout_correction (date, old_usd, new_usd) values (current_date, 1, 2)`)).rejects.toThrow(/permission denied/);
      await expect(c.query(`delete from stats.payout`)).rejects.toThrow(/permission denied/);
      await expect(c.query(`insert into stats.trading_cost_correction (date, old_usd, new_usd) values (current_date, 1, 2)`)).rejects.toThrow(/permission denied/);
      await c.query('begin');
      await c.query(`delete from stats.quoted_market`); // digests past the 24-hour window are dropped
      await c.query('rollback');
      await c.query('begin');
      await c.query(`select stats.purge_demo()`); // the only deletion it may make: demo rows
      await c.query('rollback');
      await expect(c.query(`update stats.settings set window_days = 30`)).rejects.toThrow(/permission denied/);
      // Demo-ness is fixed when a row is written: the writer may not touch the flag.
      await expect(c.query(`update stats.payout set is_demo = true`)).rejects.toThrow(/permission denied/);
      await expect(c.query(`update stats.capital set is_demo = true`)).rejects.toThrow(/permission denied/);
      await expect(c.query(`create table public.x (a int)`)).rejects.toThrow(/permission denied/);
      await expect(c.query(`create table stats.x (a int)`)).rejects.toThrow(/permission denied/);
    });
  });
});

describe('real rows and the demo purge', () => {
  it('keep a row real: no role can flip is_demo, so purge_demo never removes a real row', async () => {
    const date = '2024-03-01';
    await withClient(adminUrl, async (c) => {
      await c.query('begin');
      try {
        await c.query(`insert into stats.payout (date, usd, is_demo) values ($1, 12.5, false)`, [date]);
        await c.query('savepoint flip');
        // Even the owner's update is refused: the trigger guards the flag for every role.
        await expect(c.query(`update stats.payout set is_demo = true where date = $1`, [date])).rejects.toThrow(/is_demo of a payout row is fixed/);
        await c.query('rollback to savepoint flip');
        await c.query(`set local role stats_writer`);
        await c.query(`select stats.purge_demo()`);
        await c.query(`reset role`);
        expect((await c.query(`select usd::text, is_demo from stats.payout where date = $1`, [date])).rows).toEqual([{ usd: '12.5', is_demo: false }]);
      } finally {
        await c.query('rollback');
      }
    });
  });
});

describe('PostgREST itself (what the anon role reaches when a request gets past the gateway)', () => {
  it('serves no OpenAPI root, no tables and no other schema', async () => {
    expect((await fetch(`${postgrestUrl}/`)).status).toBe(404);
    expect((await fetch(`${postgrestUrl}/payout`)).status).toBe(404);
    expect((await fetch(`${postgrestUrl}/rpc/stats_at`, { method: 'POST', body: '{"p_now":"2026-01-01"}', headers: { 'content-type': 'application/json' } })).status).toBe(404);
    const profile = await fetch(`${postgrestUrl}/payout`, { headers: { 'accept-profile': 'stats' } });
    expect(profile.status).toBe(406);
    expect((await fetch(`${postgrestUrl}/rpc/landing_stats`)).status).toBe(200);
  });

  it('refuses forged JWTs: another secret, alg none, a role it may not switch to', async () => {
    const sign = (secret: string, role: string) =>
      new SignJWT({ role }).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().sign(new TextEncoder().encode(secret));
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"role":"stats_owner"}').toString('base64url')}.`;
    for (const token of [await sign('y'.repeat(48), 'anon'), none]) {
      const res = await fetch(`${postgrestUrl}/rpc/landing_stats`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(401);
    }
    const elevated = await fetch(`${postgrestUrl}/rpc/landing_stats`, { headers: { authorization: `Bearer ${await sign(jwtSecret, 'stats_owner')}` } });
    expect(elevated.status).toBeGreaterThanOrEqual(400);
  });
});

describe('the gateway neutralises request tricks', () => {
  it('ignores Prefer, profile and Accept headers that would change the answer', async () => {
    const plain = await (await fetch(`${apiUrl}/rest/v1/rpc/landing_stats`, { headers: { apikey: anonKey } })).json();
    for (const headers of [
      { prefer: 'tx=rollback, count=exact, handling=strict, params=single-object' },
      { 'accept-profile': 'stats' },
      { 'content-profile': 'stats' },
      { accept: 'text/csv' },
      { accept: 'application/vnd.pgrst.plan+json' },
    ] as Record<string, string>[]) {
      const res = await fetch(`${apiUrl}/rest/v1/rpc/landing_stats`, { method: 'POST', body: '{}', headers: { apikey: anonKey, 'content-type': 'application/json', ...headers } });
      expect(res.status, JSON.stringify(headers)).toBe(200);
      expect(await res.json()).toEqual(plain);
    }
  });
});
