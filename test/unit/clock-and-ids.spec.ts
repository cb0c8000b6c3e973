import { FixedClock, addMonthsClamped } from '../../src/shared/kernel/clock/clock';
import { hasPrefix, newId, randomBase62 } from '../../src/shared/kernel/ids/ids';

const d = (iso: string): Date => new Date(iso);

describe('addMonthsClamped', () => {
  it.each([
    ['2026-01-31T10:00:00.000Z', 1, '2026-02-28T10:00:00.000Z'],
    ['2028-01-31T10:00:00.000Z', 1, '2028-02-29T10:00:00.000Z'],
    ['2026-03-31T00:00:00.000Z', 1, '2026-04-30T00:00:00.000Z'],
    ['2026-11-30T23:59:59.999Z', 3, '2027-02-28T23:59:59.999Z'],
    ['2026-12-15T08:30:00.000Z', 1, '2027-01-15T08:30:00.000Z'],
    ['2028-02-29T00:00:00.000Z', 12, '2029-02-28T00:00:00.000Z'],
    ['2026-08-31T00:00:00.000Z', 12, '2027-08-31T00:00:00.000Z'],
  ])('%s + %i months = %s', (from, months, expected) => {
    expect(addMonthsClamped(d(from), months).toISOString()).toBe(expected);
  });
});

describe('FixedClock', () => {
  it('returns the time it is set to, and copies', () => {
    const clock = new FixedClock(d('2026-11-21T10:00:00.000Z'));
    const a = clock.now();
    a.setUTCFullYear(2000);
    expect(clock.now().toISOString()).toBe('2026-11-21T10:00:00.000Z');
    clock.advance(1500);
    expect(clock.now().toISOString()).toBe('2026-11-21T10:00:01.500Z');
  });
});

describe('ids', () => {
  it('are a prefix and 24 url-safe random characters', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => newId('vol')));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(id).toMatch(/^vol_[A-Za-z0-9]{24}$/);
    expect(hasPrefix('vol_abc', 'vol')).toBe(true);
    expect(hasPrefix('vol_', 'vol')).toBe(false);
    expect(hasPrefix('op_abc', 'vol')).toBe(false);
  });

  it('draws every base62 character', () => {
    const seen = new Set(randomBase62(20000));
    expect(seen.size).toBe(62);
  });
});
