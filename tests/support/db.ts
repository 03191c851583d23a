// Direct database access for tests: a superuser client, and helpers that run inside a transaction
// that is always rolled back, so tests never see each other's rows.
import pg from 'pg';
import { inject } from 'vitest';

pg.types.setTypeParser(1082, (value) => value); // date stays 'YYYY-MM-DD'

export async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Runs `fn` in a transaction on the shared stack's database as superuser, then rolls it back. */
export async function inRollback<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  return withClient(inject('stack').adminUrl, async (client) => {
    await client.query('begin');
    try {
      return await fn(client);
    } finally {
      await client.query('rollback');
    }
  });
}
