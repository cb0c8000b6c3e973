import { Staff, StaffPrincipal, StaffRole, StaffToken } from '../domain/staff';

export interface StaffAuditRow {
  staffId: string;
  role: StaffRole;
  method: string;
  route: string;
  organizationId: string | null;
  targetType: string | null;
  targetId: string | null;
  justification: string | null;
  requestId: string | null;
  ip: string | null;
  status: number;
  /** What a write changed, `{before, after}` (catalog and retention changes); null otherwise. */
  changes?: Record<string, unknown> | null;
}

export interface StaffAuditEntry extends StaffAuditRow {
  id: string;
  createdAt: Date;
}

export interface StaffAuditFilter {
  staffId?: string;
  organizationId?: string;
  since?: Date;
  until?: Date;
}

/** Staff accounts, their tokens and the staff audit. */
export abstract class StaffDirectory {
  abstract create(input: { email: string; name: string; role: StaffRole; createdAt: Date }): Promise<Staff>;
  abstract count(): Promise<number>;
  abstract get(id: string): Promise<Staff | undefined>;
  abstract list(): Promise<Staff[]>;
  abstract setRole(id: string, role: StaffRole): Promise<Staff | undefined>;
  abstract disable(id: string, at: Date): Promise<Staff | undefined>;
  abstract createToken(staffId: string, tokenHash: Buffer, tokenPrefix: string, expiresAt: Date, createdAt: Date): Promise<StaffToken>;
  abstract revokeToken(staffId: string, tokenId: string, at: Date): Promise<StaffToken | undefined>;
  abstract listTokens(staffId: string): Promise<StaffToken[]>;
  /** The staff member of a live token (not revoked, not expired, staff not disabled), by the token's SHA-256. */
  abstract principalOf(tokenHash: Buffer, now: Date): Promise<StaffPrincipal | undefined>;
  abstract audit(row: StaffAuditRow): Promise<void>;
  abstract auditLog(filter: StaffAuditFilter, limit: number, beforeId?: string): Promise<{ items: StaffAuditEntry[]; next: string | null }>;
}
