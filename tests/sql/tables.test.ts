// The list of the `stats` tables (contract/tables.ts), which the writer, the backup and the tests go
// over, is the schema's: checked against the catalog, so a table added, dropped or changed in sql/
// without the list (or the reverse) fails here.
import { describe, expect, inject, it } from 'vitest';
import { DEMO_TABLES, DERIVED_TABLES, STATS_TABLES, TABLE_NAMES } from '../../contract/tables.ts';
import { query } from '../support/db.ts';

const { adminUrl } = inject('stack');
const sorted = (names: readonly string[]) => [...names].sort();

/** Every `delete from stats.<table> [where <condition>]` in a function's body. */
async function deletions(fn: string): Promise<{ table: string; where: string | null }[]> {
  const [row] = await query<{ src: string }>(adminUrl, 'select prosrc as src from pg_proc where oid = $1::regprocedure', [fn]);
  return [...row!.src.matchAll(/delete\s+from\s+stats\.(\w+)(?:\s+where\s+([^;]+?))?\s*;/gi)].map((m) => ({ table: m[1]!, where: m[2] ?? null }));
}

describe('the stats tables', () => {
  it('are the ones the list names, no more and no fewer', async () => {
    const rows = await query<{ name: string }>(adminUrl, `
      select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'stats' and c.relkind in ('r', 'p')`);
    expect(sorted(rows.map((r) => r.name))).toEqual(sorted(TABLE_NAMES));
  });

  it('hold demo rows (an is_demo column) exactly where the list says so', async () => {
    const rows = await query<{ name: string }>(adminUrl, `
      select c.relname as name from pg_attribute a join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'stats' and c.relkind in ('r', 'p') and a.attname = 'is_demo' and not a.attisdropped
        and a.atttypid = 'boolean'::regtype`);
    expect(sorted(rows.map((r) => r.name))).toEqual(sorted(DEMO_TABLES));
  });

  it('lose their demo rows to stats.purge_demo(), every table of demo rows and no other', async () => {
    const deleted = await deletions('stats.purge_demo()');
    expect(deleted.filter((d) => d.where !== 'is_demo'), 'deletions of more than the demo rows').toEqual([]);
    expect(sorted(deleted.map((d) => d.table))).toEqual(sorted(DEMO_TABLES));
  });

  it('refuse a TRUNCATE before it runs exactly where the list calls them append-only', async () => {
    // pg_trigger.tgtype bits (src/include/catalog/pg_trigger.h): 2 BEFORE, 32 TRUNCATE.
    const rows = await query<{ name: string }>(adminUrl, `
      select distinct c.relname as name from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'stats' and not t.tgisinternal and t.tgtype & 2 = 2 and t.tgtype & 32 = 32`);
    const appendOnly = TABLE_NAMES.filter((t) => STATS_TABLES[t].appendOnly);
    expect(sorted(rows.map((r) => r.name))).toEqual(sorted(appendOnly));
  });

  it('are derived exactly where the list says so: the snapshots a truncate of the figures empties', async () => {
    expect(sorted((await deletions('stats.figures_truncated()')).map((d) => d.table))).toEqual(sorted(DERIVED_TABLES));
  });
});
