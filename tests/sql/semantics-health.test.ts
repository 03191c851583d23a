// The exact meaning of landing_health, on pinned clocks at the edges of every threshold: data,
// writer, replication and the log's witnessing. Each test runs in a transaction that is rolled back.
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { inRollback } from '../support/db.ts';
import { healthAt, NOW, payouts } from '../support/stats-sql.ts';

describe('landing_health', () => {
  async function seeded(c: pg.Client, { payout, accrual, heartbeat, writer = null }: { payout: string; accrual: string; heartbeat: string; writer?: string | null }) {
    await payouts(c, [[payout, 1]]);
    await c.query('insert into stats.accrual values ($1, 1, 1)', [accrual]);
    await c.query('insert into stats.heartbeat (at, writer) values ($1, $2)', [heartbeat, writer]);
  }

  /** The log's part of health while the log is empty and has no witness policy. */
  const NO_LOG = { size: 0, witnessed: false, witnesses: null, cosigned: null, checked_at: null, quorum_cosigned_at: null, halted: null, waiting: null };

  it('is ok at the edges of every threshold', async () => {
    const h = await inRollback(async (c) => {
      await seeded(c, { payout: '2026-03-09', accrual: '2026-03-10T11:44:01Z', heartbeat: '2026-03-10T11:55:00.001Z', writer: 'writer-5e1f09aa' });
      return healthAt(c);
    });
    expect(h).toEqual({
      status: 'ok',
      checked_at: '2026-03-10T12:00:00Z',
      data: { last_payout_date: '2026-03-09', payout_age_days: 1, fresh: true, last_accrual_at: '2026-03-10T11:44:01Z', accrual_age_minutes: 15, accrual_fresh: true, replica_lag_seconds: null, replica_streaming: null },
      writer: { last_heartbeat_at: '2026-03-10T11:55:00Z', alive: true, name: 'writer-5e1f09aa' },
      log: NO_LOG,
    });
  });

  it('with a witness policy, is degraded once the quorum has not cosigned for 26 hours, and whenever the log is halted', async () => {
    const base = { payout: '2026-03-09', accrual: '2026-03-10T11:50:00Z', heartbeat: '2026-03-10T11:59:00Z' };
    const witnessed = (lastQuorum: string | null, halted = false) => inRollback(async (c) => {
      await seeded(c, base);
      // One final night, signed, under a policy recorded a week before.
      await c.query(`insert into stats.log_entry (idx, date, entry, is_demo) values (0, '2026-03-01', '{}', false)`);
      await c.query(`insert into stats.log_checkpoint (size, root, note, vkey, is_demo, signed_at) values (1, 'r', 'n', 'v', false, '2026-03-03T00:00:00Z')`);
      await c.query(`insert into stats.log_policy (recorded_at, policy) values ('2026-03-03T00:00:00Z', 'quorum none')`);
      await c.query(`insert into stats.log_witness_round (at, size, witnesses, cosigned, quorum_met) values ('2026-03-10T11:00:00Z', 1, 3, '{a}', false)`);
      if (lastQuorum) await c.query(`insert into stats.log_witness_round (at, size, witnesses, cosigned, quorum_met) values ($1, 1, 3, '{a,b}', true)`, [lastQuorum]);
      if (halted) await c.query(`insert into stats.log_halt (at, reason) values ('2026-03-10T11:30:00Z', 'a test halt')`);
      return healthAt(c);
    });
    const fresh = await witnessed('2026-03-09T10:00:00Z');
    expect(fresh.status).toBe('ok');
    // The latest round fell short, and says so; the quorum's last cosigning is the one that counts.
    expect(fresh.log).toEqual({ size: 1, witnessed: true, witnesses: 3, cosigned: 1, checked_at: '2026-03-10T11:00:00Z', quorum_cosigned_at: '2026-03-09T10:00:00Z', halted: null, waiting: null });
    expect((await witnessed('2026-03-09T09:59:59Z')).status).toBe('degraded');
    // A policy under which the quorum never cosigned: 26 hours from when it was recorded.
    expect((await witnessed(null)).status).toBe('degraded');
    const halted = await witnessed('2026-03-10T10:00:00Z', true);
    expect(halted.status).toBe('degraded');
    expect(halted.log.halted).toBe('a test halt');
  });

  it('on the primary of a failover group with no standby that can take over streaming, is degraded: written on one node, waiting for a standby', async () => {
    const base = { payout: '2026-03-09', accrual: '2026-03-10T11:50:00Z', heartbeat: '2026-03-10T11:59:00Z' };
    // A pg_auto_failover node is one with its replication role; this primary streams to no standby.
    const asked = await inRollback(async (c) => {
      await seeded(c, base);
      const single = await healthAt(c);
      await c.query('create role pgautofailover_replicator');
      const flush = (await c.query('select stats.standby_flush_lsn() as l')).rows[0].l;
      return { single, alone: await healthAt(c), flush };
    });
    expect(asked.single).toMatchObject({ status: 'ok', log: { waiting: null } });
    expect(asked.flush).toBeNull();
    expect(asked.alone).toMatchObject({ status: 'degraded', log: { waiting: 'written on one node, waiting for a standby' } });
  });

  it('reads the standbys\' positions as a role that may, whoever asks', async () => {
    const owner = await inRollback(async (c) => (await c.query(`select p.proowner::regrole::text as owner, p.prosecdef as definer, has_function_privilege('anon', p.oid, 'execute') as anon,
        has_function_privilege('stats_writer', p.oid, 'execute') as writer from pg_proc p where p.oid = 'stats.standby_flush_lsn()'::regprocedure`)).rows[0]);
    expect(owner).toEqual({ owner: 'stats_monitor', definer: true, anon: false, writer: true });
  });

  it('names the writer of the latest heartbeat as of its clock; an imported heartbeat names none', async () => {
    const names = await inRollback(async (c) => {
      await c.query(`insert into stats.heartbeat (at, writer) values ('2026-03-10T11:50:00Z', 'primary'), ('2026-03-10T11:58:00Z', 'standby'),
        ('2026-03-10T12:30:00Z', null)`);
      // One client runs one query at a time: asked in turn.
      const writers = [];
      for (const at of ['2026-03-10T11:54:00Z', NOW, '2026-03-10T12:31:00Z']) writers.push((await healthAt(c, at)).writer);
      return writers;
    });
    expect(names).toEqual([
      { last_heartbeat_at: '2026-03-10T11:50:00Z', alive: true, name: 'primary' },
      { last_heartbeat_at: '2026-03-10T11:58:00Z', alive: true, name: 'standby' },
      { last_heartbeat_at: '2026-03-10T12:30:00Z', alive: true, name: null },
    ]);
  });

  it('is degraded just past each threshold, one at a time', async () => {
    const base = { payout: '2026-03-09', accrual: '2026-03-10T11:50:00Z', heartbeat: '2026-03-10T11:59:00Z' };
    const stalePayout = await inRollback(async (c) => { await seeded(c, { ...base, payout: '2026-03-08' }); return healthAt(c); });
    expect(stalePayout.status).toBe('degraded');
    expect(stalePayout.data).toMatchObject({ payout_age_days: 2, fresh: false, accrual_fresh: true });

    const staleAccrual = await inRollback(async (c) => { await seeded(c, { ...base, accrual: '2026-03-10T11:44:00Z' }); return healthAt(c); });
    expect(staleAccrual.status).toBe('degraded');
    expect(staleAccrual.data).toMatchObject({ accrual_age_minutes: 16, accrual_fresh: false, fresh: true });

    const deadWriter = await inRollback(async (c) => { await seeded(c, { ...base, heartbeat: '2026-03-10T11:55:00Z' }); return healthAt(c); });
    expect(deadWriter.status).toBe('degraded');
    expect(deadWriter.writer).toEqual({ last_heartbeat_at: '2026-03-10T11:55:00Z', alive: false, name: null });
  });

  // The shared stack's database is a primary; a replica's lag is measured in tests/stack/scale-out/replica.test.ts.
  it('says nothing of replication on a primary, however long ago anything was replayed', async () => {
    const h = await inRollback(async (c) => {
      expect((await c.query('select pg_is_in_recovery() as r')).rows[0].r).toBe(false);
      return healthAt(c, '2030-01-01T00:00:00Z');
    });
    expect(h.data.replica_lag_seconds).toBeNull();
    expect(h.data.replica_streaming).toBeNull();
  });

  it('reads the WAL receiver as a role that may, whoever asks: a primary has none streaming', async () => {
    const asks = await inRollback(async (c) => {
      const answers = [];
      for (const role of ['stats_owner', 'stats_writer']) {
        await c.query(`set local role ${role}`);
        answers.push((await c.query('select stats.wal_receiver_streaming() as s, current_user as u')).rows[0]);
        await c.query('reset role');
      }
      return answers;
    });
    expect(asks).toEqual([{ s: false, u: 'stats_owner' }, { s: false, u: 'stats_writer' }]);
    const owner = await inRollback(async (c) => (await c.query(`select p.proowner::regrole::text as owner, p.prosecdef as definer,
        pg_has_role('stats_monitor', 'pg_read_all_stats', 'usage') as reads_stats, has_function_privilege('anon', p.oid, 'execute') as anon
      from pg_proc p where p.oid = 'stats.wal_receiver_streaming()'::regprocedure`)).rows[0]);
    expect(owner).toEqual({ owner: 'stats_monitor', definer: true, reads_stats: true, anon: false });
  });

  it('measures a replica\'s lag from whether it streams, received and replayed WAL and the last replayed commit', async () => {
    const lag = (streaming: boolean, received: string | null, replayed: string, commitAt: string | null, now = NOW) =>
      inRollback(async (c) => (await c.query('select stats.replica_lag_seconds($1, $2, $3, $4, $5) as s', [now, streaming, received, replayed, commitAt])).rows[0].s);
    // Streaming, and everything received is replayed: no lag, however old the last commit (an idle primary).
    expect(await lag(true, '0/3000100', '0/3000100', '2026-03-01T00:00:00Z')).toBe(0);
    expect(await lag(true, '0/3000100', '0/3000100', null)).toBe(0);
    // Behind: the last replayed commit's age, rounded down; a clock skew never makes it negative.
    expect(await lag(true, '0/3000200', '0/3000100', '2026-03-10T11:58:30.900Z')).toBe(89);
    expect(await lag(true, '0/3000200', '0/3000100', '2026-03-10T12:00:05Z')).toBe(0);
    // Not streaming, though all it received is replayed: the primary may have written since, so the
    // last replayed commit's age, not 0.
    expect(await lag(false, '0/3000100', '0/3000100', '2026-03-10T11:58:30.900Z')).toBe(89);
    // Nothing received by streaming yet (or streaming off): the last replayed commit's age.
    expect(await lag(false, null, '0/3000100', '2026-03-10T11:59:00Z')).toBe(60);
    // Behind, or not streaming, with no commit replayed since the server started: unknown.
    expect(await lag(true, '0/3000200', '0/3000100', null)).toBeNull();
    expect(await lag(false, '0/3000100', '0/3000100', null)).toBeNull();
  });

  it('is degraded with nulls on an empty database', async () => {
    const h = await inRollback((c) => healthAt(c));
    expect(h).toEqual({
      status: 'degraded',
      checked_at: '2026-03-10T12:00:00Z',
      data: { last_payout_date: null, payout_age_days: null, fresh: false, last_accrual_at: null, accrual_age_minutes: null, accrual_fresh: false, replica_lag_seconds: null, replica_streaming: null },
      writer: { last_heartbeat_at: null, alive: false, name: null },
      log: NO_LOG,
    });
  });
});
