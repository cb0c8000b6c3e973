import { AuditCursor, AuditLogEntry, AuditLogFilter } from '../domain/audit-log';

/** Reads an organization's audit log, newest first, in pages that never skip or repeat an entry. */
export abstract class AuditLogReader {
  abstract list(orgId: string, filter: AuditLogFilter, limit: number, after: AuditCursor | undefined): Promise<{ items: AuditLogEntry[]; next: AuditCursor | null }>;
}
