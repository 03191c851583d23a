// When a night was logged: witnessed on time when an archived checkpoint holding the night's FIRST
// entry was cosigned by the quorum no later than midnight UTC of its date plus 4 days (finality
// plus one), logged late when later or when nothing cosigned it by a deadline already past.
import { describe, expect, it } from 'vitest';
import { lateAfterOnTime, witnessing } from '../../verify/witnessing.ts';

const at = (iso: string) => Date.parse(iso) / 1000;
const DEADLINE_JAN_1 = at('2026-01-05T00:00:00Z');

describe('witnessed on time', () => {
  const entries = [{ date: '2026-01-01' }, { date: '2026-01-02' }, { date: '2026-01-01' }, { date: '2026-01-03' }];

  it('is the quorum time of the earliest-cosigned checkpoint holding the first entry, against midnight of its date plus 4 days', () => {
    const archive = [
      { size: 1, quorumAt: DEADLINE_JAN_1 },
      { size: 2, quorumAt: DEADLINE_JAN_1 + 86_400 + 1 },
      // The correction of 2026-01-01 (entry 2) comes later: the first entry's witnessing stands.
      { size: 3, quorumAt: at('2026-01-20T00:00:00Z') },
      { size: 4, quorumAt: undefined },
    ];
    const each = witnessing(entries, archive, at('2026-02-01T00:00:00Z'));
    expect(each).toEqual([
      { date: '2026-01-01', at: DEADLINE_JAN_1, deadline: DEADLINE_JAN_1, status: 'on time' },
      { date: '2026-01-02', at: DEADLINE_JAN_1 + 86_400 + 1, deadline: DEADLINE_JAN_1 + 86_400, status: 'late' },
      // Never cosigned by the quorum, and the deadline has passed.
      { date: '2026-01-03', at: undefined, deadline: at('2026-01-07T00:00:00Z'), status: 'late' },
    ]);
  });

  it('takes the earliest quorum over every checkpoint that holds the entry, whatever their order', () => {
    const archive = [{ size: 4, quorumAt: at('2026-01-02T12:00:00Z') }, { size: 1, quorumAt: at('2026-01-09T00:00:00Z') }];
    expect(witnessing(entries, archive, at('2026-02-01T00:00:00Z')).map((w) => w.status)).toEqual(['on time', 'on time', 'on time']);
  });

  it('is pending, neither on time nor late, while nothing cosigned it and its deadline is ahead', () => {
    const each = witnessing([{ date: '2026-01-03' }], [{ size: 1, quorumAt: undefined }], at('2026-01-06T23:59:59Z'));
    expect(each[0]!.status).toBe('pending');
    expect(witnessing([{ date: '2026-01-03' }], [], at('2026-01-07T00:00:01Z'))[0]!.status).toBe('late');
  });

  it('--strict refuses a night logged late after the first night witnessed on time, not the history imported before it', () => {
    const night = (date: string, status: 'on time' | 'late' | 'pending') => ({ date, at: undefined, deadline: 0, status });
    expect(lateAfterOnTime([night('2025-01-01', 'late'), night('2025-01-02', 'late'), night('2026-01-01', 'on time'), night('2026-01-02', 'pending')])).toBeUndefined();
    expect(lateAfterOnTime([night('2025-01-01', 'late'), night('2026-01-01', 'on time'), night('2026-01-02', 'on time'), night('2026-01-03', 'late')])?.date).toBe('2026-01-03');
    expect(lateAfterOnTime([night('2025-01-01', 'late')])).toBeUndefined();
  });
});
