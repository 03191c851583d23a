// The partition tests' machines: one network namespace per host, on the LAN, the WAN or both, and the
// two sides of the service they make up.
//
//   LAN 198.18.0.0/24, bridges a and b joined by the trunk:   WAN 198.18.1.0/24:
//     mon .10 (moves to the side the test needs)                wa .21, wb .31, wit .40
//     side a: n1 .11, wa .21, ra .22
//     side b: n2 .12, wb .31, rb .32
//     n3 .13 (the three-node layout's third node, on bridge b to start)
import type { HostSpec } from './netns.ts';

export const NETWORK_PREFIX = 'pst-';

export const HOSTS: HostSpec[] = [
  { name: 'mon', lan: 10, bridge: 'b' },
  { name: 'n1', lan: 11, bridge: 'a' },
  { name: 'n2', lan: 12, bridge: 'b' },
  { name: 'wa', lan: 21, bridge: 'a', wan: 21 },
  { name: 'ra', lan: 22, bridge: 'a' },
  { name: 'wb', lan: 31, bridge: 'b', wan: 31 },
  { name: 'rb', lan: 32, bridge: 'b' },
  { name: 'wit', wan: 40 },
];

/** The third database node of the three-node layout (two standbys): no writer or reader of its own. */
export const THIRD_DB_HOST = 'n3';
export const THIRD_DB: HostSpec = { name: THIRD_DB_HOST, lan: 13, bridge: 'b' };

/** One side of the service: a database node, the writer beside it and a node of the service with its reader. */
export interface Side {
  name: 'a' | 'b';
  /** The database node of this side (0: n1, 1: n2). */
  db: 0 | 1;
  dbHost: 'n1' | 'n2';
  writer: 'wa' | 'wb';
  reader: 'ra' | 'rb';
  writerName: string;
}

export const SIDES: [Side, Side] = [
  { name: 'a', db: 0, dbHost: 'n1', writer: 'wa', reader: 'ra', writerName: 'writer-a' },
  { name: 'b', db: 1, dbHost: 'n2', writer: 'wb', reader: 'rb', writerName: 'writer-b' },
];
