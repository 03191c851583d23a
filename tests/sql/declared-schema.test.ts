// What the migration history builds is what sql/ declares: a change made on one side only fails here.
import { describe, expect, inject, it } from 'vitest';
import { schemaDifference } from '../../stack/schema-diff.ts';

const { adminUrl } = inject('stack');

describe('the declared schema', () => {
  it('is what the migration history gives, migration by migration (privileges included)', async () => {
    const logged: string[] = [];
    expect(await schemaDifference(adminUrl, (line) => logged.push(line))).toBe('');
  }, 60_000);
});
