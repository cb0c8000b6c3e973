import { types } from 'pg';

/** PostgreSQL's type id of `timestamp with time zone`. */
const TIMESTAMPTZ_OID = 1184;

/** Where `YYYY-MM-DD HH:MM:SS` has its digits. */
const DIGIT_PLACES = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18];

const digits2 = (text: string, at: number): number => (text.charCodeAt(at) - 48) * 10 + (text.charCodeAt(at + 1) - 48);
const isDigit = (text: string, at: number): boolean => {
  const c = text.charCodeAt(at);
  return c >= 48 && c <= 57;
};

/**
 * A `timestamptz` column's text as the server sends it on our connections (TimeZone UTC):
 * `YYYY-MM-DD HH:MM:SS[.f{1,6}]+00`, read into a Date with millisecond precision (the digits
 * past the third are dropped, as pg's own parser does). Every read of a volume, an operation or a
 * wallet entry parses several of these, and pg's parser (a regular expression, then a second one
 * for the offset) was 4-5% of a GET /v1/volumes's CPU. Anything else (another offset, BC, years
 * before 100 or after 9999, infinity) is left to pg's parser, `fallback`.
 */
export function timestamptzParser(fallback: (text: string) => unknown): (text: string) => unknown {
  return (text) => {
    const n = text.length;
    // 22: no fraction; 24..29: a dot, then 1 to 6 digits.
    if (n < 22 || n > 29 || n === 23) return fallback(text);
    if (text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45 || text.charCodeAt(10) !== 32 || text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58) return fallback(text);
    if (text.charCodeAt(n - 3) !== 43 || text.charCodeAt(n - 2) !== 48 || text.charCodeAt(n - 1) !== 48) return fallback(text);
    for (const at of DIGIT_PLACES) if (!isDigit(text, at)) return fallback(text);
    let ms = 0;
    if (n > 22) {
      if (text.charCodeAt(19) !== 46) return fallback(text);
      for (let at = 20; at < n - 3; at++) if (!isDigit(text, at)) return fallback(text);
      const fraction = n - 23; // 1 to 6 digits
      ms = (text.charCodeAt(20) - 48) * 100 + (fraction > 1 ? (text.charCodeAt(21) - 48) * 10 : 0) + (fraction > 2 ? text.charCodeAt(22) - 48 : 0);
    }
    const year = digits2(text, 0) * 100 + digits2(text, 2);
    // Date.UTC reads years 0-99 as 1900-1999: pg's parser handles them.
    if (year < 100) return fallback(text);
    return new Date(Date.UTC(year, digits2(text, 5) - 1, digits2(text, 8), digits2(text, 11), digits2(text, 14), digits2(text, 17), ms));
  };
}

let registered = false;

/** Installs timestamptzParser for every pg connection of the process (idempotent). */
export function registerTimestampParser(): void {
  if (registered) return;
  registered = true;
  types.setTypeParser(TIMESTAMPTZ_OID, timestamptzParser(types.getTypeParser(TIMESTAMPTZ_OID) as (text: string) => unknown));
}
