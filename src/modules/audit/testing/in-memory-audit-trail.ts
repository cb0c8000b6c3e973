import { AuditEntry, AuditTrail } from '../application/audit-trail.port';

export class InMemoryAuditTrail extends AuditTrail {
  readonly entries: AuditEntry[] = [];
  async record(entry: AuditEntry): Promise<void> {
    this.entries.push(entry);
  }

  async recordMany(entries: readonly AuditEntry[]): Promise<void> {
    this.entries.push(...entries);
  }
}
