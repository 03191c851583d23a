// The pg_auto_failover cluster without a failover: the primary replicates synchronously and the writer
// and PostgREST reach the nodes through multi-host URLs; a restart keeps the roles, and PostgREST
// starts only once a late standby has the new login password.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_PATHS } from '../../../contract/paths.ts';
import type { HaDatabase } from '../../../stack/ha.ts';
import { query } from '../../support/db.ts';
import { haProbes, startHaStack, until } from '../../support/failover.ts';
import type { TestStack } from '../../support/stack.ts';

let stack: TestStack;
let ha: HaDatabase;
const { api, primaryIndex, postgrestSessions, stateOf } = haProbes(() => stack);

beforeAll(async () => {
  stack = await startHaStack();
  ha = stack.ha!;
}, 300_000);

afterAll(async () => {
  await stack?.destroy();
});

describe('automatic failover (pg_auto_failover)', () => {
  it('replicates synchronously, and the writer and PostgREST reach the nodes through multi-host URLs', async () => {
    const states = await ha.states();
    expect(states.map((s) => s.reported).sort()).toEqual(['primary', 'secondary']);
    const primary = await primaryIndex();
    const [settings] = await query<{ commit: string; standbys: string }>(ha.nodeUrl(primary),
      "select current_setting('synchronous_commit') as commit, current_setting('synchronous_standby_names') as standbys");
    expect(settings!.commit).toBe('on');
    expect(settings!.standbys).toMatch(/^ANY 1 \(pgautofailover_standby_\d+\)$/);
    expect(stack.db.urlFor('stats_writer')).toMatch(/^postgres:\/\/stats_writer:[^@]+@[^/]+,[^/]+\/postgres\?target_session_attrs=read-write$/);
    expect(stack.db.urlFor('authenticator')).toMatch(/,.*target_session_attrs=prefer-standby$/);
  });

  it('starts again in the roles it had; a late asynchronous standby has the new login password before PostgREST logs in there', async () => {
    const primary = await primaryIndex();
    const standby = 1 - primary;
    // An asynchronous standby: no commit waits for it, the login passwords' among them.
    const monitorUrl = `postgres://autoctl_node@${stack.cfg.bindHost}:${ha.ports.monitor}/pg_auto_failover`;
    const standbyName = (await stateOf(standby))!.name;
    await query(monitorUrl, "select pgautofailover.set_node_replication_quorum('default', $1, false)", [standbyName]);
    await until('the primary to stop waiting for the standby', async () => (await stateOf(primary))?.reported === 'primary'
      && (await query<{ names: string }>(ha.nodeUrl(primary), "select current_setting('synchronous_standby_names') as names"))[0]?.names === '', 120_000, 250);
    // And a late one: it applies each commit 5 s after the primary made it. PostgREST logs in there
    // first, and ends on a password it does not know yet.
    const applyDelay = async (setting: string) => {
      await query(ha.nodeUrl(standby), `alter system ${setting}`);
      await query(ha.nodeUrl(standby), 'select pg_reload_conf()');
    };
    await applyDelay("set recovery_min_apply_delay = '5s'");
    const mark = stack.logs.length;
    stack = await stack.restart({ AUTHENTICATOR_PASSWORD: randomBytes(24).toString('hex') });
    ha = stack.ha!;
    await applyDelay('reset recovery_min_apply_delay');

    // No failover on the way: the primary came back as the primary, and no node was demoted or promoted.
    expect(await primaryIndex()).toBe(primary);
    expect(stack.logs.slice(mark).filter((line) => /FSM transition .* to "(draining|demote_timeout|demoted|prepare_promotion|stop_replication)"/.test(line))).toEqual([]);
    const health = await fetch(api() + API_PATHS.HEALTH, { headers: { apikey: stack.cfg.ANON_KEY } });
    expect(health.status).toBe(200);
    expect(await postgrestSessions(standby)).toBeGreaterThan(0);
    const [login] = await query<{ role: string }>(ha.nodeUrl(standby, 'authenticator'), 'select current_user as role');
    expect(login!.role).toBe('authenticator');
  }, 300_000);
});
