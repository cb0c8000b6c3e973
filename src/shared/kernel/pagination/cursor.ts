import { invalidRequest } from '../errors/domain-error';

/**
 * Keyset pagination, newest first: a page continues after the row (createdAt, id) where the
 * previous one stopped. createdAt keeps the database's microseconds (ISO text), so no row is
 * skipped or repeated. On the wire the cursor is opaque (base64url).
 */
export interface PageCursor {
  /** `YYYY-MM-DDTHH:MM:SS.ffffffZ` */
  createdAt: string;
  id: string;
}

export interface Page<T> {
  items: T[];
  next: PageCursor | null;
}

/**
 * A page from rows fetched newest first with `limit + 1`: the first `limit`, and a cursor after
 * the last of them when the extra row shows that more follow.
 */
export function toPage<R, T>(rows: R[], limit: number, cursorOf: (row: R) => PageCursor, map: (row: R) => T): Page<T> {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { items: page.map(map), next: rows.length > limit && last ? cursorOf(last) : null };
}

export const DEFAULT_PAGE_LIMIT = 20;
export const MAX_PAGE_LIMIT = 100;

const CURSOR_TEXT = /^c1\|(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z)\|([A-Za-z0-9_.-]{1,128})$/;

export function encodeCursor(cursor: PageCursor): string {
  return Buffer.from(`c1|${cursor.createdAt}|${cursor.id}`, 'utf8').toString('base64url');
}

/** The cursor of `next_cursor`; anything else is 400 invalid_request naming the field. */
export function decodeCursor(text: string, field = 'cursor'): PageCursor {
  const bad = () => invalidRequest(`${field} is not a valid cursor; pass the next_cursor of a previous page`, { field });
  if (!/^[A-Za-z0-9_-]{1,400}$/.test(text)) throw bad();
  const match = CURSOR_TEXT.exec(Buffer.from(text, 'base64url').toString('utf8'));
  // A real instant (no Feb 30): it must survive a round trip through Date, to the second.
  // Year 0 is a valid Date but no PostgreSQL timestamp (it would fail the query): refused too.
  const date = match ? new Date(`${match[1].slice(0, 23)}Z`) : undefined;
  if (!match || !date || Number.isNaN(date.getTime()) || date.getUTCFullYear() < 1 || date.toISOString().slice(0, 19) !== match[1].slice(0, 19)) {
    throw bad();
  }
  return { createdAt: match[1], id: match[2] };
}

/** `limit` of a list request: a whole number from 1 to 100, default 20. */
export function parseLimit(raw: string | undefined, field = 'limit'): number {
  if (raw === undefined) return DEFAULT_PAGE_LIMIT;
  if (!/^\d{1,3}$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_PAGE_LIMIT) {
    throw invalidRequest(`${field} must be a whole number from 1 to ${MAX_PAGE_LIMIT}`, { field });
  }
  return Number(raw);
}
