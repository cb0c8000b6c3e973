import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { AuditEntry, AuditTrail } from '../application/audit-trail.port';

@Injectable()
export class TypeOrmAuditTrail extends AuditTrail {
  constructor(private readonly db: Db) {
    super();
  }

  async record(entry: AuditEntry): Promise<void> {
    await this.db.query(
      `INSERT INTO audit_log (org_id, actor_type, actor_id, action, target_id, ip_address, data)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [entry.orgId, entry.actorType, entry.actorId, entry.action, entry.targetId ?? null, entry.ipAddress, JSON.stringify(entry.data ?? {})],
    );
  }
}
