import { Injectable } from '@nestjs/common';
import { Principal } from '../../auth/domain/principal';
import { AuditLogEntry, decodeAuditCursor, encodeAuditCursor, parseAuditFilter, parseAuditLimit } from '../domain/audit-log';
import { AuditLogReader } from './audit-log.port';

export interface AuditLogQuery {
  action?: string;
  actor_id?: string;
  target_id?: string;
  since?: string;
  until?: string;
  limit?: string;
  cursor?: string;
}

/** GET /v1/audit-log: the selected organization's entries only, newest first. */
@Injectable()
export class ListAuditLog {
  constructor(private readonly reader: AuditLogReader) {}

  async execute(principal: Principal, query: AuditLogQuery): Promise<{ entries: AuditLogEntry[]; nextCursor: string | null }> {
    const filter = parseAuditFilter(query);
    const limit = parseAuditLimit(query.limit);
    const after = query.cursor === undefined ? undefined : decodeAuditCursor(query.cursor);
    const page = await this.reader.list(principal.orgId, filter, limit, after);
    return { entries: page.items, nextCursor: page.next && encodeAuditCursor(page.next) };
  }
}
