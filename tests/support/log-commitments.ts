// Shared pieces of the SQL tests of the log's commitments and the audits published for it:
// commitments as the writer makes them, appends on the pinned clock, and checkpoints of the log.
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { NOW } from './stats-sql.ts';

export const ORIGIN = 'stats.example.org/log';

/** A commitment as the writer makes them: the base64 of a SHA-256 digest. */
export const commitment = (what: string) => createHash('sha256').update(what).digest('base64');
export const ROOT = commitment('a tree root');

/** log_append as of `now`: how many entries it wrote. */
export const append = async (c: pg.Client, now = NOW): Promise<number> => (await c.query('select stats.log_append($1) as n', [now])).rows[0].n;

/** A checkpoint of the log's first `size` entries (its signature is not what these tests check). */
export async function checkpoint(c: pg.Client, size: number, origin = ORIGIN, demo = false) {
  await c.query(`insert into stats.log_checkpoint (size, root, note, vkey, is_demo) values ($1, $2, $3, 'v', $4)`,
    [size, ROOT, `${origin}\n${size}\n${ROOT}\n\n— ${origin} c2ln\n`, demo]);
}
