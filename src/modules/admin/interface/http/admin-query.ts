import { invalidRequest } from '../../../../shared/kernel/errors/domain-error';

const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$/;

export function pageLimit(raw: string | undefined, fallback = 50, max = 100): number {
  if (raw === undefined) return fallback;
  if (!/^\d{1,3}$/.test(raw) || Number(raw) < 1 || Number(raw) > max) throw invalidRequest(`limit must be a whole number from 1 to ${max}`, { field: 'limit' });
  return Number(raw);
}

export function instant(raw: string | undefined, field: string): Date | undefined {
  if (raw === undefined) return undefined;
  const date = new Date(raw);
  if (!ISO_8601.test(raw) || Number.isNaN(date.getTime())) throw invalidRequest(`${field} must be an ISO 8601 timestamp such as 2026-11-21T10:00:00Z`, { field });
  return date;
}

/** An opaque cursor holding one position string (base64url of `prefix|value`). */
export function encodeCursor(prefix: string, value: string): string {
  return Buffer.from(`${prefix}|${value}`, 'utf8').toString('base64url');
}

export function decodeCursor(prefix: string, raw: string | undefined, pattern: RegExp): string | undefined {
  if (raw === undefined) return undefined;
  const text = /^[A-Za-z0-9_-]{1,200}$/.test(raw) ? Buffer.from(raw, 'base64url').toString('utf8') : '';
  const value = text.startsWith(`${prefix}|`) ? text.slice(prefix.length + 1) : '';
  if (!pattern.test(value)) throw invalidRequest('cursor is not a valid cursor; pass the next_cursor of a previous page', { field: 'cursor' });
  return value;
}

export const ID = /^[A-Za-z0-9_.-]{1,128}$/;
export function idParam(raw: string | undefined, field: string): string | undefined {
  if (raw === undefined) return undefined;
  if (!ID.test(raw)) throw invalidRequest(`${field} must be an id (1 to 128 of A-Z a-z 0-9 _ . -)`, { field });
  return raw;
}
