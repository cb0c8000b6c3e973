import { invalidRequest } from '../../../shared/kernel/errors/domain-error';

/** One entry of GET /v1/audit-log (lifecycle.md "Audit log"). */
export interface AuditLogEntry {
  id: string;
  createdAt: Date;
  action: string;
  actor: { type: 'user' | 'api_key' | 'system' | 'anonymous'; id: string | null; email?: string | null; name?: string | null } | { type: 'staff'; role: string | null };
  target: { type: string; id: string } | null;
  ip: string | null;
  /** The server's id of the request (unique per request). */
  requestId: string | null;
  /** The client's X-Request-Id of that request, when it sent a valid one. */
  clientRequestId: string | null;
  data: Record<string, unknown>;
}

/** Filters of the list; `action` is exact, or a prefix when `actionPrefix` is set (`volume.*` → `volume.`). */
export interface AuditLogFilter {
  action?: string;
  actionPrefix?: string;
  actorId?: string;
  targetId?: string;
  since?: Date;
  until?: Date;
}

/** Position in the organization's log (its `seq`, increasing in commit order). Opaque on the wire (base64url of `a1|seq`). */
export interface AuditCursor {
  seq: string;
}

export const AUDIT_DEFAULT_LIMIT = 50;
export const AUDIT_MAX_LIMIT = 100;

const ACTION = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/;
const ACTION_PREFIX = /^([a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*)\.\*$/;
const ID = /^[A-Za-z0-9_.-]{1,128}$/;
const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$/;
const CURSOR = /^a1\|([1-9]\d{0,18})$/;

export function parseAuditLimit(raw: string | undefined): number {
  if (raw === undefined) return AUDIT_DEFAULT_LIMIT;
  if (!/^\d{1,3}$/.test(raw) || Number(raw) < 1 || Number(raw) > AUDIT_MAX_LIMIT) {
    throw invalidRequest(`limit must be a whole number from 1 to ${AUDIT_MAX_LIMIT}`, { field: 'limit' });
  }
  return Number(raw);
}

export function encodeAuditCursor(c: AuditCursor): string {
  return Buffer.from(`a1|${c.seq}`, 'utf8').toString('base64url');
}

export function decodeAuditCursor(text: string): AuditCursor {
  const match = /^[A-Za-z0-9_-]{1,100}$/.test(text) ? CURSOR.exec(Buffer.from(text, 'base64url').toString('utf8')) : null;
  if (!match || BigInt(match[1]) > 9223372036854775807n) {
    throw invalidRequest('cursor is not a valid cursor; pass the next_cursor of a previous page', { field: 'cursor' });
  }
  return { seq: match[1] };
}

function instant(raw: string, field: string): Date {
  const date = new Date(raw);
  if (!ISO_8601.test(raw) || Number.isNaN(date.getTime()) || date.getUTCFullYear() < 1) {
    throw invalidRequest(`${field} must be an ISO 8601 timestamp such as 2026-11-21T10:00:00Z`, { field });
  }
  return date;
}

/** The filters as sent (query strings): 400 naming the first bad parameter. */
export function parseAuditFilter(input: { action?: string; actor_id?: string; target_id?: string; since?: string; until?: string }): AuditLogFilter {
  const filter: AuditLogFilter = {};
  if (input.action !== undefined) {
    const prefix = ACTION_PREFIX.exec(input.action);
    if (prefix) filter.actionPrefix = `${prefix[1]}.`;
    else if (ACTION.test(input.action) && input.action.length <= 100) filter.action = input.action;
    else throw invalidRequest('action must be an action such as api_key.create, or a prefix ending in .* such as volume.*', { field: 'action' });
  }
  for (const [field, key] of [['actor_id', 'actorId'], ['target_id', 'targetId']] as const) {
    const value = input[field];
    if (value === undefined) continue;
    if (!ID.test(value)) throw invalidRequest(`${field} must be an id (1 to 128 of A-Z a-z 0-9 _ . -)`, { field });
    filter[key] = value;
  }
  if (input.since !== undefined) filter.since = instant(input.since, 'since');
  if (input.until !== undefined) filter.until = instant(input.until, 'until');
  return filter;
}
