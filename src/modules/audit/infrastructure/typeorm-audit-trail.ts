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

  /**
   * An organization's entry takes the next `seq` from its audit_heads row, which the upsert
   * locks until this transaction ends: the organization's entries commit in `seq` order. The
   * audit row is each use case's last write, so this lock is held only from there to the commit.
   */
  async record(entry: AuditEntry): Promise<void> {
    const targetId = entry.targetId ?? null;
    const values = [
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
    ];
    const columns = 'public_id, org_id, actor_type, actor_id, action, target_type, target_id, ip_address, request_id, data';
    if (entry.orgId === null) {
      await this.db.query(`INSERT INTO audit_log (${columns}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, values);
      return;
    }
    await this.db.query(
      `WITH head AS (
         INSERT INTO audit_heads AS h (org_id, last_seq) VALUES ($2, 1)
         ON CONFLICT (org_id) DO UPDATE SET last_seq = h.last_seq + 1
         RETURNING last_seq)
       INSERT INTO audit_log (${columns}, seq)
       SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, head.last_seq FROM head`,
      values,
    );
  }
}

interface Row {
  seq: string;
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
 * Pages newest first by `seq`, the entry's position in its organization's log. Entries commit in
 * `seq` order (see record()), so a reader always sees a prefix of the log: an entry committed
 * later sorts above every entry already shown, and a reader paging down never misses or repeats
 * one. Served by audit_log_org_seq_key (org_id, seq), or the action/actor/target indexes when
 * those filters are sent.
 */
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
    if (filter.since !== undefined) add((p) => `a.created_at >= ${p}`, filter.since);
    if (filter.until !== undefined) add((p) => `a.created_at < ${p}`, filter.until);
    if (after !== undefined) {
      params.push(after.seq);
      where.push(`a.seq < $${params.length}::bigint`);
    }
    params.push(limit + 1);
    const rows = await this.db.query<Row>(
      `SELECT a.seq::text AS seq, a.public_id, a.created_at, a.action, a.actor_type, a.actor_id,
              u.email AS actor_email, k.name AS actor_name, a.target_type, a.target_id, a.ip_address, a.request_id, a.data
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
