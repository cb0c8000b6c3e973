import { types } from 'pg';
import { timestamptzParser } from '../../src/shared/database/timestamps';

// pg's own parser of timestamptz (postgres-date), the reference the fast path must agree with.
const pgParse = types.getTypeParser(1184) as (text: string) => unknown;
const parse = timestamptzParser(pgParse);

const time = (value: unknown): number => (value instanceof Date ? value.getTime() : Number(value));

describe('timestamptzParser: the server text of a timestamptz on a UTC connection', () => {
  it('reads the same instant as pg parser for every fraction length, across years, months and days', () => {
    let seed = 7;
    const random = (): number => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (let i = 0; i < 5000; i++) {
      const ms = Math.floor(Date.UTC(1970, 0, 1) + random() * (Date.UTC(9999, 11, 31) - Date.UTC(1970, 0, 1)));
      const iso = new Date(ms).toISOString(); // 2026-11-27T10:14:44.697Z
      const micros = String(Math.floor(random() * 1000)).padStart(3, '0');
      const fraction = `${iso.slice(20, 23)}${micros}`.slice(0, i % 7);
      const text = `${iso.slice(0, 10)} ${iso.slice(11, 19)}${fraction ? `.${fraction}` : ''}+00`;
      const fast = parse(text);
      expect(fast).toBeInstanceOf(Date);
      expect(time(fast)).toBe(time(pgParse(text)));
    }
  });

  it('reads 2026-11-27 10:14:44.697123+00 as 10:14:44.697 UTC (microseconds dropped)', () => {
    expect((parse('2026-11-27 10:14:44.697123+00') as Date).toISOString()).toBe('2026-11-27T10:14:44.697Z');
    expect((parse('2026-11-27 10:14:44+00') as Date).toISOString()).toBe('2026-11-27T10:14:44.000Z');
    expect((parse('2026-11-27 10:14:44.5+00') as Date).toISOString()).toBe('2026-11-27T10:14:44.500Z');
  });

  it('leaves every other form to pg parser, with its answer', () => {
    for (const text of [
      'infinity',
      '-infinity',
      '2026-11-27 10:14:44.697+05:30',
      '2026-11-27 10:14:44-08',
      '0099-11-27 10:14:44.1+00',
      '2026-11-27 10:14:44.1+00 BC',
      '12026-11-27 10:14:44.1+00',
      '2026-11-27 10:14:44.+00',
      '2026-11-27',
    ]) {
      const expected = pgParse(text);
      const actual = parse(text);
      if (expected === null) expect(actual).toBeNull();
      else expect(time(actual)).toEqual(time(expected));
    }
  });
});
