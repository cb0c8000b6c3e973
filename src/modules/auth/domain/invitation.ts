import { randomBase62 } from '../../../shared/kernel/ids/ids';
import { Role } from './principal';

/** `cds_inv_` + 32 base62 characters (accounts.md); shown once, stored as its SHA-256. */
export const INVITATION_PREFIX = 'cds_inv_';
const INVITATION_TOKEN = /^cds_inv_[A-Za-z0-9]{32}$/;

export const INVITATION_LIFETIME_MS = 7 * 24 * 60 * 60 * 1000;
/** Pending invitations an organization may hold at once. */
export const MAX_PENDING_INVITATIONS = 50;
/** Organizations a user may belong to. */
export const MAX_ORGANIZATIONS_PER_USER = 10;

export const INVITATION_STATUSES = ['pending', 'accepted', 'expired', 'revoked'] as const;
export type InvitationStatus = (typeof INVITATION_STATUSES)[number];

export function newInvitationToken(): string {
  return INVITATION_PREFIX + randomBase62(32);
}

export function isInvitationToken(value: string): boolean {
  return INVITATION_TOKEN.test(value);
}

export interface Invitation {
  id: string;
  orgId: string;
  email: string;
  role: Role;
  createdAt: Date;
  createdBy: string | null;
  expiresAt: Date;
  acceptedAt: Date | null;
  revokedAt: Date | null;
}

/** Accepted and revoked are final; a pending invitation past its expiry is expired. */
export function invitationStatus(inv: Invitation, now: Date): InvitationStatus {
  if (inv.acceptedAt) return 'accepted';
  if (inv.revokedAt) return 'revoked';
  return inv.expiresAt.getTime() <= now.getTime() ? 'expired' : 'pending';
}
