import { randomBase62 } from '../../../shared/kernel/ids/ids';

/** Staff roles (admin.md "Staff and tokens"): each includes support's reads. */
export const STAFF_ROLES = ['support', 'billing', 'operator', 'superadmin'] as const;
export type StaffRole = (typeof STAFF_ROLES)[number];

export const isStaffRole = (value: unknown): value is StaffRole => typeof value === 'string' && (STAFF_ROLES as readonly string[]).includes(value);

/** Who may call a route: `support` is every role (reads); superadmin may do everything. */
export const ALL_STAFF: readonly StaffRole[] = STAFF_ROLES;
export const BILLING: readonly StaffRole[] = ['billing', 'superadmin'];
export const OPERATOR: readonly StaffRole[] = ['operator', 'superadmin'];
export const SUPERADMIN: readonly StaffRole[] = ['superadmin'];

export const STAFF_TOKEN_PREFIX = 'cds_staff_';
const STAFF_TOKEN = /^cds_staff_[A-Za-z0-9]{32}$/;
/** A staff token lives at most this long (admin.md: expires_at required, at most 90 days). */
export const MAX_STAFF_TOKEN_DAYS = 90;

export const newStaffToken = (): string => STAFF_TOKEN_PREFIX + randomBase62(32);
export const isStaffToken = (token: string): boolean => STAFF_TOKEN.test(token);

export interface Staff {
  id: string;
  email: string;
  name: string;
  role: StaffRole;
  createdAt: Date;
  disabledAt: Date | null;
}

export interface StaffToken {
  id: string;
  staffId: string;
  tokenPrefix: string;
  createdAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
}

/** The staff member behind a valid token, as the admin guard sees it. */
export interface StaffPrincipal {
  staffId: string;
  tokenId: string;
  role: StaffRole;
}

export function presentStaff(s: Staff) {
  return { id: s.id, email: s.email, name: s.name, role: s.role, created_at: s.createdAt.toISOString(), disabled_at: s.disabledAt && s.disabledAt.toISOString() };
}

export function presentStaffToken(t: StaffToken) {
  return {
    id: t.id,
    staff_id: t.staffId,
    token_prefix: t.tokenPrefix,
    created_at: t.createdAt.toISOString(),
    expires_at: t.expiresAt.toISOString(),
    revoked_at: t.revokedAt && t.revokedAt.toISOString(),
  };
}

/** X-Justification (admin.md): 1–200 printable characters, a ticket id or a reason. */
export const JUSTIFICATION = /^[\x20-\x7E]{1,200}$/;
