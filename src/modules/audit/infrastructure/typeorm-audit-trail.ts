import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { currentRequestId } from '../../../shared/http/request-context';
import { AuditEntry, AuditTrail } from '../application/audit-trail.port';
import { AuditLogReader } from '../application/audit-log.port';
import { AuditCursor, AuditLogEntry, AuditLogFilter } from '../domain/audit-log';
import { newId } from '../../../shared/kernel/ids/ids';

const TARGET_TYPES: Record<string, string> = { ses: 'session', key: 'api_key', usr: 'user', vol: 'volume', op: 'operation', vm: 'server', org: 'organization' };

/** The kind of a target from its id's prefix, when the caller does not say. */
export function targetTypeOf(targetId: string): string {
  return TARGET_TYPES[targetId.slice(0, targetId.indexOf('_'))] ?? 'unknown';
}

@Injectable()
export class TypeOrmAuditTrail extends AuditTrail {
  constructor(private readonly db: Db) {
    super();
  }

  async record(entry: AuditEntry): Promise<void> {
    const targetId = entry.targetId ?? null;
    await this.db.query(
      `INSERT INTO audit_log (public_id, org_id, actor_type, actor_id, action, target_type, target_id, ip_address, request_id, data)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [
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
      ],
    );
  }
}

interface Row {
  id: string;
  txid: string;
  public_id: string;
  created_at: Date;
  action: string;
  actor_type: AuditLogEntry['actor']['type'];
  actor_id: string | null;
  actor_email: string | null;
  actor_name: string | null;
  target_type: string | null;
  target_id: string | null;
  ip_address: string | null;
  request_id: string | null;
  data: Record<string, unknown>;
}

function toEntry(r: Row): AuditLogEntry {
  const actor: AuditLogEntry['actor'] =
    r.actor_type === 'user'
      ? { type: 'user', id: r.actor_id, email: r.actor_email }
      : r.actor_type === 'api_key'
        ? { type: 'api_key', id: r.actor_id, name: r.actor_name }
        : { type: r.actor_type, id: r.actor_id, name: null };
  return {
    id: r.public_id,
    createdAt: r.created_at,
    action: r.action,
    actor,
    target: r.target_id !== null && r.target_type !== null ? { type: r.target_type, id: r.target_id } : null,
    ip: r.ip_address,
    requestId: r.request_id,
    data: r.data,
  };
}

/**
 * Pages newest first by (txid, id): the writing transaction's id, then the row id. Only rows of
 * transactions older than every transaction still in progress (`txid < pg_snapshot_xmin(...)`)
 * are listed: a transaction that commits later has a txid at or above that horizon, so its rows
 * sort above every row a reader has been shown, and a reader paging down never misses or
 * repeats one. (Ordering by the bigserial alone would not do: ids are taken at INSERT time, and
 * transactions commit in another order.) Served by audit_log_org_page_idx (org_id, txid, id),
 * or the action/actor/target indexes when those filters are sent.
 */
@Injectable()
export class TypeOrmAuditLogReader extends AuditLogReader {
  constructor(private readonly db: Db) {
    super();
  }

  async list(orgId: string, filter: AuditLogFilter, limit: number, after: AuditCursor | undefined): Promise<{ items: AuditLogEntry[]; next: AuditCursor | null }> {
    const params: unknown[] = [orgId];
    const where = ['a.org_id = $1', 'a.txid < pg_snapshot_xmin(pg_current_snapshot())'];
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
    if (filter.since !== undefined) add((p) => `a.created_at >= ${p}`, filter.since);
    if (filter.until !== undefined) add((p) => `a.created_at < ${p}`, filter.until);
    if (after !== undefined) {
      params.push(after.txid, after.id);
      where.push(`(a.txid, a.id) < ($${params.length - 1}::xid8, $${params.length}::bigint)`);
    }
    params.push(limit + 1);
    const rows = await this.db.query<Row>(
      `SELECT a.id::text AS id, a.txid::text AS txid, a.public_id, a.created_at, a.action, a.actor_type, a.actor_id,
              u.email AS actor_email, k.name AS actor_name, a.target_type, a.target_id, a.ip_address, a.request_id, a.data
         FROM audit_log a
         LEFT JOIN users u ON a.actor_type = 'user' AND u.id = a.actor_id
         LEFT JOIN api_keys k ON a.actor_type = 'api_key' AND k.id = a.actor_id
        WHERE ${where.join(' AND ')}
        ORDER BY a.txid DESC, a.id DESC
        LIMIT $${params.length}`,
      params,
    );
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return { items: page.map(toEntry), next: rows.length > limit && last ? { txid: last.txid, id: last.id } : null };
  }
}
