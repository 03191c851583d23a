// The settings files the high-availability mode writes into its clusters: the monitor's failover
// timing, the nodes' own settings, what every cluster gets, and the client authentication.
import type { HaPlacement } from './ha-placement.ts';

/**
 * The monitor's failover timing, shortened from pg_auto_failover's defaults (20 s and 30 s, which
 * make a failover take about 50 s): a primary unhealthy for 10 s is failed over, and the standby
 * takes writes 20 s after the old primary was told to demote. Measured here: about 30 s after a
 * process kill or a cut that resets connections, about 42-48 s after a silent cut (the monitor's
 * health checks then time out, 3 tries of 5 s). Nothing here orders the old primary's stop before the
 * standby's promotion (a keeper cut off from the monitor demotes itself after network_partition_timeout,
 * 20 s, counted from when its standby's connection is gone; after a crash and restart it may never do
 * so): synchronous replication keeps the old primary from acknowledging anything once its standby has
 * stopped replicating, and the writer signs only entries a returned commit made durable
 * (docs/scale-out.md, section 8; tests/stack/scale-out/partition.test.ts). A longer primary_demote_timeout
 * (30 s) made the old primary stop first in every cut measured, at 10-13 s more without writes in every
 * failover, a process kill's included. docker-compose's monitor (scripts/deploy/pg-auto-failover.sh)
 * has the same. https://pg-auto-failover.readthedocs.io/en/v2.0/ref/configuration.html
 */
export const MONITOR_SETTINGS = {
  'pgautofailover.node_considered_unhealthy_timeout': '10000',
  'pgautofailover.primary_demote_timeout': '20000',
  // The monitor's first health checks run before the nodes of a restarted stack are back; without a
  // longer grace (10 s by default) they count as a failure of the primary, and a restart swaps the roles.
  'pgautofailover.startup_grace_period': '30000',
};

/**
 * The nodes' own settings. wal_sender_timeout 10 s instead of pg_autoctl's 30 s: a primary's keeper
 * that can reach neither the monitor nor its standby counts its network_partition_timeout (20 s) only
 * from when the standby's replication connection is gone, which a silent network makes the walsender
 * notice only after wal_sender_timeout. Measured here (tests/stack/scale-out/partition.test.ts) with the
 * primary's side cut off silently: the old primary stopped 50.7 s after the cut with 30 s, after the
 * standby took writes (42.8 s); 26.8 s after it with 10 s, the promotion unchanged (41.8 s). A standby
 * answers the sender's keepalive requests (sent after half the timeout) at once, so 10 s drops no
 * healthy connection. Safety does not rest on this order (docs/scale-out.md, section 8).
 */
export const NODE_SETTINGS = { wal_sender_timeout: '10s' };

/**
 * The settings every cluster of the mode gets, after pg_autoctl's own include: loopback (BIND_HOST)
 * only, its socket in the private directory, and the stack's usual limits. A standby copies its
 * primary's postgresql.conf, so the two nodes always agree (a hot standby needs max_connections at
 * least its primary's).
 */
export function serverSettings(host: string, socketDir: string, extra: Record<string, string> = {}): string {
  const settings = {
    listen_addresses: host,
    unix_socket_directories: socketDir,
    max_connections: '60',
    timezone: 'UTC',
    ...extra,
  };
  return `\n# The stack's settings (stack/ha-settings.ts), after pg_auto_failover's.\n${Object.entries(settings).map(([k, v]) => `${k} = '${v}'`).join('\n')}\n`;
}

/**
 * Client authentication, written instead of pg_autoctl's (--skip-pg-hba): the private socket is
 * trusted; over TCP, only from this machine (samehost), pg_auto_failover's own roles (the monitor's
 * health checks, replication and pg_rewind, the keepers' calls to the monitor) are trusted and every
 * other role logs in with its password. On one machine, anyone with a local login could act as those
 * roles: docs/scale-out.md says so, and that a deployment across machines sets passwords for them.
 * Placed on addresses of their own (HaPlacement), `samenet` takes samehost's place: samehost matches
 * only the server's own addresses, and the other servers then connect from theirs.
 * https://www.postgresql.org/docs/15/auth-pg-hba-conf.html
 */
export function hba(monitor: boolean, from: HaPlacement['trustFrom']): string {
  const lines = [
    'local all all trust',
    ...(monitor
      ? [`host pg_auto_failover autoctl_node ${from} trust`]
      : [`host all pgautofailover_monitor ${from} trust`,
        `host replication pgautofailover_replicator ${from} trust`,
        `host postgres pgautofailover_replicator ${from} trust`]),
    `host all all ${from} scram-sha-256`,
  ];
  return `# Written by the stack (stack/ha-settings.ts).\n${lines.join('\n')}\n`;
}
