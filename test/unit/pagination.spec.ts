import fc from 'fast-check';
import { DomainError } from '../../src/shared/kernel/errors/domain-error';
import { decodeCursor, encodeCursor, parseLimit } from '../../src/shared/kernel/pagination/cursor';

describe('page cursors', () => {
  it('round-trip any (created_at with microseconds, id)', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z'), noInvalidDate: true }),
        fc.integer({ min: 0, max: 999 }),
        fc.stringMatching(/^[A-Za-z0-9_.-]{1,40}$/),
        (date, micros, id) => {
          const createdAt = date.toISOString().replace('Z', `${String(micros).padStart(3, '0')}Z`);
          const text = encodeCursor({ createdAt, id });
          expect(text).toMatch(/^[A-Za-z0-9_-]+$/);
          expect(decodeCursor(text)).toEqual({ createdAt, id });
        },
      ),
    );
  });

  it.each([
    'nonsense',
    '',
    '!!',
    Buffer.from('c1|2026-02-30T00:00:00.000000Z|op_1').toString('base64url'),
    Buffer.from('c1|0000-01-01T00:00:00.000000Z|op_1').toString('base64url'),
    Buffer.from('c1|2026-11-22T10:00:00.000Z|op_1').toString('base64url'),
    Buffer.from('c2|2026-11-22T10:00:00.000000Z|op_1').toString('base64url'),
    Buffer.from("c1|2026-11-22T10:00:00.000000Z|op_1' OR 1=1").toString('base64url'),
  ])('refuses %p with 400 naming the field', (text) => {
    expect(() => decodeCursor(text)).toThrow(DomainError);
    try {
      decodeCursor(text);
    } catch (err) {
      expect(err).toMatchObject({ code: 'invalid_request', details: { field: 'cursor' } });
    }
  });

  it('limit: 1 to 100, default 20', () => {
    expect(parseLimit(undefined)).toBe(20);
    expect(parseLimit('1')).toBe(1);
    expect(parseLimit('100')).toBe(100);
    for (const bad of ['0', '101', '-1', '1.5', 'ten', '', ' 5', '1e2', '0100']) {
      expect(() => parseLimit(bad)).toThrow('limit must be a whole number from 1 to 100');
    }
  });
});
