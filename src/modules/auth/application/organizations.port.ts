import { Page, PageCursor } from '../../../shared/kernel/pagination/cursor';
import { Invitation, InvitationStatus } from '../domain/invitation';
import { Role } from '../domain/principal';
import { OrganizationRecord } from './accounts.port';

/** What an organization needs besides its members: creation limits per user, its name, its wallets. */
export abstract class Organizations {
  /**
   * Locks the user's row until the transaction ends: every way of joining an organization
   * (creating one, accepting an invitation) counts the user's memberships under it, so the
   * limit of organizations per user holds under any concurrency.
   */
  abstract lockUser(userId: string): Promise<void>;
  abstract countMemberships(userId: string): Promise<number>;
  /** The user's email (lower-cased), undefined for an unknown id. */
  abstract userEmail(userId: string): Promise<string | undefined>;
  /** Renames; returns the old name (undefined when the organization does not exist). */
  abstract rename(orgId: string, name: string): Promise<string | undefined>;
  /** The organization's balances in USD and IDR, at zero. */
  abstract openEmptyWallets(orgId: string): Promise<void>;
}

export interface NewInvitation {
  id: string;
  orgId: string;
  email: string;
  role: Role;
  tokenHash: Buffer;
  createdBy: string | null;
  createdAt: Date;
  expiresAt: Date;
}

/** Invitations, found by id in their organization or by the SHA-256 of their token. */
export abstract class Invitations {
  abstract create(invitation: NewInvitation): Promise<Invitation>;
  /** Pending (neither accepted, revoked nor expired at `now`) invitations of the organization. */
  abstract countPending(orgId: string, now: Date): Promise<number>;
  /** Newest first; `status` computed at `now`. */
  abstract list(orgId: string, status: InvitationStatus | undefined, now: Date, limit: number, after: PageCursor | undefined): Promise<Page<Invitation>>;
  /** The invitation, its row locked until the transaction ends. */
  abstract findForUpdate(orgId: string, id: string): Promise<Invitation | undefined>;
  /** The invitation holding this token digest, its row locked until the transaction ends. */
  abstract findByTokenForUpdate(tokenHash: Buffer): Promise<(Invitation & { organization: OrganizationRecord }) | undefined>;
  abstract markRevoked(id: string, at: Date): Promise<Invitation>;
  abstract markAccepted(id: string, userId: string, at: Date): Promise<void>;
}
