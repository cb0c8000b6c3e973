import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/database/unit-of-work';
import { Clock } from '../../../shared/kernel/clock/clock';
import { DomainError, conflict, invalidRequest, notFound } from '../../../shared/kernel/errors/domain-error';
import { hashToken } from '../../auth/domain/tokens';
import { MAX_STAFF_TOKEN_DAYS, Staff, StaffRole, StaffToken, isStaffRole, newStaffToken } from '../domain/staff';
import { StaffAuditEntry, StaffAuditFilter, StaffDirectory } from './staff.port';

const DAY_MS = 86_400_000;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function parseStaffRole(role: unknown, field = 'role'): StaffRole {
  if (!isStaffRole(role)) throw invalidRequest(`${field} must be one of support, billing, operator, superadmin`, { field });
  return role;
}

/** expires_at of a new staff token: given (in the future, at most 90 days away) or 90 days from now. */
export function staffTokenExpiry(raw: unknown, now: Date): Date {
  if (raw === undefined || raw === null) return new Date(now.getTime() + MAX_STAFF_TOKEN_DAYS * DAY_MS);
  const at = typeof raw === 'string' ? new Date(raw) : new Date(NaN);
  if (Number.isNaN(at.getTime())) throw invalidRequest('expires_at must be an ISO 8601 timestamp such as 2027-01-01T00:00:00Z', { field: 'expires_at' });
  if (at.getTime() <= now.getTime() || at.getTime() > now.getTime() + MAX_STAFF_TOKEN_DAYS * DAY_MS) {
    throw invalidRequest(`expires_at must be in the future and at most ${MAX_STAFF_TOKEN_DAYS} days away`, { field: 'expires_at' });
  }
  return at;
}

/** Staff accounts and tokens: CLI staff:create and the /admin/v1/staff routes call these. */
@Injectable()
export class StaffAccounts {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly staff: StaffDirectory,
    private readonly clock: Clock,
  ) {}

  /** The staff audit, newest first, `limit` rows before `beforeId`. */
  auditLog(filter: StaffAuditFilter, limit: number, beforeId?: string): Promise<{ items: StaffAuditEntry[]; next: string | null }> {
    return this.staff.auditLog(filter, limit, beforeId);
  }

  /** A new staff member and a first token (shown once). */
  async create(input: { email: unknown; name: unknown; role: unknown; expiresAt?: unknown }): Promise<{ staff: Staff; token: string; tokenRecord: StaffToken }> {
    const email = typeof input.email === 'string' ? input.email.trim().toLowerCase() : '';
    if (!EMAIL.test(email) || email.length > 254) throw invalidRequest('email must be an email address', { field: 'email' });
    const name = typeof input.name === 'string' ? input.name.trim() : '';
    if (name.length < 1 || name.length > 200) throw invalidRequest('name must be 1 to 200 characters', { field: 'name' });
    const role = parseStaffRole(input.role);
    const now = this.clock.now();
    const expiresAt = staffTokenExpiry(input.expiresAt, now);
    return this.uow.run(async () => {
      let staff: Staff;
      try {
        staff = await this.staff.create({ email, name, role, createdAt: now });
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict(`A staff member with email ${email} exists`);
        throw err;
      }
      const token = newStaffToken();
      const tokenRecord = await this.staff.createToken(staff.id, hashToken(token), token.slice(0, 14), expiresAt, now);
      return { staff, token, tokenRecord };
    });
  }

  async get(id: string): Promise<Staff> {
    const staff = await this.staff.get(id);
    if (!staff) throw notFound(`Staff member ${id} not found`);
    return staff;
  }

  list(): Promise<Staff[]> {
    return this.staff.list();
  }

  async setRole(id: string, role: unknown): Promise<Staff> {
    const parsed = parseStaffRole(role);
    const staff = await this.staff.setRole(id, parsed);
    if (!staff) throw notFound(`Staff member ${id} not found`);
    return staff;
  }

  /** Disabled: every token of the member is refused within 1 s on every process (the guard's cache lives 1 s). */
  async disable(id: string): Promise<Staff> {
    const staff = await this.staff.disable(id, this.clock.now());
    if (!staff) throw notFound(`Staff member ${id} not found`);
    return staff;
  }

  async createToken(staffId: string, expiresAt: unknown): Promise<{ token: string; record: StaffToken }> {
    const staff = await this.get(staffId);
    if (staff.disabledAt) throw new DomainError('invalid_state', `Staff member ${staffId} is disabled`);
    const now = this.clock.now();
    const at = staffTokenExpiry(expiresAt, now);
    const token = newStaffToken();
    const record = await this.staff.createToken(staffId, hashToken(token), token.slice(0, 14), at, now);
    return { token, record };
  }

  async revokeToken(staffId: string, tokenId: string): Promise<StaffToken> {
    const token = await this.staff.revokeToken(staffId, tokenId, this.clock.now());
    if (!token) throw notFound(`Token ${tokenId} of staff member ${staffId} not found`);
    return token;
  }

  async listTokens(staffId: string): Promise<StaffToken[]> {
    await this.get(staffId);
    return this.staff.listTokens(staffId);
  }
}

function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; driverError?: { code?: string } };
  return e?.code === '23505' || e?.driverError?.code === '23505';
}
