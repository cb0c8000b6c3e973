import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { currentClientRequestId, currentRequestId } from '../../../shared/http/request-context';
import { AuditEntry, AuditTrail } from '../application/audit-trail.port';
import { AuditLogReader } from '../application/audit-log.port';
import { AuditCursor, AuditLogEntry, AuditLogFilter } from '../domain/audit-log';
import { newId } from '../../../shared/kernel/ids/ids';

const TARGET_TYPES: Record<string, string> = { ses: 'session', key: 'api_key', usr: 'user', vol: 'volume', op: 'operation', vm: 'server', org: 'organization', dep: 'deployment', snap: 'snapshot', img: 'image', rip: 'reserved_ip', net: 'network' };

/** The kind of a target from its id's prefix, when the caller does not say. */
export function targetTypeOf(targetId: string): string {
  return TARGET_TYPES[targetId.slice(0, targetId.indexOf('_'))] ?? 'unknown';
}

@Injectable()
export class TypeOrmAuditTrail extends AuditTrail {
  constructor(private readonly db: Db) {
    super();
  }

  /**
   * An organization's entry gets its `seq` and `created_at` from the trigger audit_log_position
   * (migration 1764000000170): the next seq of its audit_heads row, which the trigger's upsert
   * locks until this transaction ends, so the organization's entries commit in `seq` order; and a
   * created_at never before the previous entry's. The audit row is each use case's last write, so
   * this lock is held only from there to the commit.
   */
  async record(entry: AuditEntry): Promise<void> {
    await this.db.query(`INSERT INTO audit_log (${AUDIT_INSERT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`, auditValues(entry), 'audit_record');
  }

  /** One INSERT … SELECT FROM unnest, in the entries' order (WITH ORDINALITY): the trigger gives each its seq in that order. */
  async recordMany(entries: readonly AuditEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const values = entries.map(auditValues);
    const column = (i: number) => values.map((v) => v[i]);
    await this.db.query(
      `INSERT INTO audit_log (${AUDIT_INSERT_COLUMNS})
       SELECT public_id, org_id, actor_type, actor_id, action, target_type, target_id, ip_address, request_id, data::jsonb, client_request_id
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[])
              WITH ORDINALITY AS e(public_id, org_id, actor_type, actor_id, action, target_type, target_id, ip_address, request_id, data, client_request_id, n)
        ORDER BY e.n`,
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(column),
      'audit_record_many',
    );
  }
}

/** The columns an audit entry is inserted with (seq and created_at come from the trigger), and (auditValues) their values. */
export const AUDIT_INSERT_COLUMNS = 'public_id, org_id, actor_type, actor_id, action, target_type, target_id, ip_address, request_id, data, client_request_id';

/**
 * The values of AUDIT_INSERT_COLUMNS for `entry`: a new public id, the target's type, the request
 * being handled (its server id as request_id, the client's X-Request-Id as client_request_id).
 */
export function auditValues(entry: AuditEntry): unknown[] {
  const targetId = entry.targetId ?? null;
  return [
    newId('aud'),
    entry.orgId,
    entry.actorType,
    entry.actorId,
    entry.action,
    targetId === null ? null : (entry.targetType ?? targetTypeOf(targetId)),
    targetId,
    entry.ipAddress,
    entry.requestId === undefined ? currentRequestId() : entry.requestId,
    JSON.stringify(entry.data ?? {}),
    entry.requestId === undefined ? currentClientRequestId() : (entry.clientRequestId ?? null),
  ];
}

interface Row {
  seq: string;
  public_id: string;
  created_at: Date;
  action: string;
  actor_type: 'user' | 'api_key' | 'system' | 'anonymous' | 'staff';
  actor_id: string | null;
  actor_email: string | null;
  actor_name: string | null;
  target_type: string | null;
  target_id: string | null;
  ip_address: string | null;
  request_id: string | null;
  client_request_id: string | null;
  data: Record<string, unknown>;
}

function toEntry(r: Row): AuditLogEntry {
  const actor: AuditLogEntry['actor'] =
    r.actor_type === 'user'
      ? { type: 'user', id: r.actor_id, email: r.actor_email }
      : r.actor_type === 'api_key'
        ? { type: 'api_key', id: r.actor_id, name: r.actor_name }
        : r.actor_type === 'staff'
          ? { type: 'staff', role: r.actor_id }
          : { type: r.actor_type, id: r.actor_id, name: null };
  return {
    id: r.public_id,
    createdAt: r.created_at,
    action: r.action,
    actor,
    target: r.target_id !== null && r.target_type !== null ? { type: r.target_type, id: r.target_id } : null,
    ip: r.ip_address,
    requestId: r.request_id,
    clientRequestId: r.client_request_id,
    data: r.data,
  };
}

/**
 * Pages newest first by `seq`, the entry's position in its organization's log. Entries commit in
 * `seq` order (see record()), so a reader always sees a prefix of the log: an entry committed
 * later sorts above every entry already shown, and a reader paging down never misses or repeats
 * one.
 *
 * Every filter is a range of an index: (org_id, seq) alone, or (org_id, action, seq),
 * (org_id, actor_id, seq), (org_id, target_id, seq) for those filters, with the cursor as an
 * upper `seq` bound. `since` and `until` become `seq` bounds too: created_at is non-decreasing in
 * seq (migration 1764000000170), so the entries at or after an instant are exactly those from the
 * first one of audit_log_org_created_idx at that instant on; one probe of that index finds it.
 * The created_at conditions stay: entries recorded before that migration may be out of time order
 * by up to a transaction's length, and for them the bound is exact only away from such an instant.
 */
const MAX_SEQ = '9223372036854775807';

@Injectable()
export class TypeOrmAuditLogReader extends AuditLogReader {
  constructor(private readonly db: Db) {
    super();
  }

  async list(orgId: string, filter: AuditLogFilter, limit: number, after: AuditCursor | undefined): Promise<{ items: AuditLogEntry[]; next: AuditCursor | null }> {
    const params: unknown[] = [orgId];
    const where = ['a.org_id = $1'];
    const add = (sql: (p: string) => string, value: unknown) => {
      params.push(value);
      where.push(sql(`$${params.length}`));
    };
    if (filter.action !== undefined) add((p) => `a.action = ${p}`, filter.action);
    if (filter.actionPrefix !== undefined) {
      // A range on the prefix ("volume." up to "volume/"), so the (org_id, action, …) index serves it.
      add((p) => `a.action >= ${p}`, filter.actionPrefix);
      add((p) => `a.action < ${p}`, filter.actionPrefix.slice(0, -1) + String.fromCharCode(filter.actionPrefix.charCodeAt(filter.actionPrefix.length - 1) + 1));
    }
    if (filter.actorId !== undefined) add((p) => `a.actor_id = ${p}`, filter.actorId);
    if (filter.targetId !== undefined) add((p) => `a.target_id = ${p}`, filter.targetId);
    // The seq of the first entry at or after an instant (none: beyond the last seq).
    const firstSeqAt = (p: string) =>
      `COALESCE((SELECT b.seq FROM audit_log b WHERE b.org_id = $1 AND b.created_at >= ${p} ORDER BY b.created_at, b.seq LIMIT 1), ${MAX_SEQ})`;
    if (filter.since !== undefined) add((p) => `a.created_at >= ${p} AND a.seq >= ${firstSeqAt(p)}`, filter.since);
    if (filter.until !== undefined) add((p) => `a.created_at < ${p} AND a.seq < ${firstSeqAt(p)}`, filter.until);
    if (after !== undefined) {
      params.push(after.seq);
      where.push(`a.seq < $${params.length}::bigint`);
    }
    params.push(limit + 1);
    const rows = await this.db.query<Row>(
      `SELECT a.seq::text AS seq, a.public_id, a.created_at, a.action, a.actor_type, a.actor_id,
              u.email AS actor_email, k.name AS actor_name, a.target_type, a.target_id, a.ip_address, a.request_id, a.client_request_id, a.data
         FROM audit_log a
         LEFT JOIN users u ON a.actor_type = 'user' AND u.id = a.actor_id
         LEFT JOIN api_keys k ON a.actor_type = 'api_key' AND k.id = a.actor_id
        WHERE ${where.join(' AND ')}
        ORDER BY a.seq DESC
        LIMIT $${params.length}`,
      params,
    );
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return { items: page.map(toEntry), next: rows.length > limit && last ? { seq: last.seq } : null };
  }
}
